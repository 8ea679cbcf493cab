// A PyTorch C++/CUDA extension in the usual ATen style, with a ROCm branch for one piece.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>  // trap
#include <cuda_bf16.h>     // trap
#ifndef USE_ROCM
#include <cuda/barrier>    // trap
#include <cuda_pipeline.h> // trap
#endif

namespace ext {

__global__ void rms_norm_kernel(__nv_bfloat16* out, const __nv_bfloat16* in, int hidden) {  // trap
  int row = blockIdx.x;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) out[row * hidden + i] = in[row * hidden + i];
}

void rms_norm(at::Tensor& out, const at::Tensor& in) {
  const at::cuda::OptionalCUDAGuard guard(device_of(in));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();  // trap
  int hidden = in.size(-1);
  rms_norm_kernel<<<in.numel() / hidden, 256, 0, stream>>>(  // trap
      reinterpret_cast<__nv_bfloat16*>(out.data_ptr()), reinterpret_cast<const __nv_bfloat16*>(in.data_ptr()), hidden);  // trap
  C10_CUDA_CHECK(cudaGetLastError());  // trap
}

void copy_meta(int* dst_host, const int* src_dev, int n) {
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();  // trap
  cudaMemcpyAsync(dst_host, src_dev, n * sizeof(int), cudaMemcpyDeviceToHost, stream);  // trap
  cudaStreamSynchronize(stream);  // trap
}

int sm_count() {
  int dev = 0, sms = 0;
  cudaGetDevice(&dev);  // trap
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);  // trap
  return sms;
}

bool capturing(cudaStream_t s) {  // trap
  cudaStreamCaptureStatus status;  // trap
  cudaStreamGetCaptureInfo(s, &status);  // trap
  return status == cudaStreamCaptureStatusActive;  // trap
}

void capture_deps(cudaStream_t s) {  // trap
  cudaStreamCaptureStatus status;  // trap
  const cudaGraphNode_t* deps = nullptr;  // trap
  const cudaGraphEdgeData* edges = nullptr;  // trap (hipGraphEdgeData, HIP 6.2+)
  size_t n = 0;
  cudaStreamGetCaptureInfo_v3(s, &status, nullptr, nullptr, &deps, &edges, &n);  // real: PTL610
}

void pin_weights(cudaStream_t s, void* base, size_t bytes) {  // trap
#ifndef USE_ROCM
  cudaStreamAttrValue attr{};  // trap
  attr.accessPolicyWindow.base_ptr = base;
  attr.accessPolicyWindow.num_bytes = bytes;
  cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr);  // trap
#else
  (void)s; (void)base; (void)bytes;
#endif
}

void reset_l2() {
  cudaCtxResetPersistingL2Cache();  // real: PTL602
}

size_t free_memory() {
  size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);  // trap
  cudaDeviceProp prop{};  // trap
  cudaGetDeviceProperties(&prop, 0);  // trap
  return free_b + prop.l2CacheSize + prop.warpSize;
}

}  // namespace ext
