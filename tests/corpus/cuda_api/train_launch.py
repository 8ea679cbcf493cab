"""Distributed launcher: environment set before torch.distributed starts."""
import os

def configure(use_nvls: bool) -> None:
    os.environ["NCCL_DEBUG"] = "WARN"  # trap
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")  # trap
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"  # real: PTL505
    if use_nvls:
        os.environ["NCCL_NVLS_ENABLE"] = "1"  # real: PTL505
    os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"  # trap
    print(os.environ.get("NCCL_COLLNET_ENABLE"))  # trap
