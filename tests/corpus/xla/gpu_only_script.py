import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


def train(model, dataset, epochs=2):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torch.compile(model.to(device), mode="max-autotune")  # trap
    loader = DataLoader(dataset, batch_size=64, shuffle=True)  # trap
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:  # trap
            loss = F.cross_entropy(model(x.to(device)), y.to(device))
            if torch.isnan(loss):  # trap
                raise RuntimeError("nan")
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(loss.item(), y[y > 0].sum())  # trap
            weights = torch.zeros(3, dtype=torch.float64)  # trap
    return model
