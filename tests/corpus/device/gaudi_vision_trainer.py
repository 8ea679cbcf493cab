# ResNet training moved to Intel Gaudi (HPU); lazy mode with mark_step.
import os

import habana_frameworks.torch.core as htcore
import torch
import torch.distributed as dist
import torchvision


class HpuTrainer:
    backend = "nccl"  # real: PTL504

    def __init__(self, world_size: int, rank: int):
        self.rank = rank
        os.environ.setdefault("MASTER_ADDR", "localhost")
        os.environ.setdefault("MASTER_PORT", "12355")
        dist.init_process_group(self.backend, rank=rank, world_size=world_size)
        self.device = torch.device("hpu")
        torch.backends.cudnn.benchmark = True  # real: PTL903
        self.model = torchvision.models.resnet50().to(self.device)
        self.model = torch.nn.parallel.DistributedDataParallel(self.model)
        self.crit = torch.nn.CrossEntropyLoss().cuda()  # real: PTL901
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def step(self, images, target):
        images = images.to(self.device, non_blocking=True)
        target = target.to("cuda", non_blocking=True)  # real: PTL901
        with torch.autocast(device_type="hpu", dtype=torch.bfloat16):  # trap
            loss = self.crit(self.model(images), target)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        htcore.mark_step()
        self.opt.step()
        htcore.mark_step()
        return loss

    def epoch_end(self):
        torch.hpu.synchronize()  # trap
        torch.cuda.reset_peak_memory_stats()  # real: PTL902
        if self.rank == 0:
            print("epoch done; cuda-era stats were reset")  # trap

    def teardown(self):
        if torch.cuda.is_available():  # trap
            torch.cuda.empty_cache()  # trap
        dist.destroy_process_group()
