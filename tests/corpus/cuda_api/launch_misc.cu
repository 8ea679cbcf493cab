// Assorted launch code: tuned launch bounds, a device-side relaunch, host flags.
#include <cuda_runtime.h>  // trap
#include <cuda_fp16.h>     // trap
#include <mma.h>           // real: PTL613
#include <nvtx3/nvToolsExt.h>  // real: PTL608

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK, 4) softmax_rows(const half* x, half* y, int cols) {  // real: PTL612
  int c = threadIdx.x;
  if (c < cols) y[blockIdx.x * cols + c] = x[blockIdx.x * cols + c];
}

__global__ void __launch_bounds__(128) plain(float* p) { p[threadIdx.x] = 0.f; }  // trap

#ifdef __CUDACC_RDC__
__global__ void refine(float* p, int depth) {
  if (depth > 0 && threadIdx.x == 0) refine<<<1, 32>>>(p, depth - 1);  // real: PTL611
}
#endif

__global__ void signal_host(volatile int* flag) {
  __threadfence_system();  // real: PTL614
  *flag = 1;
}

void run(float* p, half* x, half* y, int rows, int cols, cudaStream_t s) {  // trap
  nvtxRangePushA("softmax");  // real: PTL608
  softmax_rows<256><<<rows, 256, 0, s>>>(x, y, cols);  // trap
  nvtxRangePop();  // real: PTL608
  cudaFuncSetAttribute(plain, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);  // trap
  void* args[] = {&p};
  cudaLaunchCooperativeKernel(reinterpret_cast<void*>(plain), dim3(1), dim3(128), args, 0, s);  // trap
  cudaLaunchConfig_t cfg = {};  // real: PTL602
  cfg.gridDim = dim3(2);
  cfg.blockDim = dim3(128);
  cudaLaunchKernelEx(&cfg, plain, p);  // real: PTL602
}
