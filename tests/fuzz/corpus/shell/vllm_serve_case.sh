#!/bin/bash
#SBATCH --gpus=4 --time=2:00:00
MODEL=${1:-meta-llama/Llama-3.1-70B-Instruct}
case "$MODEL" in
  *70B*|*72B*) TP=4 ;;
  *8B*|*7B*)   TP=1 ;;
  *)           TP=2 ;;
esac
serve() {
    local port=$1
    shift
    vllm serve "$MODEL" --tensor-parallel-size $TP --port "$port" \
        --max-model-len 32768 --gpu-memory-utilization 0.9 "$@"
}
serve 8000 --dtype bfloat16 --enable-prefix-caching
