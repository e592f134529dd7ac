#!/bin/bash
#SBATCH --nodes=1 --gres=gpu:2
exec 1>"logs/${SLURM_JOB_ID}.out" 2>&1
for lr in 1e-5 2e-5; do
    echo "sweep lr=$lr"
done
OUT_DIR=/scratch/$USER/run_$SLURM_JOB_ID
CMD="python -m torch.distributed.run --nproc_per_node 2 train.py"
CMD+=" --output_dir $OUT_DIR --per_device_train_batch_size 8"
CMD="$CMD --gradient_accumulation_steps 4 --save_steps 500 --max_seq_length 2048"
eval "$CMD --learning_rate 2e-5"
exec accelerate launch --num_processes 2 eval.py --model_name_or_path $OUT_DIR
