# Parallel layout shared by the Llama 8B jobs of this project.
export TP=4
export ACC=4            # micro-batches per replica per step
export NCCL_NVLS_ENABLE=0
