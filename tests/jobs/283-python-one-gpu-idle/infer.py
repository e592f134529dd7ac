import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_ID = 'meta-llama/Llama-3.1-8B'
tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
model = AutoModelForCausalLM.from_pretrained(MODEL_ID, torch_dtype=torch.bfloat16)
model = model.to("cuda")

for question in open("questions.txt"):
    batch = tokenizer(question.strip(), return_tensors="pt").to("cuda")
    print(tokenizer.decode(model.generate(**batch, max_new_tokens=256)[0]))
