# mila-iqia/mila-docs (centre)
J(27, "mila-accelerate-opt13b-zero2", "mila-iqia/mila-docs", "docs/examples/distributed/LLM_training/job.sh", "centre", True, "accept", True,
  {"model": "facebook/opt-13b", "tp": 1, "pp": 1, "zero": 2, "mbs": 1, "world": 8},
  "Mila's LLM training example: srun one task per node running accelerate launch --config_file configs/ds_level2.yaml "
  "(DeepSpeed ZeRO-2, fp16) --num_processes=$WORLD_SIZE (nodes x GPUs on node) main.py (a run_clm_no_trainer-style program). "
  "Its README submits it with --nodes=2 --gpus-per-task=a100:4 and the script arguments --config_name=facebook/opt-13b "
  "--per_device_train_batch_size=1 (given here). OPT-13B with ZeRO-2 over 8 A100-80GB: 26 GB fp16 weights + 26/8 grads + "
  "156/8 optimizer = ~49 GB + activations; the README's own table; works. Sequence length is main.py's default, not stated.",
  args="--nodes 2 --gpus-per-node 4 -- --wandb_tags=mila --config_name=facebook/opt-13b --per_device_train_batch_size=1",
  commit="2f900317f8349c1f6ece783975c24cbeaefa8eec",
  extras=[("docs/examples/distributed/LLM_training/configs/ds_level2.yaml", "configs/ds_level2.yaml"),
          ("docs/examples/distributed/LLM_training/setup_env.sh", "setup_env.sh")])
J(28, "mila-vllm-server-getopts", "mila-iqia/mila-docs", "docs/examples/llm/inference_server.sh", "centre", True, "accept", True,
  {"zero": 0, "model": "meta-llama/Llama-2-7b-chat-hf", "tp": 1, "pp": 1, "world": 1},
  "One task, one RTX8000 (48 GB, --gpus-per-task=rtx8000:1); getopts -m MODEL -p PATH -e ENV, then python -m "
  "vllm.entrypoints.openai.api_server --model $MODEL_PATH --tensor-parallel-size $SLURM_NTASKS_PER_NODE (=1). The docs run it "
  "as 'sbatch inference_server.sh -m Llama-2-7b-chat-hf -p /network/weights/llama.var/llama2/Llama-2-7b-chat-hf' (given here). "
  "7B fp16 (13.5 GB) on a 48 GB GPU; works.",
  args="-- -m Llama-2-7b-chat-hf -p /network/weights/llama.var/llama2/Llama-2-7b-chat-hf")
J(29, "mila-imagenet-resnet", "mila-iqia/mila-docs", "docs/examples/advanced/imagenet/job.sh", "centre", False, "accept", True, {},
  "ImageNet classification (torchvision ResNet in main.py) on one L40S, srun bash -c 'uv run python main.py' with RANK from "
  "SLURM_PROCID. Not an LLM job.")
# olcf/ai-training-series (centre)
J(30, "olcf-gptj-fsdp-frontier", "olcf/ai-training-series", "ai_at_scale_part_2/ddp_examples/launch_gptJ_fsdp.frontier", "centre", True, "warn", True,
  {"mbs": 4, "seq": 128, "world": 16},
  "Frontier, 2 nodes (whole nodes, 8 MI250X GCDs of 64 GB each): srun -n16 --ntasks-per-node=8 python gptJ_oscar_fsdp.py, one "
  "rank per GCD. The program loads GPT-J-6B from a local directory and wraps it in PyTorch FSDP itself; mbs 4, --max_len 128, "
  "100 steps. 6B with FSDP over 16 x 64 GB fits; OLCF's training material, works. The model and the sharding are in the "
  "program, which the reader cannot follow.", args="--gpu mi250 --gpus-per-node 8")
J(31, "olcf-gpt2xl-deepspeed-frontier", "olcf/ai-training-series", "ai_at_scale_part_2/ddp_examples/launch_gpt_srun.frontier", "centre", True, "warn", True,
  {"mbs": 24, "seq": 128, "gbs": 3072, "world": 16, "zero": 0},
  "Same set-up for GPT-2 XL (1.5B, loaded by the program from models/gpt2-xl): HF Trainer with --deepspeed ds_config.json (no "
  "zero_optimization section: stage 0), mbs 24, GAS 8 (GBS 24*8*16=3072), max_len 128, 16 ranks via srun. Works (README). "
  "Model only in the program.", args="--gpu mi250 --gpus-per-node 8",
  extras=[("ai_at_scale_part_2/ddp_examples/ds_config.json", "ds_config.json")])
