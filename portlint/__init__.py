"""portlint: find CUDA, Triton and Python constructs that will not port to ROCm, TPU,
Trainium or Gaudi, and say what to write instead."""

__version__ = "0.1.0"
