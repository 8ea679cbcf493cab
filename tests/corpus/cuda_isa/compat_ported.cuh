// A compatibility header that is already ported: every NVIDIA-only line has a ROCm branch.
#pragma once
#include <cstdint>

#ifndef USE_ROCM
  #include <cuda_fp8.h>
  #define VLLM_SHFL_XOR_SYNC(var, lane_mask) __shfl_xor_sync(uint32_t(-1), var, lane_mask)
using fp8_e4m3 = c10::Float8_e4m3fn;  // trap
#else
  #include <hip/hip_fp8.h>
  #define VLLM_SHFL_XOR_SYNC(var, lane_mask) __shfl_xor(var, lane_mask)
using fp8_e4m3 = c10::Float8_e4m3fnuz;  // trap
#endif

__device__ __forceinline__ uint32_t lane_index() {
#if defined(__HIP_PLATFORM_AMD__)
  return __lane_id();  // trap
#else
  uint32_t l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));  // trap
  return l;
#endif
}

__device__ __forceinline__ float2 cvt_e4m3x2(uint16_t v) {
#ifndef USE_ROCM
  __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(v, __NV_E4M3);  // trap
  return __half22float2(*reinterpret_cast<__half2*>(&h));
#else
  return make_float2(float(__hip_fp8_e4m3_fnuz(uint8_t(v & 0xff))), float(__hip_fp8_e4m3_fnuz(uint8_t(v >> 8))));  // trap
#endif
}

__device__ __forceinline__ void async_copy_16(void* smem, const void* gmem) {
#if defined(USE_ROCM)
  *reinterpret_cast<int4*>(smem) = *reinterpret_cast<const int4*>(gmem);  // trap
#else
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));  // trap
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));  // trap
#endif
}

__device__ __forceinline__ void mfma_or_mma(float* c, const uint32_t* a, const uint32_t* b) {
#if defined(__gfx90a__) || defined(__gfx942__)
  asm volatile("v_mfma_f32_16x16x16f16 %0, %1, %2, %0" : "+v"(*c) : "v"(*a), "v"(*b));  // trap
#elif defined(__CUDA_ARCH__)
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"  // trap
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]));
#endif
}

// Wrong for MI300X: the OCP type is used on every platform here.
__device__ __forceinline__ float dequant_any(c10::Float8_e4m3fn v, float s) { return float(v) * s; }  // real: PTL307

static inline uint64_t host_cycles() {
  uint32_t lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));  // trap
  return (uint64_t(hi) << 32) | lo;
}
