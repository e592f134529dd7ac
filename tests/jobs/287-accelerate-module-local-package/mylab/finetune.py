from dataclasses import dataclass, field
from typing import Optional

from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments


@dataclass
class LabArgs:
    model_id: Optional[str] = field(default="meta-llama/Llama-3.1-8B",
                                    metadata={"help": "Hub id or path"})
    block_size: int = 2048
    micro_batch: int = 2


def main():
    (lab,) = HfArgumentParser(LabArgs).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(lab.model_id, attn_implementation="flash_attention_2")
    targs = TrainingArguments(
        output_dir="runs/" + lab.model_id.split("/")[-1],
        per_device_train_batch_size=lab.micro_batch,
        gradient_accumulation_steps=8,
        bf16=True,
        gradient_checkpointing=True,
        fsdp="full_shard auto_wrap",
        save_strategy="steps",
        save_steps=500,
    )
    Trainer(model=model, args=targs).train()


if __name__ == "__main__":
    main()
