// Split-K reduction across a thread-block cluster through distributed shared memory.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

template <int kClusterSize>
__global__ void __cluster_dims__(kClusterSize, 1, 1) splitk_reduce(const float* partial, float* out, int n) {  // real: PTL304
  extern __shared__ float acc[];
  cg::cluster_group cluster = cg::this_cluster();  // real: PTL304
  const unsigned rank = cluster.block_rank();  // real: PTL304
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc[i] = partial[(blockIdx.x) * n + i];
  cluster.sync();  // real: PTL304
  if (rank == 0) {
    for (unsigned r = 1; r < kClusterSize; ++r) {
      float* remote = cluster.map_shared_rank(acc, r);  // real: PTL304
      for (int i = threadIdx.x; i < n; i += blockDim.x) acc[i] += remote[i];
    }
  }
  cluster.sync();  // real: PTL304
  if (rank == 0)
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[blockIdx.x / kClusterSize * n + i] = acc[i];
}

__global__ void grid_reduce(const float* partial, float* out, int n) {
  auto grid = cg::this_grid();  // trap
  auto block = cg::this_thread_block();  // trap
  block.sync();  // trap
  grid.sync();  // trap
  if (blockIdx.x == 0 && threadIdx.x < n) out[threadIdx.x] = partial[threadIdx.x];
}

__device__ unsigned cta_rank_in_cluster() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));  // real: PTL304
  return r;
}

__device__ float read_peer(float* local, unsigned peer) {
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(local));  // real: PTL204
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(peer));  // real: PTL304
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote));  // real: PTL304
  return v;
}

__global__ void pipeline_kernel(const float* in, float* out) {
  __shared__ float stage[2][256];
  for (int s = 0; s < 2; ++s) {
    __pipeline_memcpy_async(&stage[s][threadIdx.x], &in[s * 256 + threadIdx.x], sizeof(float));  // real: PTL401
    __pipeline_commit();  // real: PTL401
  }
  __pipeline_wait_prior(1);  // real: PTL401
  __syncthreads();  // trap
  out[threadIdx.x] = stage[0][threadIdx.x] + read_peer(stage[1], cta_rank_in_cluster() ^ 1);
}

__global__ void wmma_gemm(const half* a, const half* b, float* c, int ld) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;  // real: PTL403
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;  // real: PTL403
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;  // real: PTL403
  wmma::fill_fragment(fc, 0.0f);  // real: PTL403
  for (int k = 0; k < ld; k += 16) {
    wmma::load_matrix_sync(fa, a + k, ld);  // real: PTL403
    wmma::load_matrix_sync(fb, b + k * ld, ld);  // real: PTL403
    wmma::mma_sync(fc, fa, fb, fc);  // real: PTL403
  }
  wmma::store_matrix_sync(c, fc, ld, wmma::mem_row_major);  // real: PTL403
}

__global__ void cute_style_copy() {
  // A project kernel with its own name that merely contains "cluster" and "wgmma":
  int cluster_id = blockIdx.x / 2;  // trap
  int wgmma_tiles = cluster_id * 4;  // trap
  (void)wgmma_tiles;
}
