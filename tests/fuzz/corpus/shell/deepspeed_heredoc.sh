#!/bin/bash
#SBATCH --nodes=1 --gres=gpu:8
: ${ZERO_STAGE:=2}
MBS=4
GAS=8
cat <<EOF > ds_config.json
{
  "train_micro_batch_size_per_gpu": $MBS,
  "gradient_accumulation_steps": $GAS,
  "train_batch_size": $(( MBS * GAS * 8 )),
  "bf16": { "enabled": true },
  "zero_optimization": { "stage": ${ZERO_STAGE}, "overlap_comm": true }
}
EOF
deepspeed --num_gpus 8 --num_nodes 1 train.py \
    --model_name_or_path meta-llama/Llama-2-7b-hf \
    --deepspeed ds_config.json --per_device_train_batch_size $MBS \
    --gradient_checkpointing --save_steps 200
