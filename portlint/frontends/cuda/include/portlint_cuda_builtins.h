/* portlint's stand-in for the CUDA/HIP compiler builtins, so the libclang pass can
   preprocess and parse CUDA sources as plain C++ without a CUDA or ROCm installation.
   Only what declarations outside function bodies need: qualifiers, the built-in index
   variables, fixed-width integer types and the warp intrinsics' names. */
#ifndef PORTLINT_CUDA_BUILTINS_H
#define PORTLINT_CUDA_BUILTINS_H

#define __global__ __attribute__((annotate("global")))
#define __device__ __attribute__((annotate("device")))
#define __host__ __attribute__((annotate("host")))
#define __shared__ __attribute__((annotate("shared")))
#define __constant__ __attribute__((annotate("constant")))
#define __managed__ __attribute__((annotate("managed")))
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __grid_constant__

typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;

struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
extern const uint3 threadIdx;
extern const uint3 blockIdx;
extern const dim3 blockDim;
extern const dim3 gridDim;
/* not constexpr: ROCm 7 made warpSize a runtime value, and CUDA never had it constant */
extern const int warpSize;

template <class T> T __shfl(T v, int src, int width = 64);
template <class T> T __shfl_up(T v, unsigned int d, int width = 64);
template <class T> T __shfl_down(T v, unsigned int d, int width = 64);
template <class T> T __shfl_xor(T v, int m, int width = 64);
template <class M, class T> T __shfl_sync(M mask, T v, int src, int width = 64);
template <class M, class T> T __shfl_up_sync(M mask, T v, unsigned int d, int width = 64);
template <class M, class T> T __shfl_down_sync(M mask, T v, unsigned int d, int width = 64);
template <class M, class T> T __shfl_xor_sync(M mask, T v, int m, int width = 64);
unsigned long long __ballot(int p);
template <class M> unsigned long long __ballot_sync(M mask, int p);
unsigned long long __activemask();
int __popc(unsigned int x);
int __popcll(unsigned long long x);
int __ffs(unsigned int x);
int __ffsll(unsigned long long x);
void __syncthreads();
void __syncwarp(unsigned long long mask = ~0ull);

#endif
