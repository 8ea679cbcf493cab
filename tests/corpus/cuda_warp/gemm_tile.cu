// A hand-written SGEMM with 128x128 block tiles, 8x8 thread tiles and a warp-level layout
// of 4x8 threads: the 32s here are mostly tile sizes, a few are warp assumptions.
#include <cuda_runtime.h>

namespace gemm {
constexpr int kBM = 128;
constexpr int kBN = 128;
constexpr int kBK = 32;  // trap
constexpr int kThreads = 256;
constexpr int kWarpThreads = 32;  // real: PTL101
constexpr int kWarps = kThreads / kWarpThreads;
}  // namespace gemm

__global__ void __launch_bounds__(256) sgemm_128x128(const float* __restrict__ A, const float* __restrict__ B,
                                                      float* __restrict__ C, int M, int N, int K) {
  using namespace gemm;
  __shared__ float As[kBK][kBM + 4];
  __shared__ float Bs[kBK][kBN + 4];
  const int tid = threadIdx.x;
  // warp_id only lays out the tile (no shuffle, vote or warp sync): on wave64 each
  // half-wave is one 32-thread group with its own sub-tile (lane splits stay reported)
  const int warp_id = tid / 32;  // trap
  const int lane = tid % 32;  // real: PTL102
  // each warp covers a 32x64 sub-tile; lanes form a 4x8 grid
  const int warp_row = warp_id / 2;
  const int warp_col = warp_id % 2;
  const int lane_row = lane / 8;
  const int lane_col = lane % 8;
  const int row0 = blockIdx.y * kBM + warp_row * 32 + lane_row * 8;  // trap
  const int col0 = blockIdx.x * kBN + warp_col * 64 + lane_col * 8;
  float acc[8][8] = {};
  // global -> shared: 128x32 floats of A with 256 threads, 16 each
  const int a_row = tid / 2;  // trap
  const int a_col = (tid % 2) * 16;  // trap
  const int b_row = tid / 32;  // trap
  const int b_col = (tid % 32) * 4;  // trap
  for (int k0 = 0; k0 < K; k0 += kBK) {  // trap
    for (int i = 0; i < 16; ++i) As[a_col + i][a_row] = A[(blockIdx.y * kBM + a_row) * K + k0 + a_col + i];
    for (int r = 0; r < kBK; r += 8)
      for (int i = 0; i < 4; ++i) Bs[b_row + r][b_col + i] = B[(k0 + b_row + r) * N + blockIdx.x * kBN + b_col + i];
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[8], b[8];
      for (int i = 0; i < 8; ++i) a[i] = As[kk][warp_row * 32 + lane_row * 8 + i];  // trap
      for (int j = 0; j < 8; ++j) b[j] = Bs[kk][warp_col * 64 + lane_col * 8 + j];
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      if (row0 + i < M && col0 + j < N) C[(row0 + i) * N + col0 + j] = acc[i][j];
  (void)kWarps;
}

// Split-K epilogue: one 32-thread group sums the partials of a 32-column strip.
__global__ void splitk_reduce(const float* __restrict__ partial, float* __restrict__ C, int splits, int MN) {
  // 32-thread column group ids that only address memory: right on wave64 (two a wave)
  int warps_per_block = blockDim.x >> 5;  // trap
  int gwarp = blockIdx.x * warps_per_block + (threadIdx.x >> 5);  // trap
  int lane = threadIdx.x & 31;  // real: PTL102
  int col = gwarp * 32 + lane;  // trap
  if (col >= MN) return;
  float s = 0.f;
  for (int k = 0; k < splits; ++k) s += partial[k * MN + col];
  C[col] = s;
}

void launch_splitk(const float* partial, float* C, int splits, int MN, cudaStream_t stream) {
  const int warps = 8;
  const int threads = warps * 32;  // real: PTL108
  const int blocks = (MN + threads - 1) / threads;
  splitk_reduce<<<blocks, threads, 0, stream>>>(partial, C, splits, MN);
  int tiles_m = (MN + 31) / 32;  // trap
  (void)tiles_m;
}
