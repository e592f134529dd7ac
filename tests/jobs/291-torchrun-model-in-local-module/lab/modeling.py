import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

BASE_MODEL = "Qwen/Qwen2.5-7B"


def load_model():
    model = AutoModelForCausalLM.from_pretrained(BASE_MODEL, torch_dtype=torch.bfloat16)
    lora = LoraConfig(r=32, lora_alpha=64, target_modules="all-linear")
    return get_peft_model(model, lora)
