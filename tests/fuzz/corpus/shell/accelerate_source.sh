#!/bin/bash
#SBATCH --nodes=2 --gpus-per-node=4
source ./env.sh
. missing_site_env.sh
NUM_MACHINES=$SLURM_NNODES
NUM_PROCESSES=$(( NUM_MACHINES * 4 ))
cat > accel.yaml <<'EOF'
compute_environment: LOCAL_MACHINE
distributed_type: FSDP
fsdp_config:
  fsdp_sharding_strategy: FULL_SHARD
mixed_precision: bf16
EOF
export LAUNCHER="accelerate launch --config_file accel.yaml --num_processes $NUM_PROCESSES \
    --num_machines $NUM_MACHINES --machine_rank \$SLURM_PROCID \
    --main_process_ip $MASTER_ADDR --main_process_port 29500"
export SCRIPT_ARGS='--model_name_or_path mistralai/Mistral-7B-v0.1 --per_device_train_batch_size 2 --bf16 True'
srun bash -c "$LAUNCHER train_sft.py $SCRIPT_ARGS"
