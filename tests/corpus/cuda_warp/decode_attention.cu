// Single-query decode attention in the flash-decoding style: a thread block per (head,
// split), warps stride over keys, partial results merged through shared memory.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdint>

#define NUM_THREADS 128
#define WARPS (NUM_THREADS / 32)  // real: PTL102
#define HEAD_DIM 128

__device__ __forceinline__ float warp_allreduce_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 16);  // real: PTL103, PTL104
  v += __shfl_xor_sync(0xffffffffu, v, 8);  // real: PTL104
  v += __shfl_xor_sync(0xffffffffu, v, 4);  // real: PTL104
  v += __shfl_xor_sync(0xffffffffu, v, 2);  // real: PTL104
  v += __shfl_xor_sync(0xffffffffu, v, 1);  // real: PTL104
  return v;
}

__global__ void decode_attn(const half* __restrict__ q, const half* __restrict__ k_cache,
                            const half* __restrict__ v_cache, float* __restrict__ out,
                            int seq_len, float scale) {
  __shared__ float red_smem[2 * WARPS];
  __shared__ float logits[1024];
  const int head = blockIdx.x;
  const int warp_idx = threadIdx.x / 32;  // real: PTL102
  const int lane_idx = threadIdx.x % 32;  // real: PTL102
  // each lane holds 4 of the 128 head dims (HEAD_DIM / 32 = 4)
  constexpr int kDimsPerLane = HEAD_DIM / 32;  // real: PTL101
  float qv[kDimsPerLane];
  for (int d = 0; d < kDimsPerLane; ++d) qv[d] = __half2float(q[head * HEAD_DIM + lane_idx * kDimsPerLane + d]);
  float qk_max = -1e30f;
  for (int t = warp_idx; t < seq_len; t += WARPS) {
    const half* kp = k_cache + (size_t)t * HEAD_DIM + lane_idx * kDimsPerLane;
    float dot = 0.f;
    for (int d = 0; d < kDimsPerLane; ++d) dot += qv[d] * __half2float(kp[d]);
    dot = warp_allreduce_sum(dot) * scale;
    if (lane_idx == 0) logits[t] = dot;
    qk_max = fmaxf(qk_max, dot);
  }
  if (lane_idx == 0) red_smem[warp_idx] = qk_max;
  __syncthreads();
  qk_max = lane_idx < WARPS ? red_smem[lane_idx] : -1e30f;
  for (int mask = WARPS / 2; mask >= 1; mask /= 2) qk_max = fmaxf(qk_max, __shfl_xor_sync(0xffffffffu, qk_max, mask));  // real: PTL104
  qk_max = __shfl_sync(0xffffffffu, qk_max, 0);  // real: PTL104
  float exp_sum = 0.f;
  for (int i = threadIdx.x; i < seq_len; i += NUM_THREADS) {  // trap
    float e = __expf(logits[i] - qk_max);
    logits[i] = e;
    exp_sum += e;
  }
  __syncthreads();
  // value accumulation: thread i owns dim i of the 128 dims
  float acc = 0.f;
  for (int t = 0; t < seq_len; ++t) acc += logits[t] * __half2float(v_cache[(size_t)t * HEAD_DIM + threadIdx.x]);
  out[head * HEAD_DIM + threadIdx.x] = acc / exp_sum;
  uint32_t pack = static_cast<uint32_t>(threadIdx.x) << 16;  // trap
  out[0] += (float)(pack & 0xffff);
}

void launch_decode(const half* q, const half* k, const half* v, float* out, int heads, int seq_len, cudaStream_t s) {
  decode_attn<<<heads, NUM_THREADS, 0, s>>>(q, k, v, out, seq_len, 0.088f);
  int words = (seq_len + 31) / 32;  // trap
  (void)words;
}
