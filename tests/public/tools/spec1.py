# princeton-nlp/ProLong (lab)
J(1, "prolong-64k", "princeton-nlp/ProLong", "train_64K.sh", "user", True, "accept", True,
  {"model": "meta-llama/Meta-Llama-3-8B-Instruct", "tp": 1, "pp": 1, "zero": 3, "seq": 65536, "mbs": 1, "gbs": 64, "world": 8},
  "HF-Trainer-based training.train_language_model under torchrun on 1 node x 8 GPUs (nproc from nvidia-smi, --gres=gpu:8). "
  "Llama-3-8B-Instruct, per-device batch 1 of 64K tokens (--per_device_max_tokens 65536), BSZ 64 sequences (GAS=64/1/8=8), "
  "--fsdp auto_wrap with FSDP_SHARDING_STRATEGY=1 (FULL_SHARD, like ZeRO-3), gradient checkpointing, bf16. "
  "Published recipe run on 8 H100 80GB (paper); 8B full-shard: 16 B/param/8 GPUs = 16 GB + checkpointed activations fits.",
  args="--gpu h100")
J(2, "prolong-512k-seqpar", "princeton-nlp/ProLong", "train_512K.sh", "user", True, "accept", True,
  {"model": "meta-llama/Meta-Llama-3-8B-Instruct", "tp": 1, "pp": 1, "zero": 3, "mbs": 1, "gbs": 128, "world": 8},
  "As train_64K.sh but 512K-token sequences split by the trainer's own --seq_parallel_size 8 (context parallel over the 8 GPUs), "
  "BSZ 128, FULL_SHARD FSDP. Published recipe (8 H100). seq left out: the script states 512K sequences through "
  "the dataset name and seq_parallel_size, not a flag the trainer reads as the length.", args="--gpu h100")
J(3, "prolong-sft", "princeton-nlp/ProLong", "train_sft.sh", "user", True, "accept", True,
  {"model": "princeton-nlp/Llama-3-8B-ProLong-512k-Base", "tp": 1, "pp": 1, "zero": 3, "seq": 65536, "mbs": 1, "gbs": 64, "world": 8},
  "SFT of the 8B ProLong base with the same trainer: 64K tokens per device, BSZ 64, 250 steps, FULL_SHARD FSDP, 1 node x 8 GPUs. Works (published).",
  args="--gpu h100")
# princeton-nlp/LLM-Shearing (lab)
J(4, "shearing-sft-heredoc", "princeton-nlp/LLM-Shearing", "instruction_tuning/scripts/SLURMsft_LLaMA2.sh", "user", True, "accept", True,
  {"model": "princeton-nlp/Sheared-LLaMA-1.3B", "tp": 1, "pp": 1, "zero": 3, "seq": 512, "mbs": 16, "gbs": 128, "world": 8},
  "A submit wrapper: sbatch of a here-document (-N 2 --ntasks-per-node 4 --gres=gpu:a100:4 --constraint gpu80) whose job runs "
  "srun bash scripts/sft.sh, one python supervised.py per task (8 ranks, RANK from SLURM). HF Trainer flags: bf16, mbs 16, GAS 1, "
  "--model_max_length 512, --fsdp 'full_shard auto_wrap'. 1.3B on 8 A100-80GB fits easily; works.",
  extras=[("instruction_tuning/scripts/sft.sh", "scripts/sft.sh")])
J(5, "shearing-inference-heredoc", "princeton-nlp/LLM-Shearing", "instruction_tuning/scripts/SLURMinference.sh", "user", True, "warn", True,
  {"world": 1},
  "sbatch here-document (1 node, 1 A100-80GB) running srun bash scripts/inference.sh -> python inference.py (custom generation "
  "script) on the SFT output directory (a local checkpoint not shipped). A 1.3B model on one 80GB GPU works, but the reader "
  "cannot know the model or follow inference.py, so it must say it could not check.",
  extras=[("instruction_tuning/scripts/inference.sh", "scripts/inference.sh")])
