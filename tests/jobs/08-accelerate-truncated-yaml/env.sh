# Site environment for the fine-tuning jobs.
export HF_HOME=/lustre/cache/hf
export DATASET=${DATASET:-HuggingFaceFW/fineweb-edu}
export OUT_DIR=${OUT_DIR:-/lustre/$USER/runs/clm-8b}
