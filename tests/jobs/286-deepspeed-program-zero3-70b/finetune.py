#!/usr/bin/env python
"""Full-parameter fine-tuning with the HF Trainer and DeepSpeed ZeRO-3."""
import argparse

from transformers import AutoModelForCausalLM, Trainer, TrainingArguments


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=str, default="meta-llama/Meta-Llama-3-8B")
    ap.add_argument("--seq-len", dest="seq_len", type=int, default=2048)
    ap.add_argument("--local_rank", type=int, default=-1)
    return ap.parse_args()


args = get_args()
model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype="bfloat16")
training_args = TrainingArguments(
    output_dir="./out",
    deepspeed="ds_zero3.json",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=16,
    gradient_checkpointing=True,
    bf16=True,
    save_steps=100,
)
trainer = Trainer(model=model, args=training_args, train_dataset=load(args.seq_len))
trainer.train()
