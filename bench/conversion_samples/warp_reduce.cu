// Block sum with warp shuffles: each warp reduces with __shfl_down_sync, lane 0 of
// every warp writes its partial to shared memory, the first warp reduces the partials.
#include <cuda_runtime.h>
#include <cstdio>

__inline__ __device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}

__global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float partial[32];
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float v = tid < n ? in[tid] : 0.0f;
  v = warp_sum(v);
  int lane = threadIdx.x % 32;
  int warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x + 31) / 32 ? partial[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

int main() {
  const int n = 1 << 20;
  float *d_in, *d_out;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, sizeof(float));
  cudaMemset(d_out, 0, sizeof(float));
  block_sum<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) printf("%s\n", cudaGetErrorString(err));
  float h = 0;
  cudaMemcpy(&h, d_out, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  return 0;
}