# PrincetonUniversity/multi_gpu_training (centre)
J(32, "princeton-codellama7b-fsdp", "PrincetonUniversity/multi_gpu_training", "04_model_parallel_with_fsdp/chess_finetune.sh", "centre", True, "warn", True,
  {"tp": 1, "pp": 1, "zero": 3, "mbs": 1, "gbs": 64, "world": 4},
  "torchrun --nproc-per-node=<GPUs in CUDA_VISIBLE_DEVICES> chess_finetune.py on 1 node, --gres=gpu:4, --constraint=gpu80 "
  "(A100 80GB): full fine-tune of CodeLlama-7b (named in the program and README) with the program's own FSDP wrapping, "
  "batch 1 per device, total batch 64 (GAS 16). The README says it needs 4 A100s; works. Model in the program.",
  args="--gpu a100-80gb")
J(33, "princeton-mnist-ddp", "PrincetonUniversity/multi_gpu_training", "02_pytorch_ddp/job.slurm", "centre", False, "accept", True, {},
  "MNIST CNN with DDP, 2 nodes x 2 GPUs, srun python mnist_classify_ddp.py. Not an LLM job.")
J(34, "princeton-tf-mnist", "PrincetonUniversity/multi_gpu_training", "tensorflow/job.slurm", "centre", False, "accept", True, {},
  "TensorFlow MirroredStrategy MNIST on 2 GPUs, python mnist_classify.py. Not an LLM job.")
# fasrc/User_Codes (centre)
J(35, "fasrc-pytorch-check-gpu", "fasrc/User_Codes", "AI/PyTorch/run.sbatch", "centre", False, "accept", True, {},
  "One GPU, srun python check_gpu.py (prints CUDA availability). Not an LLM job.")
J(36, "fasrc-alphafold-monomer", "fasrc/User_Codes", "Applications/AlphaFold/run_alphafold.sh", "centre", False, "accept", True, {},
  "AlphaFold 2 monomer prediction in Singularity on one GPU. Not an LLM job.")
# pytorch/examples (framework)
J(37, "pytorch-mingpt-ddp-2node", "pytorch/examples", "distributed/minGPT-ddp/mingpt/slurm/sbatch_run.sh", "framework", True, "warn", True,
  {"tp": 1, "pp": 1, "zero": 0, "world": 2},
  "srun torchrun --nnodes 2 --nproc_per_node 1 (c10d rendezvous) /shared/examples/mingpt/main.py: minGPT (8 layers, 8 heads, "
  "512 wide, block 128) trained with DDP on tiny-shakespeare; its Hydra config sits next to main.py under /shared, not in the "
  "job directory. 2 GPUs, works (tutorial). A tiny GPT: an LLM-training job in form, whose sizes the reader cannot see.")
J(38, "pytorch-ddp-tutorial-toy", "pytorch/examples", "distributed/ddp-tutorial-series/slurm/sbatch_run.sh", "framework", False, "accept", True, {},
  "srun torchrun --nnodes 4 --nproc_per_node 1 multinode_torchrun.py 50 10: a linear-regression toy for the DDP tutorial. "
  "Not an LLM job.")
# pytorch/PiPPy (framework)
J(39, "pippy-gpt2-srun-wrapper", "pytorch/PiPPy", "examples/hf/gpt2/pippy_sbatch.sh", "framework", True, "warn", True,
  {"world": 16},
  "2 nodes x 8 tasks x 8 GPUs; srun --label pippy_wrapper.sh sets RANK/WORLD_SIZE from Slurm and runs python -u pippy_gpt2.py "
  "(GPT-2 small, pipeline-parallel with PiPPy's defaults in the program). Works (example). Sizes are in the program.",
  extras=[("examples/hf/gpt2/pippy_wrapper.sh", "pippy_wrapper.sh")])
# stas00/ml-engineering (user: one person's guide)
J(40, "stas-torchrun-launcher-gputest", "stas00/ml-engineering", "orchestration/slurm/launchers/torchrun-launcher.slurm", "user", False, "accept", True, {},
  "2 nodes x 8 GPUs, srun bash -c 'python -m torch.distributed.run --node_rank $SLURM_PROCID ... torch-distributed-gpu-test.py': "
  "an NCCL/GPU health test, not an LLM job.")
J(41, "stas-srun-launcher-gputest", "stas00/ml-engineering", "orchestration/slurm/launchers/srun-launcher.slurm", "user", False, "accept", True, {},
  "2 nodes x 8 tasks, srun bash -c 'RANK=$SLURM_PROCID ... python -u torch-distributed-gpu-test.py'. GPU test, not an LLM job.")
