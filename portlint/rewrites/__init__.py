"""Code generation for suggestions: kernels and skeletons a finding offers as a starting
point for the port (Pallas and NKI from Triton, `portlint skeleton`). Nothing here analyses
a file for findings; the detectors call in when they have one."""
