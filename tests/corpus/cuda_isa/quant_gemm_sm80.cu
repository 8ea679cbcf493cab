// 4-bit weight x fp16 activation GEMM, sm80 path (Marlin-like structure).
#include <cuda_fp16.h>
#include <cstdint>

namespace qgemm {

template <int lut>
__device__ inline int lop3(int a, int b, int c) {
  int res;
  asm volatile("lop3.b32 %0, %1, %2, %3, %4;\n"  // real: PTL201
               : "=r"(res) : "r"(a), "r"(b), "r"(c), "n"(lut));
  return res;
}

__device__ inline void cp_async4_pred(void* smem_ptr, const void* glob_ptr, bool pred = true) {
  const int BYTES = 16;
  uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));  // real: PTL204
  asm volatile(  // real: PTL401
      "{\n"
      "   .reg .pred p;\n"
      "   setp.ne.b32 p, %0, 0;\n"
      "   @p cp.async.cg.shared.global [%1], [%2], %3;\n"
      "}\n" ::"r"((int)pred),
      "r"(smem), "l"(glob_ptr), "n"(BYTES));
}

__device__ inline void cp_async_fence() { asm volatile("cp.async.commit_group;\n" ::); }  // real: PTL401

template <int n>
__device__ inline void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(n)); }  // real: PTL401

__device__ inline void ldsm4(uint32_t* frag, const void* smem_ptr) {
  uint32_t smem = static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr));  // real: PTL204
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"  // real: PTL402
               : "=r"(frag[0]), "=r"(frag[1]), "=r"(frag[2]), "=r"(frag[3])
               : "r"(smem));
}

__device__ inline void mma(const uint32_t* a, const uint32_t* b, float* c) {
  asm volatile(  // real: PTL403
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
      : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
        "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// Dequantise 4 int4 values packed in q into two half2 (magic-number trick).
__device__ inline void dequant(int q, half2* out) {
  const int LO = 0x000f000f, HI = 0x00f000f0, EX = 0x64006400;
  int lo = lop3<(0xf0 & 0xcc) | 0xaa>(q, LO, EX);  // trap
  int hi = lop3<(0xf0 & 0xcc) | 0xaa>(q, HI, EX);  // trap
  const int SUB = 0x64086408;
  out[0] = __hsub2(*reinterpret_cast<half2*>(&lo), *reinterpret_cast<const half2*>(&SUB));  // trap
  out[1] = __hmul2(*reinterpret_cast<half2*>(&hi), __float2half2_rn(1.0f / 16));  // trap
}

__device__ inline void barrier_acquire(int* lock, int count) {
  if (threadIdx.x == 0) {
    int state = -1;
    do
      asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(state) : "l"(lock));  // real: PTL201
    while (state != count);
  }
  __syncthreads();  // trap
}

__global__ void qgemm_kernel(const int4* __restrict__ A, const int4* __restrict__ B, int4* __restrict__ C,
                             int prob_k, int* locks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800  // trap
  return;  // trap
#else
  extern __shared__ int4 sh[];
  const int stages = 4;
  for (int s = 0; s < stages - 1; ++s) {
    cp_async4_pred(&sh[s * 256 + threadIdx.x], &A[s * 256 + threadIdx.x], s < prob_k);  // trap
    cp_async_fence();  // trap
  }
  uint32_t fa[4];
  float acc[4] = {0, 0, 0, 0};
  for (int k = 0; k < prob_k; ++k) {
    cp_async_wait<stages - 2>();  // trap
    __syncthreads();
    ldsm4(fa, &sh[(k % stages) * 256]);  // trap
    half2 w[2];
    dequant(reinterpret_cast<const int*>(B)[k * blockDim.x + threadIdx.x], w);
    mma(fa, reinterpret_cast<uint32_t*>(w), acc);  // trap
  }
  barrier_acquire(&locks[blockIdx.x], 0);
  C[blockIdx.x * blockDim.x + threadIdx.x] = make_int4(__float_as_int(acc[0]), __float_as_int(acc[1]),  // trap
                                                       __float_as_int(acc[2]), __float_as_int(acc[3]));
#endif
}

}  // namespace qgemm
