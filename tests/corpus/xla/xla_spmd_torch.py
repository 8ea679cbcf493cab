import numpy as np
import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.spmd as xs
from tqdm import tqdm


def shard_model(model, mesh):
    for name, p in model.named_parameters():
        if p.dim() == 2:  # trap
            xs.mark_sharding(p, mesh, ("data", None))
    return model


def train(model, loader, optimizer, mesh, max_steps):
    device = torch_xla.device()
    bar = tqdm(loader)
    for step, batch in enumerate(bar):
        with torch_xla.step():
            input_ids = batch["input_ids"].to(device)
            xs.mark_sharding(input_ids, mesh, ("data", None))
            out = model(input_ids, labels=input_ids)
            out.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        bar.set_postfix(loss=out.loss.item())  # real: PTL803
        if step >= max_steps:  # trap
            break
        if torch.isnan(out.loss).any():  # real: PTL801
            raise RuntimeError("nan loss")
    return model


def compute_metrics(model, loader):
    device = torch_xla.device()
    losses = []
    for batch in loader:
        out = model(batch["input_ids"].to(device))
        losses.append(out.loss.detach())
        torch_xla.sync()
    stacked = torch.stack(losses)
    return float(stacked.mean().cpu())  # trap


def greedy_decode(model, ids, steps, eos):
    device = torch_xla.device()
    ids = ids.to(device)
    for _ in range(steps):
        logits = model(ids).logits[:, -1]
        nxt = logits.argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
        xm.mark_step()
        if nxt.item() == eos:  # real: PTL803
            break
    return ids


def to_numpy(t):
    return np.asarray(t.cpu())  # trap
