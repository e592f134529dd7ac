from datasets import load_dataset
from peft import LoraConfig
from trl import DPOConfig, DPOTrainer

cfg = DPOConfig(
    output_dir="dpo-out",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=8,
    max_length=2048,
    bf16=True,
    gradient_checkpointing=True,
)
trainer = DPOTrainer(
    model="Qwen/Qwen2.5-7B",
    args=cfg,
    train_dataset=load_dataset("json", data_files="pairs.jsonl")["train"],
    peft_config=LoraConfig(r=16, lora_alpha=32),
)
trainer.train()
