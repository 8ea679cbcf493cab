// Host memory management: managed memory and its pointer attributes, 2D pitched copies, a memset
// and device synchronisation with error strings.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void touch(float* p, size_t pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < w && y < h) {
    float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(p) + y * pitch);
    row[x] += 1.0f;
  }
}

int main() {
  int w = 1000, h = 64;
  float* managed = nullptr;
  cudaMallocManaged(&managed, w * h * sizeof(float));
  cudaPointerAttributes attr;
  cudaPointerGetAttributes(&attr, managed);
  float* pitched = nullptr;
  size_t pitch = 0;
  cudaMallocPitch(reinterpret_cast<void**>(&pitched), &pitch, w * sizeof(float), h);
  cudaMemset2D(pitched, pitch, 0, w * sizeof(float), h);
  cudaMemcpy2D(pitched, pitch, managed, w * sizeof(float), w * sizeof(float), h, cudaMemcpyDefault);
  touch<<<dim3((w + 127) / 128, h), 128>>>(pitched, pitch, w, h);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) printf("error: %s (%s)\n", cudaGetErrorString(err), cudaGetErrorName(err));
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  cudaFree(pitched);
  cudaFree(managed);
  cudaDeviceReset();
  return 0;
}
