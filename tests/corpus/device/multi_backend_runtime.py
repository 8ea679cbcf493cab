"""Device plumbing of a library that supports CUDA, ROCm, TPU (torch_xla) and Gaudi."""
import logging
import os

import torch

logger = logging.getLogger(__name__)

try:
    import torch_xla.core.xla_model as xm
    _XLA = True
except ImportError:
    _XLA = False


def is_hpu_available() -> bool:
    return hasattr(torch, "hpu") and torch.hpu.is_available()


def current_device() -> torch.device:
    if _XLA:
        return xm.xla_device()
    if is_hpu_available():
        return torch.device("hpu")
    if torch.cuda.is_available():  # trap
        return torch.device("cuda", torch.cuda.current_device())  # trap
    return torch.device("cpu")


def synchronize(device: torch.device) -> None:
    if device.type == "xla":
        xm.wait_device_ops()
    elif device.type == "hpu":
        torch.hpu.synchronize()
    elif device.type == "cuda":
        torch.cuda.synchronize(device)  # trap


def memory_in_use(device: torch.device) -> int:
    if device.type != "cuda":
        return 0
    return torch.cuda.memory_allocated(device)  # trap


def dist_backend(device: torch.device) -> str:
    return {"cuda": "nccl", "hpu": "hccl", "xla": "xla"}.get(device.type, "gloo")  # trap


def amp_dtype(device: torch.device) -> torch.dtype:
    return torch.float16 if device.type == "cuda" else torch.bfloat16  # trap


def maybe_scaler(device: torch.device):
    if device.type == "cuda" and amp_dtype(device) == torch.float16:
        return torch.amp.GradScaler("cuda")  # trap
    return None


def describe(device: torch.device) -> str:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type  # trap
    return f"running on {name}; set CUDA_VISIBLE_DEVICES to restrict GPUs"  # trap


def pin(device: torch.device) -> bool:
    return device.type == "cuda" and not os.environ.get("NO_PIN")


def legacy_scalar_broadcast(value: float) -> torch.Tensor:
    # used by the old evaluation loop on every device
    return torch.tensor([value], device=torch.device("cuda"))  # real: PTL901


def seed_everything(seed: int, device: torch.device) -> None:
    torch.manual_seed(seed)
    if device.type == "cuda":
        torch.backends.cudnn.deterministic = True  # trap
    torch.cuda.manual_seed_all(seed)  # trap
