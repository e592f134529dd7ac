# Zeldrizz/EmpathyLLM-Finetuning-RU-FEELIX (user)
J(15, "feelix-torchrun-main-py", "Zeldrizz/EmpathyLLM-Finetuning-RU-FEELIX", "llama-3.1-8b-finetunes/llama-3.1-8b-ep10-STCD-PSYCH/script.sh", "user", True, "warn", True,
  {"world": 2},
  "torchrun --nproc_per_node=2 main.py on 2 GPUs (--gpus=2). main.py (a Python program, not a config) LoRA-fine-tunes Llama-3.1-8B "
  "(mbs 1, GAS 2, max_seq_length 1024). Works (results committed). Nothing about the model or sizes is in the script: the reader "
  "must say it could not read the program.")
J(16, "feelix-run-model-py", "Zeldrizz/EmpathyLLM-Finetuning-RU-FEELIX", "llama-3.1-8b-finetunes/llama-3.1-8b-ep10-STCD-PSYCH/run_model_script.sh", "user", True, "warn", True,
  {"world": 1},
  "python run_model.py on one GPU: generation with the fine-tuned 8B (responses.txt committed). Works; model and sizes only in the program.")
# icip-cas/AutoAlign (lab)
J(17, "autoalign-dpo-qwen7b", "icip-cas/AutoAlign", "scripts/train/dpo_qwen2_5_7b_dummy.sh", "user", True, "warn", True,
  {"model": "Qwen/Qwen2.5-7B-Instruct", "tp": 1, "pp": 1, "zero": 3, "mbs": 2, "world": 8},
  "1 node, 8 A800 (-p a800, --gres=gpu:8); exports MODEL_PATH=/mnt/.../Qwen2.5-7B-Instruct, TRAIN_BATCH_SIZE=2, GA=4 then "
  "bash ./scripts/train_dpo.sh -> autoalign-cli dpo (HF-style flags, --deepspeed configs/zero3.json, bf16). 7B DPO with ZeRO-3 on "
  "8 x 80GB works. autoalign-cli starts its own processes (how many is the CLI's business), so the reader cannot follow the "
  "launch and should say so.", args="--gpu a100-80gb",
  extras=[("scripts/train_dpo.sh", "scripts/train_dpo.sh"), ("configs/zero3.json", "configs/zero3.json")])
J(18, "autoalign-sft-qwen3-zero2", "icip-cas/AutoAlign", "scripts/train/sft_qwen-3-1.7b_infinite_7m_deespeed.sh", "user", True, "warn", True,
  {"model": "Qwen/Qwen3-1.7B", "tp": 1, "pp": 1, "zero": 2, "seq": 4096, "mbs": 4, "world": 8},
  "As the DPO job: autoalign-cli sft of Qwen3-1.7B with ZeRO-2 (configs/zero2.json), mbs 4, GA 8, model_max_length 4096 (script "
  "default), packing, on 8 A800. Works; launcher is autoalign-cli.", args="--gpu a100-80gb",
  extras=[("scripts/train_sft.sh", "scripts/train_sft.sh"), ("configs/zero2.json", "configs/zero2.json")])
# lucedes27/balance-budget (user)
J(19, "balance-sft-python", "lucedes27/balance-budget", "tuning/slurm/sft_training.sh", "user", True, "warn", True,
  {"world": 1},
  "python tuning/training/sft_training.py on one H100 (partition gpubase_h100_b3). All sizes in the program. Works (used for the "
  "paper); the reader must say it could not read it.")
J(20, "balance-dpo-positional", "lucedes27/balance-budget", "tuning/slurm/run_dpo.sh", "user", True, "warn", True,
  {"world": 1},
  "python tuning/run_dpo.py with model, dataset, sizes as positional arguments $1..$7 (none given here), one GPU. Whatever model "
  "is passed, the job's own program decides; nothing to prove. Must say it could not check.")
J(21, "balance-ifeval-inference", "lucedes27/balance-budget", "tuning/slurm/ifeval_inference.sh", "user", True, "warn", True,
  {"world": 1},
  "python tuning/inference/ifeval_inference.py (evaluation with an 8B model per the repo) on one GPU. Works; program not readable.")
# esteng/persuasion_balanced_training (lab)
J(22, "pbt-sft-70b-3gpu-lora8bit", "esteng/persuasion_balanced_training", "slurm_scripts/sft/sft_70b_limited.sh", "user", True, "warn", True,
  {"model": "meta-llama/Meta-Llama-3.1-70B-Instruct", "mbs": 6, "seq": 1000, "gbs": 78, "world": 3},
  "One python process (train_dialogue.py) on 3 GPUs of one node for Llama-3.1-70B: the program loads the model in 8-bit with "
  "device_map=auto and trains a LoRA adapter (peft LoraConfig), mbs 6, GAS 13, max_length 1000, 240 steps. Works (paper's model). "
  "A reader that assumes full fine-tuning of 70B on 3 GPUs would reject a working job; the right answer is that it cannot follow "
  "the program (warn).")
J(23, "pbt-sft-8b-1gpu", "esteng/persuasion_balanced_training", "slurm_scripts/sft/sft_llama_limited.sh", "user", True, "warn", True,
  {"model": "meta-llama/Meta-Llama-3.1-8B-Instruct", "mbs": 8, "seq": 1000, "world": 1},
  "Same program for Llama-3.1-8B on one GPU (8-bit + LoRA in the program), mbs 8, max_length 1000. Works; program not readable.")
J(24, "pbt-eval-70b-3gpu", "esteng/persuasion_balanced_training", "slurm_scripts/eval/eval_flipflop_70b.sh", "user", True, "warn", True,
  {"world": 3},
  "python flipflop_eval.py --model ${MODEL} (unset in the script) on 3 GPUs: evaluation, model from the environment. Works for the "
  "authors; the reader cannot know the model or the program.")
# Tatsu1020/ucllm_nedo_prod_reproduce (user)
J(25, "ucllm-megads-gpt125m-2node", "Tatsu1020/ucllm_nedo_prod_reproduce", "train/scripts/step2_pretrain_model/gcp_node-2_gpu/dataset-arxiv_tokenizer-sentencepiece_model-gpt_0.125B/zero-0_dp-1_pp-1_tp-1_flashattn2-on_sbatch.sh", "user", True, "accept", True,
  {"model": "inline", "tp": 1, "pp": 1, "zero": 1, "seq": 2048, "mbs": 1, "gbs": 256, "world": 16},
  "Megatron-DeepSpeed pretrain_gpt.py started by the deepspeed launcher with a hostfile written from the Slurm node list "
  "(2 nodes x 8 GPUs): GPT 125M (12 layers, hidden 768, 12 heads), seq 2048, GBS 256, mbs 1, TP1 PP1, ZeRO-1. A tiny model; works. "
  "Requires --input_tokenizer_file and --output_model_dir (given as script arguments).",
  args="-- --input_tokenizer_file botchan.model --output_model_dir out")
J(26, "ucllm-wrapper-home-path", "Tatsu1020/ucllm_nedo_prod_reproduce", "train/scripts/step2_pretrain_model/jobs/pretrain_mistral.sh", "user", True, "warn", True,
  {"world": 4},
  "1 node x 4 GPUs; bash ~/ucllm_nedo_prod_reproduce/.../pretrain_mistral.sh with arguments: the real launcher is under $HOME, "
  "outside the job directory. A 0.125B-class Mistral pretraining (works for the author); the reader cannot see the trainer.")
