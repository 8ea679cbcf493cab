"""Stage 2, frontends: each reads one kind of input into trees and plain records -- CUDA/C++
(`cuda`: parse, preprocessor, include graph, #if guards, symbols), PTX (`ptx`), Python
(`python`: AST index, import names), and build and dependency files (`buildfiles`)."""
