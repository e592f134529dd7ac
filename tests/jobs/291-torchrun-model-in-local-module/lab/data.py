from datasets import load_dataset


def load(split):
    return load_dataset("json", data_files=f"data/{split}.jsonl")["train"]
