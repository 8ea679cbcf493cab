// Warp-level inclusive scan in shared memory ordered with __syncwarp, and a lane mask
// built from __activemask.
#include <cuda_runtime.h>

__global__ void warp_scan(int* data) {
  __shared__ int buf[256];
  int t = threadIdx.x;
  int lane = t % 32;
  buf[t] = data[blockIdx.x * blockDim.x + t];
  __syncwarp();
  for (int d = 1; d < 32; d <<= 1) {
    int v = lane >= d ? buf[t - d] : 0;
    __syncwarp();
    buf[t] += v;
    __syncwarp();
  }
  unsigned active = __activemask();
  if (active == 0xffffffffu) data[blockIdx.x * blockDim.x + t] = buf[t];
}
