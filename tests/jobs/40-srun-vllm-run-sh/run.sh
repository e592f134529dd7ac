#!/bin/bash
# Started with: srun -N1 --gres=gpu:h100:2 -p h100 ./run.sh
# An interactive vLLM server for Llama 3 8B Instruct on the GPUs srun gave.
set -eu
TP=${SLURM_GPUS_ON_NODE:-2}
exec python3 -m vllm.entrypoints.openai.api_server \
    --model meta-llama/Meta-Llama-3-8B-Instruct \
    --tensor-parallel-size "$TP" \
    --max-model-len 8192 \
    --max-num-seqs 128 \
    --gpu-memory-utilization 0.9 \
    --enable-prefix-caching \
    --port "${PORT:-8001}"
