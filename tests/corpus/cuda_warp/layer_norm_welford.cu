// Layer norm forward in the apex style: one warp per row slice, Welford statistics
// combined across lanes, then across the warps of the block through shared memory.
#include <cuda_runtime.h>

template <typename U>
__device__ void welford_online(U curr, U& mu, U& sigma2, U& count) {
  count = count + U(1);
  U delta = curr - mu;
  U lmean = mu + delta / count;
  mu = lmean;
  U delta2 = curr - lmean;
  sigma2 = sigma2 + delta * delta2;
}

template <typename U>
__device__ void welford_combine(U muB, U sigma2B, U countB, U& mu, U& sigma2, U& count) {
  U delta = mu - muB;
  U nA = count;
  U nB = countB;
  count = nA + nB;
  if (count > U(0)) {
    nA = nA / count;
    nB = nB / count;
    mu = nA * mu + nB * muB;
    sigma2 = sigma2 + sigma2B + delta * delta * nA * nB * count;
  } else {
    mu = U(0);
    sigma2 = U(0);
  }
}

template <typename T, typename U>
__device__ void row_stats(const T* __restrict__ vals, int n2, int i1, U& mu, U& sigma2, U* buf) {
  U count = U(0);
  mu = U(0);
  sigma2 = U(0);
  const T* lvals = vals + i1 * n2;
  const int numx = blockDim.x * blockDim.y;
  const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
  for (int l = thrx; l < n2; l += numx) {
    welford_online(static_cast<U>(lvals[l]), mu, sigma2, count);
  }
  // butterfly across the 32 lanes of the warp (blockDim.x == 32 by construction)
  // Relabelled (issue 25): each 32-thread row (threads(32, 4)) is the kernel's own group, so
  // five steps over `& 31` lanes are right on a 64-lane wave that holds two rows; what is
  // wrong is the shuffles' default width (64 on CDNA: row 1 reads row 0's lanes). Starting
  // the steps from the wave size or masking the lane with it would mix the two rows' statistics.
  for (int l = 0; l <= 4; ++l) {  // trap
    int src_lane = (threadIdx.x + (1 << l)) & 31;  // trap
    U muB = __shfl_sync(0xffffffff, mu, src_lane);  // real: PTL104, PTL112
    U countB = __shfl_sync(0xffffffff, count, src_lane);  // real: PTL104, PTL112
    U sigma2B = __shfl_sync(0xffffffff, sigma2, src_lane);  // real: PTL104, PTL112
    welford_combine(muB, sigma2B, countB, mu, sigma2, count);
  }
  if (blockDim.y > 1) {
    U* ubuf = buf;
    U* ibuf = ubuf + blockDim.y;
    for (int offset = blockDim.y / 2; offset > 0; offset /= 2) {  // trap
      if (threadIdx.x == 0 && threadIdx.y >= offset && threadIdx.y < 2 * offset) {
        const int wrt_y = threadIdx.y - offset;
        ubuf[2 * wrt_y] = mu;
        ubuf[2 * wrt_y + 1] = sigma2;
        ibuf[wrt_y] = count;
      }
      __syncthreads();
      if (threadIdx.x == 0 && threadIdx.y < offset) {
        welford_combine(ubuf[2 * threadIdx.y], ubuf[2 * threadIdx.y + 1], ibuf[threadIdx.y], mu, sigma2, count);
      }
      __syncthreads();
    }
  }
}

template <typename T, typename U>
__global__ void layer_norm_fwd(T* __restrict__ out, U* __restrict__ mean, U* __restrict__ invvar,
                               const T* __restrict__ in, int n1, int n2, U eps,
                               const T* __restrict__ gamma, const T* __restrict__ beta) {
  extern __shared__ float smem[];
  for (int i1 = blockIdx.y; i1 < n1; i1 += gridDim.y) {
    U mu, sigma2;
    row_stats(in, n2, i1, mu, sigma2, reinterpret_cast<U*>(smem));
    const T* lvals = in + i1 * n2;
    T* ovals = out + i1 * n2;
    U c_invvar = rsqrtf(sigma2 / U(n2) + eps);
    const int numx = blockDim.x * blockDim.y;
    const int thrx = threadIdx.x + threadIdx.y * blockDim.x;
    for (int i = thrx; i < n2; i += numx) {
      U curr = static_cast<U>(lvals[i]);
      ovals[i] = static_cast<T>(gamma[i] * c_invvar * (curr - mu) + beta[i]);
    }
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      mean[i1] = mu;
      invvar[i1] = c_invvar;
    }
  }
}

void launch_layer_norm(float* out, float* mean, float* invvar, const float* in, int n1, int n2,
                       const float* gamma, const float* beta, cudaStream_t stream) {
  const dim3 threads(32, 4, 1);
  const dim3 blocks(1, n1 < 65535 ? n1 : 65535, 1);
  int nshared = threads.y > 1 ? threads.y * sizeof(float) + (threads.y / 2) * sizeof(float) : 0;
  layer_norm_fwd<float, float><<<blocks, threads, nshared, stream>>>(out, mean, invvar, in, n1, n2, 1e-5f, gamma, beta);
}
