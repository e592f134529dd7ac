from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, Trainer,
                          TrainingArguments)

CHECKPOINT = "bert-base-uncased"
tok = AutoTokenizer.from_pretrained(CHECKPOINT)
model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=2)

ds = load_dataset("imdb").map(lambda b: tok(b["text"], truncation=True), batched=True)
args = TrainingArguments("sentiment-out", per_device_train_batch_size=32, num_train_epochs=2,
                         fp16=True, eval_strategy="epoch")
Trainer(model=model, args=args, train_dataset=ds["train"], eval_dataset=ds["test"],
        processing_class=tok).train()
