#!/bin/bash
#SBATCH --nodes=1 --gres=gpu:8
QUANT=""
if [[ -n "$USE_FP8" ]]; then
    QUANT="--quantization fp8"
elif [ "$SLURM_GPUS_ON_NODE" = 8 ]; then
    QUANT="--kv-cache-dtype fp8_e5m2"
else
    QUANT=""
fi
[ -z "$PORT" ] && PORT=30000
python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 \
    --trust-remote-code --port ${PORT} $QUANT --mem-fraction-static 0.85 \
    --context-length $(( 64 * 1024 ))
