import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.runtime as xr
from torch.utils.data import DataLoader, DistributedSampler


class TinyTransformer(nn.Module):
    def __init__(self, vocab, dim, depth, causal=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(dim, 4, batch_first=True) for _ in range(depth)])
        self.head = nn.Linear(dim, vocab)
        self.causal = causal

    def forward(self, ids, attention_mask=None):
        h = self.embed(ids)
        seq = ids.size(1)  # trap
        mask = None
        if self.causal:  # trap
            mask = torch.triu(torch.full((seq, seq), float("-inf"), device=ids.device), diagonal=1)
        for block in self.blocks:  # trap
            h = block(h, src_mask=mask)
        if attention_mask is not None:  # trap
            h = h * attention_mask.unsqueeze(-1)
        if attention_mask is not None and attention_mask.sum() == 0:  # real: PTL801
            return self.head(h) * 0
        return self.head(h)


def make_loader(dataset, batch_size, world):
    sampler = DistributedSampler(dataset, num_replicas=world, rank=xr.global_ordinal(), shuffle=True)
    return DataLoader(dataset, batch_size=batch_size, sampler=sampler, num_workers=4)  # real: PTL805


def train_loop_fn(model, loader, optimizer, scheduler, args):
    model.train()
    tracker = xm.RateTracker()
    for step, batch in enumerate(loader):  # trap
        ids = batch["input_ids"]
        labels = batch["labels"]
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
        optimizer.zero_grad()
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        if math.isfinite(grad_norm):  # real: PTL803
            xm.optimizer_step(optimizer)
        scheduler.step()
        tracker.add(args.batch_size)
        valid_tokens = labels[labels != -100]  # real: PTL804
        tokens_seen = valid_tokens.numel()
        if step % args.log_steps == 0:  # trap
            xm.master_print(f"step {step} loss {loss.item():.3f} rate {tracker.rate():.1f}")  # trap
        lr_now = scheduler.get_last_lr()[0]  # trap
    return tokens_seen, lr_now


def eval_loop_fn(model, loader):
    model.eval()
    total, correct = 0, 0
    for batch in loader:
        logits = model(batch["input_ids"])
        correct += (logits.argmax(-1) == batch["labels"]).sum().item()  # trap
        total += batch["labels"].numel()
    return correct / max(total, 1)


def main(args, model, dataset, eval_dataset):
    device = xm.xla_device()
    model = model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.steps)
    train_loader = make_loader(dataset, args.batch_size, xr.world_size())
    eval_loader = DataLoader(eval_dataset, batch_size=args.batch_size)  # trap
    for epoch in range(args.epochs):
        start = time.time()
        para_loader = pl.MpDeviceLoader(train_loader, device)
        train_loop_fn(model, para_loader, optimizer, scheduler, args)
        acc = eval_loop_fn(model, pl.MpDeviceLoader(eval_loader, device))
        xm.master_print(f"epoch {epoch} acc {acc:.3f} time {time.time() - start:.0f}s")  # trap
