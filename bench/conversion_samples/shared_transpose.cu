// Tiled transpose through padded shared memory, with device properties queried on the host.
#include <cuda_runtime.h>
#include <cstdio>

constexpr int TILE = 32;
constexpr int ROWS = 8;

__global__ void transpose(float* out, const float* in, int w, int h) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < w && y + j < h) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * w + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < h && y + j < w) out[(y + j) * h + x] = tile[threadIdx.x][threadIdx.y + j];
}

int launch(float* out, const float* in, int w, int h) {
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  printf("%s: %zu bytes shared per block\n", prop.name, prop.sharedMemPerBlock);
  dim3 grid((w + TILE - 1) / TILE, (h + TILE - 1) / TILE), block(TILE, ROWS);
  transpose<<<grid, block>>>(out, in, w, h);
  return cudaPeekAtLastError() == cudaSuccess ? 0 : 1;
}
