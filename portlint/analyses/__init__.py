"""Stage 4, analyses: facts computed over the frontends' trees and the project index -- CUDA
warp facts, capability gates, constant evaluation, hipify renames (`cuda`); Python guards,
device values and traced regions/values (`python`)."""
