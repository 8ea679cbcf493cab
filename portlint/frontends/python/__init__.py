"""Python analysis shared by the Python rule families (traced regions, guards, imports)."""
