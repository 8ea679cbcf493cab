import os

import torch
import torch_xla.core.xla_model as xm
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer"


def collate(tokenizer):
    def fn(examples):
        texts = [e["text"] for e in examples]
        enc = tokenizer(texts, padding="longest", truncation=True, return_tensors="pt")  # real: PTL805
        enc["labels"] = torch.tensor([e["label"] for e in examples])
        return enc

    return fn


def collate_fixed(tokenizer, max_len):
    def fn(examples):
        enc = tokenizer([e["text"] for e in examples], padding="max_length", max_length=max_len, truncation=True, return_tensors="pt")  # trap
        enc["labels"] = torch.tensor([e["label"] for e in examples])
        return enc

    return fn


def finetune(model_name, train_ds, epochs=3, batch_size=8, grad_accum=4):
    device = xm.xla_device()
    tokenizer = AutoTokenizer.from_pretrained(model_name)
    model = AutoModelForSequenceClassification.from_pretrained(model_name).to(device)
    loader = DataLoader(train_ds, batch_size=batch_size, shuffle=True, drop_last=True, collate_fn=collate(tokenizer))  # trap
    optimizer = AdamW(model.parameters(), lr=2e-5)
    scheduler = get_linear_schedule_with_warmup(optimizer, 100, len(loader) * epochs)
    best = float("inf")
    for epoch in range(epochs):  # trap
        epoch_loss = torch.zeros((), device=device)
        for step, batch in enumerate(loader):  # real: PTL806
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            loss = outputs.loss / grad_accum
            loss.backward()
            if (step + 1) % grad_accum == 0:  # trap
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            epoch_loss += loss.detach()
            if outputs.loss < best:  # real: PTL801
                best = outputs.loss
            preds = outputs.logits.argmax(-1).cpu().numpy()  # real: PTL803
        xm.master_print(f"epoch {epoch} loss {epoch_loss.item():.4f}")  # trap
    return model, preds


def pad_batch(seqs, pad_id):
    longest = max(len(s) for s in seqs)  # trap
    return torch.tensor([s + [pad_id] * (longest - len(s)) for s in seqs])
