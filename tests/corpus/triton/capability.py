import functools

import torch


@functools.cache
def device_caps():
    major, minor = torch.cuda.get_device_capability()
    sm = major * 10 + minor
    return {
        "fa3": sm >= 90,  # real: PTL310
        "fp8": sm >= 89,  # trap
        "bf16": major >= 8,  # trap
        "blackwell": sm == 100,  # trap
    }


class KernelSelector:
    def __init__(self, device=0):
        self.cap = torch.cuda.get_device_capability(device)
        self.is_rocm = torch.version.hip is not None

    def use_wgmma(self):
        return self.cap[0] >= 9  # real: PTL310

    def use_wgmma_checked(self):
        return not self.is_rocm and self.cap[0] >= 9  # trap

    def use_cutlass3(self):
        if self.is_rocm:
            return False
        return self.cap >= (9, 0)  # trap


def supports_tma(device=None):
    props = torch.cuda.get_device_properties(device)
    return props.major >= 9  # real: PTL310


def is_hopper():
    return torch.cuda.get_device_capability() == (9, 0)  # real: PTL310


def is_datacenter_blackwell():
    # only RDNA2 (gfx1030, reported as (10, 3)) passes this; RDNA2 is outside PTL310's GPU table
    return torch.cuda.get_device_capability()[0] == 10  # trap


def needs_old_path():
    return torch.cuda.get_device_capability() < (9, 0)  # real: PTL310


def amd_mi300():
    props = torch.cuda.get_device_properties(0)
    return torch.version.hip is not None and "gfx94" in props.gcnArchName  # trap


def log_capability():
    cap = torch.cuda.get_device_capability()
    print(f"running on sm_{cap[0]}{cap[1]}")  # trap
    return cap
