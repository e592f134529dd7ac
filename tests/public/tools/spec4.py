# allenai/open-instruct (lab)
J(42, "openinstruct-olmocore-sft-instruct", "allenai/open-instruct", "scripts/slurm/sft/train_dolci_instruct.sh", "user", True, "warn", None,
  {"seq": 32768, "gbs": 32, "world": 8},
  "torchrun --nproc-per-node=$GPUS (8) $OLMOCORE_PATH/src/scripts/train/sft/OLMo-sft.py train with dotted overrides: "
  "sequence_length 32768, global_batch_size 32*32768 tokens (32 sequences), 1 node x 8 GPUs (--gpus=8). The model is BASE_CKPT "
  "from the environment (the script exits if it is unset) and OLMo-core's SFT recipe picks the rest. Nothing provable; the "
  "reader cannot know the model and must say so. Whether it fits depends on that checkpoint (OLMo 3 7B per the repo's docs).")
J(43, "openinstruct-olmocore-sft-think", "allenai/open-instruct", "scripts/slurm/sft/train_dolci_think.sh", "user", True, "warn", None,
  {"seq": 32768, "gbs": 32, "world": 8},
  "Same OLMo-core SFT launcher for the Think mix (24 h), same sizes; model from BASE_CKPT.")
# Lumi-supercomputer/LUMI-AI-Guide (centre)
J(44, "lumi-vllm-qwen-moe-tp2", "Lumi-supercomputer/LUMI-AI-Guide", "10-LLM-inference/run-vllm-lumi2.sh", "centre", True, "accept", True,
  {"zero": 0, "model": "Qwen/Qwen3.6-35B-A3B", "tp": 2, "pp": 1, "world": 2},
  "LUMI dev-g, 1 node, 2 GCDs (MI250X, 64 GB each): srun singularity run $SIF vllm serve Qwen/Qwen3.6-35B-A3B "
  "--tensor-parallel-size $SLURM_GPUS_ON_NODE (2) over a Unix socket. A 35B-total MoE in bf16 (~70 GB) split over two 64 GB GCDs "
  "leaves room for KV cache; the centre's guide; works.", args="--gpu mi250")
J(45, "lumi-vit-ddp-torchrun", "Lumi-supercomputer/LUMI-AI-Guide", "05-multi-gpu-and-node/run_ddp_torchrun.sh", "centre", False, "accept", True, {},
  "Vision transformer classification with DDP, srun singularity run ... torch.distributed.run --standalone --nproc_per_node=8 "
  "ddp_visiontransformer.py on one LUMI node. Not an LLM job.", args="--gpu mi250")
# VectorInstitute/vectorlm (framework, a lab's trainer)
J(46, "vectorlm-llama2-7b-fsdp", "VectorInstitute/vectorlm", "examples/launch.sh", "framework", True, "warn", None,
  {"model": "meta-llama/Llama-2-7b-chat-hf", "zero": 3, "seq": 4096, "mbs": 8, "gbs": 128, "world": 4},
  "From examples/: torchrun --nproc-per-node=$SLURM_GPUS_ON_NODE (4, --gres=gpu:4, partition a100) llama_example.py --yaml_path "
  "../configs/config.yaml (shipped): Llama-2-7b-chat full fine-tune, FULL_SHARD, bf16 mixed precision, activation checkpointing, "
  "max_seq_len 4096, train_bs 8 per GPU, GAS 4. Fits on 4 A100-80GB, not obviously on A100-40GB (the partition's GPU size is not "
  "stated): not a proof either way. VectorLM's own YAML schema; the reader should say it cannot follow the trainer.",
  cwd="examples", extras=[("configs/config.yaml", "configs/config.yaml")])
J(47, "vectorlm-llama2-7b-2node", "VectorInstitute/vectorlm", "examples/launch_multinode.sh", "framework", True, "warn", True,
  {"model": "meta-llama/Llama-2-7b-chat-hf", "zero": 3, "seq": 4096, "mbs": 8, "gbs": 256, "world": 8},
  "2 nodes x 4 A100 (--gres=gpu:a100:4); srun bash -c 'torchrun --nnodes=$SLURM_JOB_NUM_NODES --nproc-per-node=$SLURM_GPUS_ON_NODE "
  "--rdzv-backend c10d ... llama_example.py --yaml_path ../configs/config.yaml'. Same config, 8 GPUs, GBS 8*4*8=256. FULL_SHARD over "
  "8 GPUs: 14 GB of states per GPU + checkpointed activations; works.",
  cwd="examples", extras=[("configs/config.yaml", "configs/config.yaml")])
# tommasoc80/woah_2025_shot_selection (lab)
J(48, "woah-llama3-70b-python-4h100", "tommasoc80/woah_2025_shot_selection", "llm_scripts/zero-shot/llama3-70b_brexit.sh", "user", True, "warn", True,
  {"seq": 4096, "world": 4},
  "4 x H100 (--gres=gpu:h100:4): python llama3_70b_brexit.py --max-model-len 4096 --n-gpus 4, a vLLM offline classification "
  "script for Llama-3-70B-Instruct (tensor parallel 4 inside the program). 70B bf16 over 4 x 80 GB fits; paper's runs. The model "
  "and engine are inside the program.")
