// Host-side launchers: clusters, PDL, tensor maps, NVRTC.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>
#include <string>
#include <vector>

template <typename Kernel, typename... Args>
cudaError_t launch_with_cluster(Kernel kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                                int cluster_x, bool pdl, Args... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attrs[2];
  attrs[0].id = cudaLaunchAttributeClusterDimension;  // real: PTL304
  attrs[0].val.clusterDim.x = cluster_x;
  attrs[0].val.clusterDim.y = 1;
  attrs[0].val.clusterDim.z = 1;
  attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;  // real: PTL308
  attrs[1].val.programmaticStreamSerializationAllowed = pdl;  // real: PTL308
  cfg.attrs = attrs;
  cfg.numAttrs = 2;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);  // trap
  cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);  // real: PTL304
  return cudaLaunchKernelEx(&cfg, kernel, args...);
}

int max_active_clusters(const void* kernel, cudaLaunchConfig_t* cfg) {
  int n = 0;
  cudaOccupancyMaxActiveClusters(&n, kernel, cfg);  // real: PTL304
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, 128, 0);  // trap
  return n;
}

CUtensorMap make_2d_map(void* gmem, uint64_t rows, uint64_t cols, uint32_t box_r, uint32_t box_c) {  // real: PTL302
  CUtensorMap map{};  // real: PTL302
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {cols * 2};
  cuuint32_t box[2] = {box_c, box_r};
  cuuint32_t elem_strides[2] = {1, 1};
  PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;  // real: PTL302
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), cudaEnableDefault, &q);  // trap
  encode(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, gmem, dims, strides, box, elem_strides,  // real: PTL302
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,  // real: PTL302
         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // real: PTL302
  return map;
}

std::vector<char> jit_compile(const std::string& src, int sm) {
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, src.c_str(), "k.cu", 0, nullptr, nullptr);  // trap
  std::string arch = "--gpu-architecture=sm_" + std::to_string(sm);
  const char* opts[] = {arch.c_str(), "--std=c++17"};  // trap
  nvrtcCompileProgram(prog, 2, opts);  // trap
  size_t n = 0;
  nvrtcGetCUBINSize(prog, &n);  // real: PTL202
  std::vector<char> cubin(n);
  nvrtcGetCUBIN(prog, cubin.data());  // real: PTL202
  nvrtcDestroyProgram(&prog);  // trap
  return cubin;
}

CUfunction load_fn(const std::vector<char>& cubin, const char* name) {
  CUmodule mod;
  CUfunction fn;
  cuModuleLoadData(&mod, cubin.data());  // real: PTL202
  cuModuleGetFunction(&fn, mod, name);  // trap
  return fn;
}

void make_stream(cudaStream_t* s) { cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }  // trap
