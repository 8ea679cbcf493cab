"""Python analyses: platform guards, device values, traced regions and traced values."""
