from datasets import load_dataset
from peft import LoraConfig, get_peft_model
from transformers import (AutoModelForCausalLM, AutoTokenizer, Trainer,
                          TrainingArguments, DataCollatorForLanguageModeling)

model_name = "meta-llama/Meta-Llama-3-8B"

tokenizer = AutoTokenizer.from_pretrained(model_name)
model = AutoModelForCausalLM.from_pretrained(model_name, device_map="auto",
                                             torch_dtype="auto")
model = get_peft_model(model, LoraConfig(r=8, lora_alpha=16, task_type="CAUSAL_LM"))

args = TrainingArguments(
    output_dir="ckpt",
    per_device_train_batch_size=4,
    gradient_accumulation_steps=4,
    bf16=True,
    save_strategy="steps", save_steps=250,
)
data = load_dataset("json", data_files="train.jsonl")["train"]
Trainer(model=model, args=args, train_dataset=data,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False)).train()
