// Radix sort of keys with CUB, a Thrust fallback, and a libcu++ counter.
#include <cub/cub.cuh>  // trap
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/execution_policy.h>
#include <cuda/std/atomic>  // real: PTL607

void radix_sort(unsigned* keys_in, unsigned* keys_out, int n, cudaStream_t s) {  // trap
  void* tmp = nullptr;
  size_t tmp_bytes = 0;
  cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, keys_in, keys_out, n, 0, 32, s);  // trap
  cudaMalloc(&tmp, tmp_bytes);  // trap
  cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, keys_in, keys_out, n, 0, 32, s);  // trap
  cudaFree(tmp);  // trap
}

void thrust_sort(thrust::device_vector<unsigned>& v, cudaStream_t s) {  // trap
  thrust::sort(thrust::cuda::par.on(s), v.begin(), v.end());  // real: PTL607
  thrust::sort(thrust::device, v.begin(), v.end());
}

__global__ void count_unique(const unsigned* sorted, int n, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0 || i >= n || sorted[i] == sorted[i - 1]) return;
  cuda::std::atomic_ref<int> counter(*out);  // real: PTL607
  counter.fetch_add(1);
}
