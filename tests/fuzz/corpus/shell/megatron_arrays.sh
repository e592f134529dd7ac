#!/bin/bash
#SBATCH --job-name=gpt-13b
#SBATCH --nodes=4
#SBATCH --gres=gpu:8
#SBATCH --time=24:00:00
set -euo pipefail

GPUS_PER_NODE=8
NNODES=${SLURM_NNODES:-1}
export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=6001
export CUDA_DEVICE_MAX_CONNECTIONS=1

LAUNCH_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NNODES
    --rdzv_backend c10d --rdzv_endpoint "$MASTER_ADDR:$MASTER_PORT"
)
MODEL_ARGS=( --num-layers 40 # 13B
    --hidden-size 5120 --num-attention-heads 40
    --seq-length 4096 --max-position-embeddings 4096 )
PAR_ARGS=(--tensor-model-parallel-size 2 --pipeline-model-parallel-size 2)
PAR_ARGS+=(--sequence-parallel)
TRAIN_ARGS=(--micro-batch-size 1 --global-batch-size $(( NNODES * 64 )) --bf16)

srun torchrun ${LAUNCH_ARGS[@]} pretrain_gpt.py \
    "${MODEL_ARGS[@]}" "${PAR_ARGS[@]}" "${TRAIN_ARGS[@]}" \
    --save /ckpt/gpt13b_${SLURM_JOB_ID} --save-interval 500 # every 500 steps
