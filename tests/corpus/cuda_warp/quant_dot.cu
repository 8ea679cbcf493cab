// Quantized matrix-vector product in the llama.cpp style: a logical 32-lane warp used on
// purpose (every shuffle passes the width), blocks of 32 quantized values, and a few kernels
// written before the HIP port.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>

#define WARP_SIZE 32  // trap
#define QK8_0 32  // trap
#define CUDA_DMMV_X 32  // trap

typedef struct {
  half d;
  int8_t qs[QK8_0];  // trap
} block_q8_0;

template <int width = WARP_SIZE>
static __device__ __forceinline__ float warp_reduce_sum(float x) {
#pragma unroll
  for (int offset = width / 2; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffff, x, offset, width);  // real: PTL104
  return x;
}

static __device__ __forceinline__ int get_int_b2(const void* x, const int& i32) {
  const uint16_t* x16 = (const uint16_t*)x;
  int x32 = x16[2 * i32 + 0] << 0;  // trap
  x32 |= x16[2 * i32 + 1] << 16;  // trap
  return x32;
}

static __global__ void mul_mat_vec_q8_0(const void* __restrict__ vx, const float* __restrict__ y, float* __restrict__ dst,
                                        int ncols, int nrows) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= nrows) return;
  const int blocks_per_row = ncols / QK8_0;  // trap
  const block_q8_0* x = (const block_q8_0*)vx;
  float tmp = 0.0f;
  for (int ib = threadIdx.x; ib < blocks_per_row; ib += WARP_SIZE) {  // trap
    const block_q8_0& b = x[row * blocks_per_row + ib];
    float d = __half2float(b.d);
    for (int j = 0; j < QK8_0; ++j) tmp += d * b.qs[j] * y[ib * QK8_0 + j];  // trap
  }
  tmp = warp_reduce_sum(tmp);
  if (threadIdx.x == 0) dst[row] = tmp;
}

// An older kernel: one warp per row without the width argument.
static __global__ void dequantize_mul_mat_vec(const float* __restrict__ vx, const float* __restrict__ y,
                                              float* __restrict__ dst, int ncols, int nrows) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= nrows) return;
  const int tid = threadIdx.x;
  float tmp = 0.0f;
  for (int i = 0; i < ncols; i += 2 * CUDA_DMMV_X) {  // trap
    const int col = i + 2 * tid;
    if (col + 1 < ncols) tmp += vx[row * ncols + col] * y[col] + vx[row * ncols + col + 1] * y[col + 1];
  }
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) {  // trap (explicit width 32 below: a logical 32-lane group)
    tmp += __shfl_xor_sync(0xffffffff, tmp, mask, 32);  // real: PTL104
  }
  if (tid == 0) dst[row] = tmp;
}

static __global__ void count_nonzero(const float* __restrict__ x, int* __restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool nz = i < n && x[i] != 0.0f;
  const uint32_t mask = __ballot_sync(0xffffffff, nz);  // real: PTL104, PTL105
  if ((threadIdx.x & (WARP_SIZE - 1)) == 0) atomicAdd(&counts[blockIdx.x], __popc(mask));  // real: PTL105
}

static void launch_q8(const void* vx, const float* y, float* dst, int ncols, int nrows, cudaStream_t stream) {
  const int ny = 4;
  const dim3 block_nums((nrows + ny - 1) / ny, 1, 1);
  const dim3 block_dims(WARP_SIZE, ny, 1);
  mul_mat_vec_q8_0<<<block_nums, block_dims, 0, stream>>>(vx, y, dst, ncols, nrows);
  uint32_t bitmap = (uint32_t)ncols;
  int first = __builtin_ctz(bitmap | 1u) & 31;  // trap
  (void)first;
}
