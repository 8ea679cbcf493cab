// Decode step captured into a CUDA graph, with an L2 persistence window for the KV cache.
#include <cuda_runtime.h>  // trap
#include <cstdio>

__global__ void decode_step(float* kv, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) kv[i] *= 0.5f;
}

struct GraphRunner {
  cudaGraph_t graph{};       // trap
  cudaGraphExec_t exec{};    // trap
  cudaStream_t stream{};     // trap

  void capture(float* kv, int n) {
    cudaDeviceProp prop;  // trap
    cudaGetDeviceProperties(&prop, 0);  // trap
    int block = prop.warpSize * 4;  // trap
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);  // trap
    decode_step<<<(n + block - 1) / block, block, 0, stream>>>(kv, n);  // trap
    cudaStreamEndCapture(stream, &graph);  // trap
    cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);  // trap
  }

  void replay() { cudaGraphLaunch(exec, stream); }  // trap

  void pin_kv(float* kv, size_t bytes) {
    cudaStreamAttrValue v{};  // real: PTL602
    v.accessPolicyWindow.base_ptr = kv;
    v.accessPolicyWindow.num_bytes = bytes;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;  // trap
    cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &v);  // real: PTL602
  }

  void scratch(size_t bytes) {
    void* p = nullptr;
    cudaMallocAsync(&p, bytes, stream);  // trap
    cudaMemPool_t pool;  // trap
    cudaDeviceGetDefaultMemPool(&pool, 0);  // trap
    cudaFreeAsync(p, stream);  // trap
  }

  void loop_until(cudaGraph_t body) {
    cudaGraphConditionalHandle cond;  // real: PTL610
    cudaGraphConditionalHandleCreate(&cond, body, 0, 0);  // real: PTL610
  }
};
