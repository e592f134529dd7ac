#!/bin/bash
#SBATCH --nodes=1 --gpus-per-node=8 --partition=h100
mkdir -p "$SLURM_SUBMIT_DIR/cfg"
cat > "$SLURM_SUBMIT_DIR/cfg/llama3.toml" <<'EOF'
[job]
dump_folder = "./outputs"

[model]
name = "llama3"
flavor = "8B"

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2

[training]
local_batch_size = 2
seq_len = 8192

[checkpoint]
enable_checkpoint = true
interval = 1000
EOF
NGPU=${NGPU:-8}
CONFIG_FILE=${CONFIG_FILE:-"$SLURM_SUBMIT_DIR/cfg/llama3.toml"}
overrides=""
if [ $# -ne 0 ]; then
    overrides="$*"
fi
PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" \
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
    --local-ranks-filter 0 --role rank --tee 3 \
    -m torchtitan.train --job.config_file ${CONFIG_FILE} $overrides --training.steps 5000
