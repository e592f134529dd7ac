# deepspeedai/DeepSpeedExamples (framework)
J(59, "dschat-llama2-7b-zero3", "deepspeedai/DeepSpeedExamples", "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_scripts/llama2/run_llama2_7b.sh", "framework", True, "accept", True,
  {"model": "meta-llama/Llama-2-7b-hf", "tp": 1, "pp": 1, "zero": 3, "seq": 512, "mbs": 4, "gbs": 32, "world": 8},
  "DeepSpeed-Chat step 1: deepspeed main.py (every GPU of the node) --model_name_or_path meta-llama/Llama-2-7b-hf, mbs 4, GAS 1, "
  "max_seq_len 512, --zero_stage $2 defaulting to 3, gradient checkpointing. The DS-Chat README runs it on one node of 8 A100-80GB "
  "(given here). 7B ZeRO-3 over 8 x 80 GB fits easily; works.", args="--gpu a100-80gb --nodes 1 --gpus-per-node 8")
J(60, "dschat-opt66b-lora-multinode", "deepspeedai/DeepSpeedExamples", "applications/DeepSpeed-Chat/training/step1_supervised_finetuning/training_scripts/opt/multi_node/run_66b.sh", "framework", True, "warn", True,
  {"model": "facebook/opt-66b", "tp": 1, "pp": 1, "zero": 3, "seq": 512, "mbs": 4},
  "deepspeed main.py (hostfile from the environment: the README's 8 nodes x 8 A100-80GB, given here) for OPT-66B with ZeRO-3, "
  "LoRA dim 128 on the decoder layers, mbs 4, max_seq_len 512, gradient checkpointing. 66B over 64 GPUs with ZeRO-3 (LoRA keeps the "
  "base weights' optimizer states out; full-parameter states would still fit at 16 B x 66e9 / 64 = 16.5 GB); works. But the script writes no hostfile: the deepspeed launcher uses /job/hostfile if the cluster provides one (as the README assumes) and otherwise runs on the first node only (66B bf16 ZeRO-3 over 8 GPUs = 16.5 GB each, still fits) leaving 56 GPUs idle. The world depends on a file the job does not name: a warning, not a proof.",
  args="--gpu a100-80gb --nodes 8 --gpus-per-node 8")
# hiyouga/LLaMA-Factory (framework)
J(61, "llamafactory-fsdp-qlora", "hiyouga/LLaMA-Factory", "examples/extras/fsdp_qlora/train.sh", "framework", True, "accept", True,
  {"model": "meta-llama/Meta-Llama-3-8B-Instruct", "tp": 1, "pp": 1, "zero": 3, "seq": 1024, "mbs": 1, "gbs": 16, "world": 2},
  "From the repo root: CUDA_VISIBLE_DEVICES=0,1 accelerate launch --config_file examples/accelerate/fsdp_config.yaml "
  "(FULL_SHARD, 2 processes) src/train.py examples/extras/fsdp_qlora/llama3_lora_sft.yaml (Llama-3-8B-Instruct, 4-bit QLoRA, "
  "cutoff_len 1024, mbs 1, GAS 8). The configs ship. 8B in 4 bits sharded over 2 GPUs: a few GB each; works. GPU from the README (FSDP+QLoRA on 2 x 24 GB GPUs).",
  args="--gpu rtx3090 --nodes 1 --gpus-per-node 2",
  extras=[("examples/accelerate/fsdp_config.yaml", "examples/accelerate/fsdp_config.yaml"),
          ("examples/extras/fsdp_qlora/llama3_lora_sft.yaml", "examples/extras/fsdp_qlora/llama3_lora_sft.yaml")])
J(62, "llamafactory-cli-qwen3-lora", "hiyouga/LLaMA-Factory", "examples/train_lora/qwen3_lora_sft.sh", "framework", True, "accept", True,
  {"model": "Qwen/Qwen3-4B-Instruct-2507", "tp": 1, "pp": 1, "zero": 0, "seq": 2048, "mbs": 1, "world": 1},
  "llamafactory-cli train with flags: Qwen3-4B-Instruct-2507, LoRA rank 8 on all linear layers, cutoff_len 2048, mbs 1, GAS 8, bf16. "
  "On one GPU (no CUDA_VISIBLE_DEVICES, no DeepSpeed) a 4B LoRA fits in 24 GB; works.", args="--nodes 1 --gpus-per-node 1")
