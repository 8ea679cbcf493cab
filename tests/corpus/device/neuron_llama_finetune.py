# Fine-tune a causal LM on Trainium with torch-neuronx; started from a GPU recipe.
import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401
from neuronx_distributed.parallel_layers import parallel_state
from torch.utils.data import DataLoader

os.environ["NEURON_CC_FLAGS"] = "--model-type=transformer"
os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("LOCAL_RANK", "0")  # real: PTL904


@dataclass
class RecipeConfig:
    lr: float = 3e-4
    steps: int = 1000
    device: str = "cuda"  # real: PTL901
    dist_backend: str = "xla"  # trap
    log_every: int = 10


class Finetuner:
    def __init__(self, cfg: RecipeConfig, model, dataset):
        self.cfg = cfg
        dist.init_process_group("nccl")  # real: PTL504
        parallel_state.initialize_model_parallel(tensor_model_parallel_size=8)
        self.device = xm.xla_device()
        self.model = model.to(self.device)
        self.loader = DataLoader(dataset, batch_size=8, pin_memory=torch.cuda.is_available())  # trap
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr)

    def _log(self, step, loss, started):
        if dist.get_backend() == "nccl":  # trap
            print("collectives over NCCL")
        torch.cuda.synchronize()  # real: PTL902
        elapsed = time.time() - started
        print(f"step {step} loss {loss.item():.3f} {elapsed:.1f}s (cuda-style timing)")  # trap
        print("peak MiB", torch.cuda.max_memory_allocated() // 2**20)  # real: PTL902

    def train(self):
        started = time.time()
        for step, batch in enumerate(self.loader):
            ids = batch["input_ids"].to(self.device)
            mask = batch["attention_mask"].cuda()  # real: PTL901
            with torch.autocast("xla", dtype=torch.bfloat16):  # trap
                loss = self.model(input_ids=ids, attention_mask=mask).loss
            loss.backward()
            xm.optimizer_step(self.opt)
            if step % self.cfg.log_every == 0:
                self._log(step, loss, started)

    def save(self, path):
        state = {k: v.to("cpu") for k, v in self.model.state_dict().items()}  # trap
        xm.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cuda:0")  # real: PTL901
        self.model.load_state_dict(state)
