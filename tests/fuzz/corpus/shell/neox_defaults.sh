#!/bin/bash
#SBATCH -N 8 --gres=gpu:8 --ntasks-per-node=8
: ${NEOX_DIR:=/opt/gpt-neox}
: "${CONF_DIR:=$NEOX_DIR/configs}"
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
HOSTFILE=/tmp/hosts_$SLURM_JOBID
scontrol show hostnames $SLURM_JOB_NODELIST | while read n; do echo "$n slots=8"; done > $HOSTFILE
export DLTS_HOSTFILE=$HOSTFILE
WORLD=$(( SLURM_NNODES * 8 ))
echo "world size: $WORLD"
python $NEOX_DIR/deepy.py $NEOX_DIR/train.py \
    $CONF_DIR/20B.yml $CONF_DIR/local_setup.yml