# safety-research/talkative-probes (lab)
J(63, "vllm-gpt-oss-20b-server", "safety-research/talkative-probes", "talkative_autoencoder/scripts/vllm_server_job.sh", "user", True, "accept", True,
  {"zero": 0, "model": "openai/gpt-oss-20b", "tp": 1, "pp": 1, "seq": 4096, "world": 1},
  "One GPU (--gres=gpu:1), installs vLLM into a uv venv, then vllm serve ${MODEL_NAME:-openai/gpt-oss-20b} --max-model-len 4096 "
  "--tensor-parallel-size ${TP_SIZE:-1} --gpu-memory-utilization 0.90 in the background and waits on it. gpt-oss-20b (MXFP4, ~13 GB) "
  "on one GPU; works.")
# multimodal-art-projection/KORGym (lab)
J(64, "korgym-vllm-qwen72b-tp4-pp2", "multimodal-art-projection/KORGym", "game_lib/15-emoji_connect/script/Qwen2.5-72B-Instruct.sh", "user", True, "accept", True,
  {"zero": 0, "model": "Qwen/Qwen2.5-72B-Instruct", "tp": 4, "pp": 2, "seq": 15000, "world": 8},
  "CUDA_VISIBLE_DEVICES=0..7 python -m vllm.entrypoints.openai.api_server --model .../Qwen2.5-72B-Instruct --pipeline_parallel_size=2 "
  "--tensor_parallel_size=4 --max_model_len=15000 --gpu_memory_utilization=0.95. 8 GPUs of one node (given). 72B bf16 = 145 GB over "
  "8 GPUs: 18 GB each; TP4 divides 64 heads and 8 KV heads; works on any 40 GB+ GPU.", args="--nodes 1 --gpus-per-node 8")
J(65, "korgym-vllm-qwen14b-tp2", "multimodal-art-projection/KORGym", "game_lib/19-party_time/script/model.sh", "user", True, "accept", True,
  {"zero": 0, "model": "Qwen/Qwen2.5-14B-Instruct", "tp": 2, "pp": 1, "seq": 15000, "world": 2},
  "Same launcher for Qwen2.5-14B-Instruct with TP 2, PP 1 on GPUs 0,1 (given), max_model_len 15000. Works.",
  args="--nodes 1 --gpus-per-node 2")
# kmamine/herefanmi-redo (user)
J(66, "vllm-qwq32b-bnb4-tp2", "kmamine/herefanmi-redo", "dataset-regenerate/launch-vllm-server.sh", "user", True, "accept", True,
  {"zero": 0, "model": "unsloth/QwQ-32B-unsloth-bnb-4bit", "tp": 2, "pp": 1, "seq": 50000, "world": 2},
  "CUDA_VISIBLE_DEVICES=0,1 vllm serve unsloth/QwQ-32B-unsloth-bnb-4bit --quantization bitsandbytes --load-format bitsandbytes "
  "--tensor-parallel-size 2 --max-model-len 50000 --gpu-memory-utilization 0.75. A 4-bit 32B (~19 GB) over 2 GPUs leaves ample KV "
  "cache for 50K tokens; works (GPU type not stated).", args="--nodes 1 --gpus-per-node 2")
# Mikeriess/Synth_data (user)
J(67, "vllm-405b-fp8-tp8", "Mikeriess/Synth_data", "run_vllm.sh", "user", True, "accept", True,
  {"zero": 0, "model": "meta-llama/Llama-3.1-405B-Instruct-FP8", "tp": 8, "pp": 1, "seq": 131072, "world": 8},
  "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-405B-Instruct-FP8 --tensor-parallel-size 8 "
  "--gpu-memory-utilization 0.9 on one 8 x H100 node (given). FP8 405B is ~410 GB: ~51 GB per 80 GB GPU, leaving ~18 GiB per GPU "
  "for KV cache after activations; one 131072-token sequence (vLLM's default max-model-len, the model's context) needs 126 layers "
  "x 1 KV head per GPU x 128 x 2 x 2 B = 63 KiB/token = 8 GiB per GPU, so vLLM starts. Meta's reference deployment; works.",
  args="--gpu h100 --nodes 1 --gpus-per-node 8")
