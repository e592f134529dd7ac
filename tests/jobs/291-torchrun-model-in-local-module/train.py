"""Entry point: data and trainer.  The model comes from lab/modeling.py."""
from transformers import Trainer, TrainingArguments

from lab.modeling import load_model
from lab import data

model = load_model()
args = TrainingArguments(
    output_dir="runs/lab-sft",
    per_device_train_batch_size=4,
    gradient_accumulation_steps=2,
    bf16=True,
    gradient_checkpointing=True,
    save_steps=1000,
)
Trainer(model=model, args=args, train_dataset=data.load("train")).train()
