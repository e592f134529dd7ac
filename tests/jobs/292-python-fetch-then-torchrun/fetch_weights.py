# Download the base model once, before the ranks start.
from transformers import AutoModelForCausalLM, AutoTokenizer

NAME = "meta-llama/Meta-Llama-3-70B"
AutoTokenizer.from_pretrained(NAME).save_pretrained("/scratch/base")
AutoModelForCausalLM.from_pretrained(NAME, torch_dtype="bfloat16").save_pretrained("/scratch/base")
