"""Detectors: one module per rule family, named after its folder under `rules/`."""
