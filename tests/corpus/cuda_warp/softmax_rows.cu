// Row softmax in the PyTorch "persistent warp softmax" style: each warp owns a row,
// each lane holds ELEMENTS_PER_THREAD values, log2 of the row length picks the variant.
#include <cuda_runtime.h>
#include <cstdint>

#define C10_WARP_SIZE 32  // real: PTL101

constexpr int log2_ceil(int value) {
  int log2_value = 0;
  while ((1 << log2_value) < value) ++log2_value;  // trap
  return log2_value;
}

template <typename T>
struct Max { __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; } };
template <typename T>
struct Add { __device__ __forceinline__ T operator()(T a, T b) const { return a + b; } };

template <typename acc_t, int WARP_BATCH, int WARP_SIZE, template <typename> class ReduceOp>
__device__ __forceinline__ void warp_reduce(acc_t* sum) {
  ReduceOp<acc_t> r;
#pragma unroll
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {  // trap
#pragma unroll
    for (int i = 0; i < WARP_BATCH; ++i) {
      acc_t b = __shfl_xor_sync(0xffffffff, sum[i], offset, WARP_SIZE);  // real: PTL104
      sum[i] = r(sum[i], b);
    }
  }
}

template <typename input_t, typename output_t, typename acc_t, int log2_elements>
__global__ void softmax_warp_forward(output_t* dst, const input_t* src, int batch_size, int stride, int element_count) {
  constexpr int next_power_of_two = 1 << log2_elements;  // trap
  constexpr int WARP_SIZE = (next_power_of_two < C10_WARP_SIZE) ? next_power_of_two : C10_WARP_SIZE;
  constexpr int WARP_ITERATIONS = next_power_of_two / WARP_SIZE;
  constexpr int WARP_BATCH = (next_power_of_two <= 128) ? 2 : 1;

  int first_batch = (blockDim.y * blockIdx.x + threadIdx.y) * WARP_BATCH;
  int local_batches = batch_size - first_batch;
  if (local_batches > WARP_BATCH) local_batches = WARP_BATCH;
  int local_idx = threadIdx.x;  // lane within the (logical) warp
  src += first_batch * stride + local_idx;
  dst += first_batch * stride + local_idx;

  acc_t elements[WARP_BATCH][WARP_ITERATIONS];
  for (int i = 0; i < WARP_BATCH; ++i) {
    int batch_element_count = (i >= local_batches) ? 0 : element_count;
    for (int it = 0; it < WARP_ITERATIONS; ++it) {
      int element_index = local_idx + it * WARP_SIZE;
      elements[i][it] = element_index < batch_element_count ? (acc_t)src[i * element_count + it * WARP_SIZE] : -1e30f;
    }
  }
  acc_t max_value[WARP_BATCH];
  for (int i = 0; i < WARP_BATCH; ++i) {
    max_value[i] = elements[i][0];
    for (int it = 1; it < WARP_ITERATIONS; ++it) max_value[i] = max_value[i] > elements[i][it] ? max_value[i] : elements[i][it];
  }
  warp_reduce<acc_t, WARP_BATCH, WARP_SIZE, Max>(max_value);
  acc_t sum[WARP_BATCH] = {0.f};
  for (int i = 0; i < WARP_BATCH; ++i)
    for (int it = 0; it < WARP_ITERATIONS; ++it) {
      elements[i][it] = __expf(elements[i][it] - max_value[i]);
      sum[i] += elements[i][it];
    }
  warp_reduce<acc_t, WARP_BATCH, WARP_SIZE, Add>(sum);
  for (int i = 0; i < WARP_BATCH; ++i) {
    if (i >= local_batches) break;
    for (int it = 0; it < WARP_ITERATIONS; ++it) {
      int element_index = local_idx + it * WARP_SIZE;
      if (element_index < element_count) dst[i * element_count + it * WARP_SIZE] = (output_t)(elements[i][it] / sum[i]);
    }
  }
}

void dispatch_softmax(float* dst, const float* src, int softmax_elements, int batch_count, cudaStream_t stream) {
  int log2_elements = log2_ceil(softmax_elements);
  const int next_power_of_two = 1 << log2_elements;  // trap
  int warp_size = (next_power_of_two < C10_WARP_SIZE) ? next_power_of_two : C10_WARP_SIZE;  // real: PTL108
  int batches_per_warp = (next_power_of_two <= 128) ? 2 : 1;
  constexpr int threads_per_block = 128;
  int warps_per_block = (threads_per_block / warp_size);
  int batches_per_block = warps_per_block * batches_per_warp;
  int blocks = (batch_count + batches_per_block - 1) / batches_per_block;
  dim3 threads(warp_size, warps_per_block, 1);
  if (log2_elements == 5)
    softmax_warp_forward<float, float, float, 5><<<blocks, threads, 0, stream>>>(dst, src, batch_count, softmax_elements, softmax_elements);
}

// Online softmax helper with warpSize: portable.
__device__ float row_max(const float* row, int n) {
  float m = -1e30f;
  for (int i = threadIdx.x % warpSize; i < n; i += warpSize) m = fmaxf(m, row[i]);  // trap
  for (int o = warpSize / 2; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(__activemask(), m, o));  // real: PTL110
  return m;
}
