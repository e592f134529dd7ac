# Generate answers for a file of prompts, one process, every GPU of the node.
import json
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main(argv):
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Meta-Llama-3-70B")
    p.add_argument("--prompts", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--max-new-tokens", type=int, default=512)
    args = p.parse_args(argv)

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        device_map="auto",      # layers over all visible GPUs
        torch_dtype=torch.bfloat16,
    )
    model.eval()
    with open(args.prompts) as f, open(args.out, "w") as out:
        for line in f:
            prompt = json.loads(line)["prompt"]
            ids = tok(prompt, return_tensors="pt").to(model.device)
            gen = model.generate(**ids, max_new_tokens=args.max_new_tokens)
            out.write(json.dumps({"answer": tok.decode(gen[0])}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
