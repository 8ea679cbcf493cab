"""CUDA analyses: warp facts, capability gates, constants, hipify renames."""
