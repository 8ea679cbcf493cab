// FP8 GEMM with TMA and wgmma, hand-written PTX helpers (DeepGEMM-like).
#pragma once
#include <cuda.h>
#include <cuda_fp8.h>
#include <cstdint>

namespace fp8g {

__device__ __forceinline__ uint32_t get_lane_id() {
  uint32_t lane_id;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane_id));  // real: PTL201
  return lane_id;
}

__device__ __forceinline__ int ld_nc_global(const int* ptr) {
  int ret;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.b32 %0, [%1];" : "=r"(ret) : "l"(ptr));  // real: PTL201
  return ret;
}

__device__ __forceinline__ void st_na_global(int* ptr, int v) {
  asm volatile("st.global.L1::no_allocate.b32 [%0], %1;" ::"l"(ptr), "r"(v));  // real: PTL201
}

__device__ __forceinline__ void wg_arrive() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }  // real: PTL301
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }  // real: PTL301

template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");  // real: PTL301
}

struct FP8MMA64x64 {
  __device__ static void wgmma(uint64_t const& desc_a, uint64_t const& desc_b, float* d, bool scale_d) {
    asm volatile(  // real: PTL301
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        " %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31},"
        " %32, %33, p, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(int32_t(scale_d)));
  }
};

__device__ __forceinline__ void tma_copy_2d(const CUtensorMap* desc, uint64_t* bar, void* smem, int c0, int c1) {  // real: PTL302
  auto smem_int = static_cast<uint32_t>(__cvta_generic_to_shared(smem));  // real: PTL204
  auto bar_int = static_cast<uint32_t>(__cvta_generic_to_shared(bar));  // real: PTL204
  asm volatile(  // real: PTL302
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      ::"r"(smem_int), "l"(desc), "r"(bar_int), "r"(c0), "r"(c1) : "memory");
}

__device__ __forceinline__ void prefetch_desc(const CUtensorMap* desc) {  // real: PTL302
  asm volatile("prefetch.tensormap [%0];" ::"l"(desc) : "memory");  // real: PTL302
}

__device__ __forceinline__ void bar_arrive_tx(uint64_t* bar, uint32_t bytes) {
  uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(bar));  // real: PTL204
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%1], %0;" ::"r"(bytes), "r"(b));  // real: PTL303
}

__device__ __forceinline__ float fp8_to_float(__nv_fp8_e4m3 v) { return static_cast<float>(v); }  // real: PTL307

__device__ __forceinline__ float scale_max() { return 448.0f; }  // trap

template <uint32_t kNumRegs>
__device__ __forceinline__ void warpgroup_regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kNumRegs));  // real: PTL305
}

__global__ void __launch_bounds__(384, 1) fp8_gemm(float* out, const __grid_constant__ CUtensorMap tmap_a,  // real: PTL302
                                                   const float* scales_a, uint32_t shape_k) {
  __shared__ alignas(1024) __nv_fp8_e4m3 smem_a[64 * 128];  // real: PTL307
  __shared__ uint64_t full;
  float acc[32] = {};  // trap
  const uint32_t warp_idx = __shfl_sync(0xffffffff, threadIdx.x / 32, 0);  // trap
  if (warp_idx == 0 && get_lane_id() == 0) prefetch_desc(&tmap_a);  // trap
  for (uint32_t k = 0; k < shape_k / 128; ++k) {
    if (threadIdx.x == 0) {
      bar_arrive_tx(&full, sizeof(smem_a));  // trap
      tma_copy_2d(&tmap_a, &full, smem_a, k * 128, blockIdx.x * 64);  // trap
    }
    wg_arrive();  // trap
    FP8MMA64x64::wgmma(0ull, 0ull, acc, k > 0);  // trap
    wg_commit();  // trap
    wg_wait<0>();  // trap
  }
  out[threadIdx.x] = acc[0] * __ldg(scales_a + blockIdx.x);  // trap
}

}  // namespace fp8g
