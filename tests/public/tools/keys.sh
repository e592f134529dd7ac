#!/bin/bash
r=$1; shift; g=/work/.mirror/${r/\//+}/repo
for p in "$@"; do c=$(git -C $g log -1 --format=%H --all --diff-filter=AM -- "$p"); echo "######## $r :: $p @ ${c:0:8} ($(git -C $g show $c:"$p" | wc -l) lines)"; git -C $g show $c:"$p" | grep -v -E '^\s*#([^S!]|$)' | grep -n -i -E 'SBATCH|srun|torchrun|deepspeed|accelerate|vllm|sglang|python|model|tensor|pipeline|batch|seq|len|zero|nproc|nnodes|num_gpus|gpus|config|yaml|json|bf16|fp16|lora|peft|fsdp|\$[0-9@]|=\$\{?[0-9]' | cut -c1-170 | head -${N:-40}; done
