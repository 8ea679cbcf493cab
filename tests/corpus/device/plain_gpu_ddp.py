# Plain multi-GPU DDP script. It never targets TPU/Trainium/Gaudi: nothing here is a finding.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0,1,2,3")  # trap
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"  # trap
torch.backends.cuda.matmul.allow_tf32 = True  # trap
torch.backends.cudnn.benchmark = True  # trap


def setup():
    if not torch.cuda.is_available():  # trap
        raise RuntimeError("GPU required")
    dist.init_process_group(backend="nccl")  # trap
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)  # trap
    return torch.device(f"cuda:{local_rank}")  # trap


def main():
    device = setup()
    model = DDP(nn.Linear(1024, 1024).cuda(), device_ids=[device.index])  # trap
    scaler = torch.cuda.amp.GradScaler()  # trap
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(10):
        x = torch.randn(32, 1024, device="cuda")  # trap
        with torch.autocast("cuda", dtype=torch.float16):  # trap
            loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    torch.cuda.synchronize()  # trap
    print(torch.cuda.max_memory_allocated() / 2**30, "GiB")  # trap
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
