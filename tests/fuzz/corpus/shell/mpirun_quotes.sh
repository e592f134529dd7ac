#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=8 --gpus-per-node=8
NP=$((SLURM_NNODES*8))
SEP=$'\t'
TAG='run "a"'" and 'b'"
mpirun -np $NP --map-by ppr:8:node -x NCCL_IB_HCA -x 'LD_LIBRARY_PATH' \
    python train.py --tag "$TAG" --sep "$SEP" \
    --lr=3e-4 --save-interval=$(( 60 * 10 )) a#b \
    --extra "${EXTRA-}" ${MISSING} "${ARR[@]}" # comment
wait
