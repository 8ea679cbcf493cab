// Fused softmax and RMSNorm kernels with a few PTX fast paths.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cfloat>

#define FINAL_MASK 0xffffffff

template <typename T>
__inline__ __device__ T warp_reduce_sum(T val) {
#pragma unroll
  for (int mask = 16; mask > 0; mask >>= 1) val += __shfl_xor_sync(FINAL_MASK, val, mask, 32);  // trap
  return val;
}

__inline__ __device__ float fast_exp2(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));  // real: PTL201
  return y;
}

__inline__ __device__ float fast_rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));  // real: PTL201
  return y;
}

__inline__ __device__ unsigned warp_sum_u32(unsigned v) {
#if __CUDA_ARCH__ >= 800  // real: PTL205
  unsigned out;
  asm("redux.sync.add.u32 %0, %1, %2;" : "=r"(out) : "r"(v), "r"(FINAL_MASK));  // trap
  return out;
#else
  return warp_reduce_sum(v);  // trap
#endif
}

__global__ void softmax_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  const float* row = in + blockIdx.x * n;
  float m = -FLT_MAX;  // trap
  for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, __ldg(row + i));  // trap
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += __expf(row[i] - m);  // trap
  s = warp_reduce_sum(s);
  const float inv = fast_rcp(s);
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[blockIdx.x * n + i] = fast_exp2((row[i] - m) * 1.4426950409f) * inv;  // trap
}

__global__ void rms_norm_bf16(__nv_bfloat16* __restrict__ out, const __nv_bfloat16* __restrict__ x,  // trap
                              const __nv_bfloat16* __restrict__ w, float eps, int d) {  // trap
  float ss = 0.f;
  for (int i = threadIdx.x; i < d; i += blockDim.x) {
    float v = __bfloat162float(x[blockIdx.x * d + i]);  // trap
    ss += v * v;
  }
  ss = warp_reduce_sum(ss);
  const float r = rsqrtf(ss / d + eps);  // trap
  for (int i = threadIdx.x; i < d; i += blockDim.x)
    out[blockIdx.x * d + i] = __float2bfloat16_rn(__bfloat162float(x[blockIdx.x * d + i]) * r * __bfloat162float(w[i]));  // trap
}

__global__ void half_max(const __half2* a, const __half2* b, __half2* c, unsigned* counts) {
  c[threadIdx.x] = __hmax2(a[threadIdx.x], b[threadIdx.x]);  // trap
  if (threadIdx.x == 0) counts[blockIdx.x] = warp_sum_u32(1u);
  __threadfence();  // trap
  asm volatile("" ::: "memory");  // trap
}

__global__ void streaming_scale(const float4* __restrict__ in, float4* __restrict__ out, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = __ldcs(in + i);  // trap
  v.x *= s; v.y *= s; v.z *= s; v.w *= s;
  __stcs(out + i, v);  // real: PTL204
}
