// Histogram with shared-memory privatisation and atomics, plus an atomicCAS-based max on floats.
#include <cuda_runtime.h>

__device__ float atomic_max_float(float* addr, float value) {
  int* p = reinterpret_cast<int*>(addr);
  int old = *p, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= value) break;
    old = atomicCAS(p, assumed, __float_as_int(value));
  } while (assumed != old);
  return __int_as_float(old);
}

__global__ void histogram(const unsigned char* data, int n, unsigned int* bins, float* vmax) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    atomicAdd(&local[data[i]], 1u);
    atomic_max_float(vmax, static_cast<float>(data[i]));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

void run(const unsigned char* d, int n, unsigned int* bins, float* vmax, cudaStream_t s) {
  cudaMemsetAsync(bins, 0, 256 * sizeof(unsigned int), s);
  histogram<<<128, 256, 0, s>>>(d, n, bins, vmax);
}
