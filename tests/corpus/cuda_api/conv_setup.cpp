// Convolution forward through cuDNN (descriptor setup, algorithm choice, workspace).
#include <cudnn.h>  // real: PTL603
#include <cuda_runtime.h>  // trap
#include <cstdio>

#define CHECK_CUDNN(x) { auto st = (x); if (st != CUDNN_STATUS_SUCCESS) std::printf("%s\n", cudnnGetErrorString(st)); }  // real: PTL603

struct Conv2d {
  cudnnHandle_t h;                          // real: PTL603
  cudnnTensorDescriptor_t x_desc, y_desc;   // real: PTL603
  cudnnFilterDescriptor_t w_desc;           // real: PTL603
  cudnnConvolutionDescriptor_t conv_desc;   // real: PTL603
  void* workspace = nullptr;
  size_t ws_bytes = 0;

  void init(int n, int c, int hgt, int wid, int k) {
    CHECK_CUDNN(cudnnCreate(&h));  // real: PTL603
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&x_desc));  // real: PTL603
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF, n, c, hgt, wid));  // real: PTL603
    CHECK_CUDNN(cudnnCreateFilterDescriptor(&w_desc));  // real: PTL603
    CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv_desc, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));  // real: PTL603
    CHECK_CUDNN(cudnnSetConvolutionMathType(conv_desc, CUDNN_TENSOR_OP_MATH));  // real: PTL603
    cudaMalloc(&workspace, ws_bytes);  // trap
    (void)k;
  }
};
