import argparse

import habana_frameworks.torch.core as htcore
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3)
        self.fc = nn.Linear(16 * 26 * 26, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        if x.dim() != 4:  # trap
            raise ValueError("expected NCHW")
        return self.fc(x.flatten(1))


def train_one_epoch(model, loader, optimizer, device, log_interval):
    model.train()
    for batch_idx, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = nn.functional.nll_loss(output.log_softmax(-1), target)
        loss.backward()
        htcore.mark_step()
        optimizer.step()
        htcore.mark_step()
        if batch_idx % log_interval == 0:  # trap
            print(f"batch {batch_idx} loss {loss.item():.4f}")  # trap
        wrong = (output.argmax(1) != target).nonzero()  # real: PTL804
        if len(wrong) > 0:  # trap
            hard_examples = data[wrong.squeeze(1)]
    return hard_examples


def finetune_head(model, loader, optimizer, device):
    for data, target in loader:  # real: PTL806
        out = model(data.to(device))
        loss = nn.functional.cross_entropy(out, target.to(device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if loss.item() < 0.01:  # real: PTL803
            break
    return model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bf16", action="store_true")
    args = parser.parse_args()
    device = torch.device("hpu")
    model = Net().to(device)
    if not args.bf16:  # trap
        model = model.to(torch.float64)  # real: PTL809
    compiled = torch.compile(model, backend="hpu_backend")  # trap
    tuned = torch.compile(model, mode="reduce-overhead")  # real: PTL810
    loader = DataLoader(range(10), batch_size=4, shuffle=True, drop_last=False)  # trap
    return compiled, tuned, loader
