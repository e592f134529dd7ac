#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=1 --gpus-per-node=8
head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
TP=4; PP=1
srun --ntasks-per-node=1 bash -c "torchrun --nnodes $SLURM_NNODES --nproc_per_node 8 \
    --node_rank \$SLURM_NODEID --master_addr $head_node --master_port 29400 \
    pretrain_gpt.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP \
    --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048"