# OpenGVLab/InternVL (framework)
J(6, "internvl-78b-zero3", "OpenGVLab/InternVL", "internvl_chat/shell/internvl2.5/2nd_finetune/internvl2_5_78b_dynamic_res_2nd_finetune_full.sh", "framework", True, "accept", True,
  {"model": "OpenGVLab/InternVL2_5-78B", "tp": 1, "pp": 1, "zero": 3, "seq": 8192, "mbs": 1, "gbs": 128, "world": 32},
  "Started from a login node (GPUS=32 PARTITION=... sh script): srun -p $PARTITION --gres=gpu:8 --nodes=4 --ntasks=32 python -u "
  "internvl_chat_finetune.py, one rank per task, DeepSpeed ZeRO-3 (zero_stage3_config_100b.json), bf16, mbs 1, GBS 128 (GAS 4), "
  "max_seq_length 8192. 78B (72B LLM + 6B ViT) full fine-tune with ZeRO-3 over 32 A100-80GB: ~78e9*16/32 = 39 GB + activations, "
  "the documented recipe; works.", args="--gpu a100-80gb",
  extras=[("internvl_chat/zero_stage3_config_100b.json", "zero_stage3_config_100b.json")])
J(7, "internvl-8b-stage1-512gpu", "OpenGVLab/InternVL", "internvl_chat/shell/internvl2.5/stage1/internvl2_5_8b_internlm2_5_7b_dynamic_res_stage1.sh", "framework", True, "accept", True,
  {"tp": 1, "pp": 1, "zero": 1, "seq": 16384, "mbs": 1, "gbs": 512, "world": 512},
  "srun over GPUS=512 (64 nodes x 8), MLP-projector pre-training of InternVL2.5-8B (InternViT-300M + internlm2_5-7b-chat from local "
  "./pretrained paths, not shipped), ZeRO-1, mbs 1, GAS 1 (GBS 512), seq 16384. Published recipe; works. The model is only "
  "named by local paths (--llm_path internlm2_5-7b-chat).", args="--gpu a100-80gb",
  extras=[("internvl_chat/zero_stage1_config.json", "zero_stage1_config.json")])
J(8, "internvl-8b-mpo", "OpenGVLab/InternVL", "internvl_chat/shell/internvl2.0_mpo/preference_optimization/internvl2_8b_internlm2_7b_dynamic_res_mpo_full.sh", "framework", True, "accept", True,
  {"tp": 1, "pp": 1, "zero": 1, "seq": 6144, "mbs": 1, "gbs": 256, "world": 256},
  "Preference optimisation (DPO-style) of InternVL2-8B from ckpt/OpenGVLab/InternVL2-8B (local path), srun with GPUS=256, ZeRO-1, "
  "mbs 1, GBS 256 (GAS 1), seq 6144. Works (published). Model named only by a local path; its name says InternVL2-8B.",
  args="--gpu a100-80gb",
  extras=[("internvl_chat/zero_stage1_config.json", "zero_stage1_config.json")])
# OpenLLM-France/Lucie-Training (lab)
J(9, "lucie-pretrain-512gpu", "OpenLLM-France/Lucie-Training", "training/slurm/1_pretraining.slurm", "user", True, "accept", True,
  {"model": "inline", "tp": 4, "pp": 4, "zero": 1, "seq": 4096, "mbs": 2, "gbs": 1024, "world": 512},
  "Megatron-DeepSpeed pretraining of Lucie-7B (32 layers, hidden 4096, 32 heads, 8 KV heads, FFN 12288) on 128 nodes x 4 H100 "
  "(Jean-Zay): srun bash -c \"torchrun ... pretrain_gpt.py\" with TP4 PP4 (DP 32), mbs 2, GBS 1024 with batch ramp-up 256 step 64, "
  "ZERO_STAGE=0 with bf16, which Megatron-DeepSpeed runs with DeepSpeed's BF16_Optimizer (optimizer states sharded over data parallel, like ZeRO-1: stated zero 1), seq 4096, DeepSpeed JSON written by a here-document, --save-interval 5000 with --save. This is how Lucie-7B was trained; works. The GPU is stated by --constraint=h100.")
