"""CUDA/C++ analysis shared by the CUDA rule families: parsing, preprocessor guards,
execution spaces."""
