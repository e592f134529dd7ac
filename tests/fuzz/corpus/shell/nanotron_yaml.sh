#!/bin/bash
#SBATCH --nodes=2 --ntasks-per-node=1 --gres=gpu:8
DP=4
TP=2
PP=1
cat > run_config.yaml <<EOF
checkpoints:
  checkpoint_interval: 2000
  checkpoints_path: /ckpt/nanotron
parallelism:
  dp: ${DP}
  tp: ${TP}
  pp: ${PP}
  tp_mode: REDUCE_SCATTER
model:
  model_config:
    hidden_size: 2048
    num_attention_heads: 32
    num_hidden_layers: 24
    num_key_value_heads: 8
    intermediate_size: 8192
    vocab_size: 49152
tokens:
  micro_batch_size: 4
  sequence_length: 4096
  batch_accumulation_per_replica: 16
EOF
export CUDA_DEVICE_MAX_CONNECTIONS=1
srun torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend c10d \
    --rdzv_endpoint "$(hostname):29500" run_train.py --config-file run_config.yaml
