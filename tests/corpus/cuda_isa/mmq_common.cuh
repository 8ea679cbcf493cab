// Shared helpers of a quantised mat-mul for several vendors (llama.cpp-like layout).
#pragma once
#include <cstdint>
#include "vendor_hip.h"

#if !defined(GGML_USE_HIP) && !defined(GGML_USE_MUSA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  // trap
#define CP_ASYNC_AVAILABLE
#endif

#if !defined(GGML_USE_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750  // trap
#define INT8_MMA_AVAILABLE
#endif

#define NO_DEVICE_CODE __trap()  // trap

static __device__ __forceinline__ int dp4a_compat(const int a, const int b, int c) {
#if defined(GGML_USE_HIP)
#if defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx942__)
  c = __builtin_amdgcn_sdot4(a, b, c, false);  // trap
#else
  const int8_t* va = reinterpret_cast<const int8_t*>(&a);
  const int8_t* vb = reinterpret_cast<const int8_t*>(&b);
  c += va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2] + va[3] * vb[3];
#endif
  return c;
#else
  return __dp4a(a, b, c);  // trap
#endif
}

static __device__ __forceinline__ void cp_async_cg_16(const unsigned int dst, const void* src) {
#ifdef CP_ASYNC_AVAILABLE
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" : : "r"(dst), "l"(src));  // trap
#else
  (void)dst; (void)src;
  NO_DEVICE_CODE;
#endif
}

static __device__ __forceinline__ void cp_async_wait_all_groups() {
#ifdef CP_ASYNC_AVAILABLE
  asm volatile("cp.async.wait_all;");  // trap
#else
  NO_DEVICE_CODE;
#endif
}

// Unguarded helper that slipped through without a HIP path.
static __device__ __forceinline__ int get_int_b2(const void* x, const int i32) {
  const uint16_t* x16 = static_cast<const uint16_t*>(x);
  int x32 = x16[2 * i32 + 0] << 0;
  x32 |= x16[2 * i32 + 1] << 16;
  return x32;
}

static __device__ __forceinline__ uint32_t byte_select(uint32_t a, uint32_t b, uint32_t sel) {
  uint32_t r;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(sel));  // real: PTL201
  return r;
}

static __device__ __forceinline__ unsigned vsub_sat_bytes(unsigned a, unsigned b) {
  return __vsubss4(a, b);  // trap
}

static __device__ __forceinline__ float mma_tile_int8(const int* A, const int* B) {
#ifdef INT8_MMA_AVAILABLE
  int c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"  // trap
      : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
  return static_cast<float>(c0 + c1 + c2 + c3);
#else
  (void)A; (void)B;
  NO_DEVICE_CODE;
  return 0.0f;
#endif
}

static __device__ __forceinline__ void pdl_wait() {
#if !defined(GGML_USE_HIP) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900  // trap
  cudaGridDependencySynchronize();  // trap
#endif
}

static __device__ __forceinline__ float warp_max_redux(float v) {
#if !defined(GGML_USE_HIP) && __CUDA_ARCH__ >= 800  // trap
  int iv = __float_as_int(v);
  asm("redux.sync.max.s32 %0, %1, 0xffffffff;" : "=r"(iv) : "r"(iv));  // real: PTL404
  return __int_as_float(iv);
#endif
  return v;
}
