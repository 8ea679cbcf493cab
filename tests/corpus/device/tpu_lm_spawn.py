"""Language-model pretraining on a TPU pod slice via xmp.spawn."""
import argparse
import math

import torch
import torch.nn as nn
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr


def get_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="nccl")  # real: PTL504
    ap.add_argument("--device", default="xla")  # trap
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--cuda", action="store_true", help="run on a GPU instead")  # trap
    return ap.parse_args()


class TinyLM(nn.Module):
    def __init__(self, vocab=32000, dim=512):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, x):
        h = self.emb(x)
        if h.is_cuda:  # trap
            torch.cuda.nvtx.range_push("fwd")  # trap
        return self.out(h)


def _mp_fn(index, args):
    torch.manual_seed(1234)
    torch.cuda.manual_seed_all(1234)  # trap
    device = torch_xla.device()
    if args.cuda:
        device = torch.device("cuda", index)  # trap
    model = TinyLM().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler()  # real: PTL906
    loader = pl.MpDeviceLoader(make_loader(), device)
    for step, (x, y) in enumerate(loader):
        with torch.autocast(device_type="cuda", dtype=torch.float16):  # real: PTL901, PTL906
            logits = model(x)
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        torch_xla.sync()
        if step % 50 == 0:
            ppl = math.exp(loss.item())
            xm.master_print(f"step {step} ppl {ppl:.2f} on {xr.global_ordinal()}")
            torch.cuda.empty_cache()  # trap


def make_loader():
    data = torch.randint(0, 32000, (64, 128))
    return torch.utils.data.DataLoader(list(zip(data, data)), batch_size=8)


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(get_args(),))
