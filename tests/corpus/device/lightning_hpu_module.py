"""A LightningModule ported to Gaudi: the Trainer call still asks for GPUs."""
import lightning as L
import torch
import torch.nn.functional as F
from lightning_habana.pytorch.accelerator import HPUAccelerator
from lightning.pytorch.strategies import DDPStrategy


class Classifier(L.LightningModule):
    def __init__(self, dim=784, classes=10):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(dim, 256), torch.nn.ReLU(), torch.nn.Linear(256, classes))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x.view(x.size(0), -1)), y)
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_end(self):
        if self.device.type == "cuda":  # trap
            self.log("mem", torch.cuda.max_memory_allocated() / 1e9)  # trap

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def build_trainer(devices: int = 8):
    return L.Trainer(
        accelerator="gpu",  # real: PTL905
        devices=devices,
        precision="16-mixed",  # real: PTL906
        strategy=DDPStrategy(process_group_backend="nccl"),  # real: PTL504
        max_epochs=3,
    )


def build_hpu_trainer(devices: int = 8):
    return L.Trainer(
        accelerator=HPUAccelerator(),  # trap
        devices=devices,
        precision="bf16-mixed",  # trap
        strategy=DDPStrategy(process_group_backend="hccl"),  # trap
    )


def export(model: Classifier, path: str):
    model = model.half()  # real: PTL906
    torch.save(model.state_dict(), path)
