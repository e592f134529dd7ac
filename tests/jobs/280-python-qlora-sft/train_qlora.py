"""QLoRA supervised fine-tuning on one GPU (written for advisor's corpus)."""
import argparse

import torch
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig
from trl import SFTConfig, SFTTrainer

BASE = "meta-llama/Meta-Llama-3-70B"   # the model we adapt

parser = argparse.ArgumentParser(description="qlora sft")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--data", default="my-org/support-chats")
args = parser.parse_args()

bnb = BitsAndBytesConfig(
    load_in_4bit=True,
    bnb_4bit_quant_type="nf4",
    bnb_4bit_compute_dtype=torch.bfloat16,
)
tokenizer = AutoTokenizer.from_pretrained(BASE)
model = AutoModelForCausalLM.from_pretrained(
    BASE,
    quantization_config=bnb,
    torch_dtype=torch.bfloat16,
    attn_implementation="sdpa",
)

lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05, task_type="CAUSAL_LM",
                  target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])

config = SFTConfig(
    output_dir="out/qlora-70b",
    num_train_epochs=args.epochs,
    per_device_train_batch_size=2,
    gradient_accumulation_steps=8,   # 16 sequences a step
    gradient_checkpointing=True,
    bf16=True,
    max_seq_length=2048,
    save_steps=200,
    logging_steps=10,
)
trainer = SFTTrainer(model=model, args=config, peft_config=lora,
                     train_dataset=load_dataset(args.data, split="train"),
                     processing_class=tokenizer)
trainer.train()
