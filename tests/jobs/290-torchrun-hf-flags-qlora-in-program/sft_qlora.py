from dataclasses import dataclass, field

import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import (AutoModelForCausalLM, BitsAndBytesConfig, HfArgumentParser,
                          Trainer, TrainingArguments)


@dataclass
class ModelArguments:
    model_name_or_path: str = field(metadata={"help": "base model"})
    lora_rank: int = field(default=64)


model_args, training_args = HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()

quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                           bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path,
                                             quantization_config=quant)
model = prepare_model_for_kbit_training(model)
model = get_peft_model(model, LoraConfig(r=model_args.lora_rank, lora_alpha=16,
                                         task_type="CAUSAL_LM"))
Trainer(model=model, args=training_args).train()
