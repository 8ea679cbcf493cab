// Two-stream pipeline: copy chunks host->device on one stream while the other scales,
// timed with events.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main() {
  const int n = 1 << 22, chunks = 4, c = n / chunks;
  float* h;
  float* d;
  CHECK(cudaMallocHost(&h, n * sizeof(float)));
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t s[2];
  for (auto& st : s) CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, s[0]));
  for (int k = 0; k < chunks; ++k) {
    cudaStream_t st = s[k % 2];
    CHECK(cudaMemcpyAsync(d + k * c, h + k * c, c * sizeof(float), cudaMemcpyHostToDevice, st));
    scale<<<(c + 255) / 256, 256, 0, st>>>(d + k * c, 2.0f, c);
    CHECK(cudaMemcpyAsync(h + k * c, d + k * c, c * sizeof(float), cudaMemcpyDeviceToHost, st));
  }
  CHECK(cudaEventRecord(stop, s[0]));
  CHECK(cudaDeviceSynchronize());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("%.3f ms\n", ms);
  for (auto& st : s) CHECK(cudaStreamDestroy(st));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFreeHost(h));
  CHECK(cudaFree(d));
  return 0;
}
