// Activation and reduction kernels in the vLLM style: a compatibility header picks the
// shuffle per vendor, and a few NVIDIA-only paths are guarded.
#include <cuda_runtime.h>
#include <cstdint>

#ifndef USE_ROCM
  #define WARP_SIZE 32  // trap
#else
  #define WARP_SIZE warpSize
#endif

#ifndef USE_ROCM
  #define VLLM_LDG(arg) __ldg(arg)
  #define VLLM_SHFL_XOR_SYNC(var, lane_mask) __shfl_xor_sync(uint32_t(-1), var, lane_mask)  // trap
  #define VLLM_SHFL_SYNC(var, src_lane) __shfl_sync(uint32_t(-1), var, src_lane)  // trap
#else
  #define VLLM_LDG(arg) *(arg)
  #define VLLM_SHFL_XOR_SYNC(var, lane_mask) __shfl_xor(var, lane_mask)
  #define VLLM_SHFL_SYNC(var, src_lane) __shfl(var, src_lane)
#endif

template <typename T>
__device__ __forceinline__ T warp_sum(T val) {
#pragma unroll
  for (int mask = WARP_SIZE / 2; mask > 0; mask >>= 1) val += VLLM_SHFL_XOR_SYNC(val, mask);  // trap
  return val;
}

template <typename T>
__device__ __forceinline__ T block_sum(T val) {
  static __shared__ T shared[32];
  const int lane = threadIdx.x % WARP_SIZE;  // trap
  const int wid = threadIdx.x / WARP_SIZE;  // trap
  val = warp_sum(val);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (threadIdx.x < blockDim.x / (float)WARP_SIZE) ? shared[lane] : (T)(0.0f);  // trap
  val = warp_sum(val);
  return val;
}

__global__ void rms_norm(float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ w,
                         float eps, int hidden) {
  __shared__ float s_var;
  float variance = 0.f;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    float x = VLLM_LDG(&in[blockIdx.x * hidden + i]);
    variance += x * x;
  }
  variance = block_sum(variance);
  if (threadIdx.x == 0) s_var = rsqrtf(variance / hidden + eps);
  __syncthreads();
  for (int i = threadIdx.x; i < hidden; i += blockDim.x)
    out[blockIdx.x * hidden + i] = in[blockIdx.x * hidden + i] * s_var * w[i];
}

__global__ void topk_vote(const float* __restrict__ logits, int* __restrict__ hits, float thresh) {
  float x = logits[blockIdx.x * blockDim.x + threadIdx.x];
#ifndef USE_ROCM
  unsigned int ballot = __ballot_sync(0xffffffff, x > thresh);  // trap
  int n = __popc(ballot);  // trap
#else
  unsigned long long ballot = __ballot(x > thresh);
  int n = __popcll(ballot);
#endif
  if (threadIdx.x % WARP_SIZE == 0) atomicAdd(hits, n);  // trap
}

__global__ void gelu_and_mul(float* __restrict__ out, const float* __restrict__ in, int d) {
  const int64_t token = blockIdx.x;
  for (int64_t idx = threadIdx.x; idx < d; idx += blockDim.x) {
    float x = VLLM_LDG(&in[token * 2 * d + idx]);
    float y = VLLM_LDG(&in[token * 2 * d + d + idx]);
    out[token * d + idx] = 0.5f * x * (1.f + erff(x * 0.70710678f)) * y;
  }
#ifndef USE_ROCM
  __syncwarp();  // real: PTL110
#endif
}

__global__ void lane_prefix(const int* __restrict__ flags, int* __restrict__ pos) {
  const int lane = threadIdx.x % WARP_SIZE;  // trap
  unsigned long long m = __ballot_sync(~0ull, flags[threadIdx.x] != 0);  // real: PTL110
  unsigned long long lt = (1ull << lane) - 1;  // trap
  pos[threadIdx.x] = __popcll(m & lt);
  unsigned lt32 = (1u << lane) - 1;  // real: PTL106
  pos[threadIdx.x] += __popc(flags[0] & lt32);
}