# eth-easl/fmengine (lab framework)
J(68, "fmengine-openllama3b-mp4", "eth-easl/fmengine", "scripts/finetune/finetune_llama_3b.sh", "framework", True, "warn", True,
  {"tp": 4, "pp": 1, "seq": 2048, "world": 4},
  "torchrun --nnodes 1 --nproc-per-node 4 cli/train.py (fmengine's DeepSpeed-based trainer) --init_ckpt /pretrained/open_llama_3b_mp4 "
  "--max_seq_len 2048 --pipe_parallel_size 1 --model_parallel_size 4 --deepspeed_config ./configs/llama_lessmem.json (ships). "
  "OpenLLaMA-3B (32 heads) with TP 4 on 4 GPUs; works. fmengine's flags and a local checkpoint: the reader should say what it "
  "cannot follow.", args="--nodes 1 --gpus-per-node 4",
  extras=[("configs/llama_lessmem.json", "configs/llama_lessmem.json")])
# InternLM/InternEvo-HFModels (framework)
J(69, "internevo-llama2-7b-srun", "InternLM/InternEvo-HFModels", "examples/meta_llama/Llama_2_7b_hf/train.sh", "framework", True, "warn", True,
  {"world": 8},
  "From the repo root, with PARTITION and GPU_NUMS=8 exported: srun -p $PARTITION -N 1 -n 8 --ntasks-per-node=8 --gpus-per-task=1 "
  "python .../train.py --config .../config.py. The model and parallel layout are in InternEvo's Python config (ships), which the "
  "reader cannot evaluate; Llama-2-7B on 8 GPUs works.",
  extras=[("examples/meta_llama/Llama_2_7b_hf/config.py", "examples/meta_llama/Llama_2_7b_hf/config.py")])
J(70, "internevo-qwen2-7b-srun", "InternLM/InternEvo-HFModels", "examples/Qwen/Qwen2_7B/train.sh", "framework", True, "warn", True,
  {"world": 8},
  "Same srun launcher for Qwen2-7B with its Python config (ships). Works; the config is Python.",
  extras=[("examples/Qwen/Qwen2_7B/config.py", "examples/Qwen/Qwen2_7B/config.py")])
# RUCAIBox/LLMBox (lab)
J(71, "llmbox-llama2-7b-zero3", "RUCAIBox/LLMBox", "sft/bash/run_7b_ds3.sh", "user", True, "accept", True,
  {"model": "meta-llama/Llama-2-7b-hf", "tp": 1, "pp": 1, "zero": 3, "mbs": 8, "gbs": 128, "world": 8},
  "From sft/: torchrun --nproc_per_node=8 train.py (HF Trainer flags) --model_name_or_path meta-llama/Llama-2-7b-hf, mbs 8, GAS 2, "
  "--deepspeed configs/ds_z3_bf16.json (ships, ZeRO-3). 8 GPUs of one node (CUDA_VISIBLE_DEVICES=0..7). 7B ZeRO-3 on 8 x 80 GB; "
  "works (sequence length is the program's default).", args="--gpu a100-80gb --nodes 1 --gpus-per-node 8",
  extras=[("sft/configs/ds_z3_bf16.json", "configs/ds_z3_bf16.json")])
# sotopia-lab/sotopia-rl (lab)
J(72, "sotopia-accelerate-5-of-7", "sotopia-lab/sotopia-rl", "scripts/train_sft.sh", "user", True, "warn", True,
  {"model": "Qwen/Qwen2.5-7B-Instruct", "world": 5},
  "From scripts/: CUDA_VISIBLE_DEVICES=0..6 (7 GPUs) accelerate launch --config_file ./accelerate_config_sft.yaml (ships: "
  "MULTI_GPU, num_processes 5) ./train_sft.py --model_name Qwen2.5-7B-Instruct --use_lora --max_length 4096 --train_batch_size 2 "
  "--accumulation_steps 8. Accelerate starts 5 processes on GPUs 0-4: two of the seven visible GPUs idle. Works, with a real "
  "waste to report; the trainer is the lab's own program.", args="--nodes 1 --gpus-per-node 7",
  extras=[("scripts/accelerate_config_sft.yaml", "accelerate_config_sft.yaml")])