J(49, "woah-hatebert-finetune", "tommasoc80/woah_2025_shot_selection", "encoder-hatebert/md_hb_ft.sh", "user", False, "accept", True, {},
  "python hatebert_md.py on 2 A100: fine-tuning HateBERT (a BERT classifier). Not an LLM job.")
# Mark-Hopkins-at-Williams/thesis-ntunggal (user)
J(50, "thesis-gpt-train-1gpu", "Mark-Hopkins-at-Williams/thesis-ntunggal", "gpt-training/run.sh", "user", True, "warn", True,
  {"world": 1},
  "CUDA_VISIBLE_DEVICES=0 python train_gpt.py experiments/testing on one GPU: a small GPT pretraining experiment whose sizes are in "
  "the program and an experiment directory. Works (thesis); the reader cannot follow it.")
# codyarvonen/minGPT (user)
J(51, "mingpt-user-1gpu", "codyarvonen/minGPT", "run_training.sh", "user", True, "warn", True,
  {"world": 1},
  "python train.py on one GPU (--gpus=1): minGPT with block_size 1024 set in the program. Works; nothing to read in the script.")
# modichirag/GPT-opt (user)
J(52, "gptopt-torchrun-4-yaml", "modichirag/GPT-opt", "job4.sh", "user", True, "warn", True,
  {"world": 4},
  "torchrun --standalone --nproc_per_node=4 run.py --config configs/fineweb1B.yaml on 4 H100 (--ntasks=4 --gpus-per-task=1): an "
  "optimizer sweep (SGD/AdamW/Muon) on a small GPT; the YAML ships (optimizer lists), the model is the program's. Works.",
  extras=[("configs/fineweb1B.yaml", "configs/fineweb1B.yaml")])
J(53, "gptopt-torchrun-1-shakespeare", "modichirag/GPT-opt", "job.sh", "user", True, "warn", True,
  {"world": 1},
  "torchrun --standalone --nproc_per_node=1 run.py --config configs/shakespeare.yaml on one A100. Small GPT; works.",
  extras=[("configs/shakespeare.yaml", "configs/shakespeare.yaml")])
# claireg808/NLP_knowledge_graph (user)
J(54, "vllm-r1-qwen32b-one-80g", "claireg808/NLP_knowledge_graph", "run.sh", "user", True, "accept", True,
  {"zero": 0, "model": "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "tp": 1, "pp": 1, "seq": 35904, "world": 1},
  "vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-32B --max-model-len 35904 on one 80 GB GPU (--gres=gpu:80g:1). 32.8B bf16 = "
  "61 GiB of weights; at the default 0.9 utilisation ~8.8 GiB remain for KV cache = ~35.9K tokens at 0.25 MiB/token (64 layers x 8 "
  "KV heads x 128 x 2 x 2 B): 35904 is exactly the figure vLLM reports as the KV capacity, so the user set it to what fits. Works, "
  "tight.", args="--gpu a100-80gb")
J(55, "vllm-llama3-8b-one-80g", "claireg808/NLP_knowledge_graph", "query_llm.sh", "user", True, "accept", True,
  {"zero": 0, "model": "meta-llama/Meta-Llama-3-8B-Instruct", "tp": 1, "pp": 1, "seq": 8192, "world": 1},
  "vllm serve meta-llama/Meta-Llama-3-8B-Instruct --served-model-name llama3 on one 80 GB GPU. seq is the model's own 8192 "
  "(vLLM's default max-model-len). Works.", args="--gpu a100-80gb")
# HaiLiExp/stable_diffusion_test (user)
J(56, "stable-diffusion-txt2img", "HaiLiExp/stable_diffusion_test", "txt2img.sh", "user", False, "accept", True, {},
  "python txt2img.py --prompt ... --plms on one GPU: Stable Diffusion v1 sampling. Not an LLM job.")
# mlfoundations/open_clip (framework)
J(57, "openclip-vitb32-240gpu", "mlfoundations/open_clip", "docs/script_examples/stability_example.sh", "framework", False, "accept", True, {},
  "CLIP ViT-B-32 training, 30 nodes x 8 tasks, srun python -m open_clip_train.main --batch-size=375. Not an LLM job (GPUs per "
  "node given as the cluster's 8 x A100-40GB).", args="--gpu a100-40gb --gpus-per-node 8")
# karpathy/llm.c second script
J(58, "llmc-gpt2-124m-tcp", "karpathy/llm.c", "scripts/multi_node/run_gpt2_124M_tcp.sbatch", "framework", True, "warn", True,
  {"model": "gpt2-124m", "tp": 1, "pp": 1, "zero": 1, "seq": 1024, "mbs": 64, "gbs": 2048, "world": 16},
  "As run_gpt2_124M_fs.sbatch with the TCP rendezvous (-pi tcp): 2 nodes x 8 GPUs, GPT-2 124M, -b 64 -t 1024, total batch 2M "
  "tokens, ZeRO-1. Custom binary; works.")
