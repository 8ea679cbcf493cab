// Vendor shim: CUDA spellings mapped to HIP when building for AMD (llama.cpp-like).
#pragma once
#if defined(GGML_USE_HIP)
#include <hip/hip_runtime.h>
#define cudaStream_t hipStream_t
#define __trap() do { abort(); __builtin_unreachable(); } while (0)
#define __CUDA_ARCH__ 1300
static __device__ __forceinline__ unsigned __vsubss4(unsigned a, unsigned b) {
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    int x = (int8_t)(a >> (8 * i)) - (int8_t)(b >> (8 * i));
    x = x > 127 ? 127 : (x < -128 ? -128 : x);
    r |= (unsigned)(uint8_t)x << (8 * i);
  }
  return r;
}
#endif
