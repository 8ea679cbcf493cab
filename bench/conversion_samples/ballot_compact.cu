// Stream compaction inside a warp with __ballot_sync and __popc: the mask type is the
// 32-bit one CUDA returns.
#include <cuda_runtime.h>

__global__ void compact(const int* in, int* out, int* count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool keep = i < n && in[i] > 0;
  unsigned mask = __ballot_sync(0xffffffffu, keep);
  int lane = threadIdx.x & 31;
  int before = __popc(mask & ((1u << lane) - 1));
  int base = 0;
  if (lane == 0) base = atomicAdd(count, __popc(mask));
  base = __shfl_sync(0xffffffffu, base, 0);
  if (keep) out[base + before] = in[i];
}
