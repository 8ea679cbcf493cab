// Dense layer GEMMs through cuBLAS / cuBLASLt, with a TF32 switch.
#include <cublas_v2.h>    // trap
#include <cublasLt.h>     // trap
#include <cuda_runtime.h> // trap
#include <stdexcept>
#include <string>

namespace dense {

inline void check(cublasStatus_t st, const char* what) {  // trap
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("cuBLAS failed: ") + what);  // trap
}

class Gemm {
 public:
  explicit Gemm(bool allow_tf32) {
    check(cublasCreate(&handle_), "create");  // trap
    check(cublasLtCreate(&lt_), "lt create");  // trap
    if (allow_tf32) {
      check(cublasSetMathMode(handle_, CUBLAS_TF32_TENSOR_OP_MATH), "tf32");  // real: PTL604
    }
  }
  ~Gemm() {
    cublasLtDestroy(lt_);   // trap
    cublasDestroy(handle_); // trap
  }

  void forward(cudaStream_t stream, int m, int n, int k, const float* a, const float* b, float* c) {  // trap
    cublasSetStream(handle_, stream);  // trap
    const float alpha = 1.0f, beta = 0.0f;
    check(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha,  // trap
                       a, CUDA_R_32F, m, b, CUDA_R_32F, k, &beta, c, CUDA_R_32F, m,  // trap
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP), "gemm");  // real: PTL604
  }

  void forward_bias_relu(cudaStream_t stream, cublasLtMatmulDesc_t desc, const float* bias) {
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;  // trap
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi));  // trap
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));  // trap
    cublasLtEpilogue_t aux = CUBLASLT_EPILOGUE_DRELU_BGRAD;  // real: PTL604
    (void)aux;
    (void)stream;
  }

  void fast_fp8_scale(cublasLtMatmulDesc_t desc, const float* amax) {
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &amax, sizeof(amax));  // trap
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &amax, sizeof(amax));  // real: PTL604
  }

 private:
  cublasHandle_t handle_{};  // trap
  cublasLtHandle_t lt_{};    // trap
};

}  // namespace dense
