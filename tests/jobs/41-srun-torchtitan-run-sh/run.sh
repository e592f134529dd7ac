#!/bin/bash
# Started with: srun -N1 --ntasks=1 --gpus-per-node=8 -p h100 ./run.sh
# A quick torchtitan debug run on one node with command-line overrides
# that take the preset's 8-way FSDP to TP=8 x CP=... typed as 3.
NGPU=${NGPU:-8}
CONFIG_FILE=${CONFIG_FILE:-./llama3_8b.toml}
overrides=""
overrides+=" --parallelism.tensor_parallel_degree 4"
overrides+=" --parallelism.context_parallel_degree 3"
torchrun --nproc_per_node=$NGPU --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
    --local-ranks-filter 0 --role rank --tee 3 \
    -m torchtitan.train --job.config_file ${CONFIG_FILE} $overrides
