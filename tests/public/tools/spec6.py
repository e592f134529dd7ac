J(73, "lucie-context-ext-32k", "OpenLLM-France/Lucie-Training", "training/slurm/2_context_length_extension.slurm", "user", True, "warn", True,
  {"model": "inline", "tp": 4, "pp": 4, "zero": 1, "seq": 32000, "mbs": 4, "gbs": 128, "world": 128},
  "Megatron-DeepSpeed context extension of Lucie-7B to 32K on 32 nodes x 4 H100: TP4 PP4 (DP 8), mbs 4, GBS 128 (GAS 4), ZeRO-1, "
  "SEQ_LENGTH=32_000 (bash keeps the underscore; Python's int() accepts '32_000'). The published extension run; works. But GBS 128 / (mbs 4 x DP 8) = 4 micro-batches through 4 pipeline stages: a (p-1)/m = 75% pipeline bubble, a real inefficiency worth a warning (not a proof).")
J(74, "talkative-deepspeed-8gpu-yaml", "safety-research/talkative-probes", "consistency-lens/scripts/archive/slurm.sh", "user", True, "warn", None,
  {"world": 8},
  "1 node, 8 H100 (--gres=gpu:8, --constraint=h100): deepspeed --num_gpus 8 01_train.py --deepspeed_config ../config/ds_stage2.yaml "
  "--config ../config/lens.yaml. Both configs live outside the script's directory and are not in the repository at this commit; "
  "the model (a consistency-lens over an LLM) is in them. The reader cannot know the model and must say so.")
J(75, "gcp-llama2-finetune-no-gres", "GoogleCloudPlatform/scientific-computing-examples", "llama2-finetuning-slurm/files/fine-tune-slurm.sh", "centre", True, "warn", None,
  {},
  "Google Cloud's Slurm tutorial: 1 node of partition g2gpu8 (8 x L4 24 GB) but no --gres/--gpus request, then python "
  "/data_bucket/fine-tune.py (Llama-2-7B fine-tuning per the tutorial; the program is outside the job). Whether any GPU is visible "
  "without a GPU request depends on the cluster's device constraint; the model is in the program. Not a proof; the reader must say "
  "what it could not check (and that no GPU is requested).")
J(76, "rare-vllm-llama70b-tp2-32k", "infinityreader/RARE", "scripts/deploy_llama31_70b.sh", "user", True, "warn", None,
  {"zero": 0, "model": "meta-llama/Llama-3.1-70B-Instruct", "tp": 2, "pp": 1, "seq": 32000, "world": 2},
  "CUDA_VISIBLE_DEVICES=2,3 vllm api_server --model .../Meta-Llama-3.1-70B-Instruct --tensor-parallel-size 2 --max-model-len 32000 "
  "--gpu-memory-utilization 0.9. 70B bf16 = 131 GiB: 65.7 GiB per GPU. On 80 GB GPUs 0.9 x 79.2 = 71.3 GiB leaves ~4 GiB of KV cache "
  "after activations, less than one 32000-token sequence needs (80 layers x 4 KV heads x 128 x 2 x 2 B = 160 KiB/token = 4.9 GiB): "
  "vLLM would refuse to start. On 94/141 GB GPUs it works. The GPU is not stated (given as 2 GPUs of one node), so not a proof: "
  "a warning that it only fits on GPUs over 80 GB.", args="--nodes 1 --gpus-per-node 2")
J(77, "mbti-vllm-llama2-7b-fp16", "MiuLab/MBTI-User", "run_user_server.sh", "user", True, "accept", True,
  {"zero": 0, "model": "meta-llama/Llama-2-7b-chat-hf", "tp": 1, "pp": 1, "seq": 4096, "world": 1},
  "CUDA_VISIBLE_DEVICES=0 python3 -m vllm.entrypoints.api_server --model meta-llama/Llama-2-7b-chat-hf --dtype float16 "
  "--tensor-parallel-size 1: 13.5 GB of weights on one GPU (given). seq is the model's 4096 (vLLM default). Works.",
  args="--nodes 1 --gpus-per-node 1")
