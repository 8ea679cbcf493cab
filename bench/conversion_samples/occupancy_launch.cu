// Occupancy-driven launch: dynamic shared memory opt-in, an occupancy query, a grid-stride
// kernel launched through cudaLaunchKernel, timed on the default stream.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void relu_inplace(float* x, size_t n) {
  extern __shared__ float stage[];
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x) {
    stage[threadIdx.x] = x[i];
    x[i] = stage[threadIdx.x] > 0.f ? stage[threadIdx.x] : 0.f;
  }
}

int launch(float* x, size_t n) {
  const int threads = 256;
  size_t smem = threads * sizeof(float);
  cudaFuncSetAttribute(relu_inplace, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  int per_sm = 0, sms = 0, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, relu_inplace, threads, smem);
  dim3 grid(per_sm * sms), block(threads);
  void* args[] = {&x, &n};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  cudaError_t err = cudaLaunchKernel((const void*)relu_inplace, grid, block, args, smem, 0);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, a, b);
  printf("%d blocks, %.3f ms, %s\n", grid.x, ms, cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