J(10, "lucie-instruct-128gpu", "OpenLLM-France/Lucie-Training", "training/slurm/4_instruction.slurm", "user", True, "accept", True,
  {"model": "inline", "tp": 4, "pp": 4, "zero": 1, "seq": 4096, "mbs": 8, "gbs": 1024, "world": 128},
  "Megatron-DeepSpeed instruction tuning of Lucie-7B (--finetune --load) on 32 nodes x 4 H100: TP4 PP4 (DP 8), mbs 8, GBS 1024 "
  "(divisible by 8*8), ZeRO-1, seq 4096; mix version from $1. Works.", args="-- v1")
# karpathy/llm.c (framework)
J(11, "llmc-gpt2-124m-2node", "karpathy/llm.c", "scripts/multi_node/run_gpt2_124M_fs.sbatch", "framework", True, "warn", True,
  {"model": "gpt2-124m", "tp": 1, "pp": 1, "zero": 1, "seq": 1024, "mbs": 64, "gbs": 2048, "world": 16},
  "srun -l bash -c running llm.c's own CUDA binary (train_gpt2cu) on 2 nodes x 8 GPUs, one rank per task (-pn $SLURM_NTASKS "
  "-pr $SLURM_PROCID): GPT-2 124M (-e d12), -b 64 x -t 1024, total batch 2,097,152 tokens (GBS 2048 sequences), -z 1 (ZeRO-1). "
  "Works (the author's run). The trainer is a custom binary with one-letter flags the reader cannot be expected to follow: it "
  "must say it did not read it.")
# realtmxi/local-deployment (user)
J(12, "sglang-llama70b-tp4-one-gpu", "realtmxi/local-deployment", "production_scripts/llama_70b.sh", "user", True, "reject", False,
  {"zero": 0, "model": "meta-llama/Llama-3.3-70B-Instruct", "tp": 4, "world": 1},
  "Asks for one GPU (--gres=gpu, 1 node) and starts SGLang through service_fasrc.sh (absolute path, not fetchable at that path) "
  "with TP_SIZE=4 for Llama-3.3-70B bf16. TP 4 needs 4 GPUs; and 70B in bf16 (141 GB of weights) fits on no single GPU. Cannot work "
  "whatever the GPU.")
J(13, "sglang-glm45air-tp4-one-gpu", "realtmxi/local-deployment", "production_scripts/glm_4.5.sh", "user", True, "reject", False,
  {"zero": 0, "model": "zai-org/GLM-4.5-Air", "tp": 4, "world": 1},
  "As llama_70b.sh: one GPU (--gres=gpu) and SGLang through service_fasrc.sh (absolute path) with TP_SIZE=4 for GLM-4.5-Air in bf16 "
  "(106B total parameters, ~212 GB of weights). TP 4 cannot run on one GPU, and 212 GB fits on no single GPU. Cannot work.")
J(14, "sglang-minimax-m2-h200", "realtmxi/local-deployment", "production_scripts/m2.sh", "user", True, "accept", True,
  {"zero": 0, "model": "MiniMaxAI/MiniMax-M2", "tp": 4, "world": 4},
  "4 x H200 (--gres=gpu:nvidia_h200:4); bash production_scripts/service.sh (relative, ships) $MODEL_PATH $PORT $TP_SIZE: service.sh "
  "runs python3 -m sglang.launch_server --model-path \"$MODEL_PATH\" --tp \"$TP_SIZE\" (positional arguments $1 $3) under a "
  "restart loop. MiniMax-M2 (230B MoE, FP8 weights ~230 GB) over 4 x 141 GB with TP 4: ~58 GB each; works (production).",
  extras=[("production_scripts/service.sh", "production_scripts/service.sh")])
