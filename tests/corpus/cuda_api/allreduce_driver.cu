// Data-parallel gradient all-reduce driver on NCCL.
#include <nccl.h>            // trap
#include <cuda_runtime.h>    // trap
#include <cstdlib>
#include <vector>

#define NCCLCHECK(cmd) do { ncclResult_t r = cmd; if (r != ncclSuccess) { std::abort(); } } while (0)  // trap

struct Comms {
  ncclComm_t comm;      // trap
  cudaStream_t stream;  // trap
};

Comms make_comms(int rank, int nranks, const ncclUniqueId& id, bool use_nvls) {  // trap
  setenv("NCCL_DEBUG", "WARN", 0);            // trap
  setenv("NCCL_IB_HCA", "mlx5_0", 0);         // trap
  if (use_nvls) setenv("NCCL_NVLS_ENABLE", "1", 1);  // real: PTL505
  setenv("NCCL_CUMEM_ENABLE", "1", 1);        // real: PTL505
  Comms c{};
  cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking);  // trap
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;  // trap
  config.blocking = 1;                             // trap
  config.cgaClusterSize = 4;                       // real: PTL502
  if (use_nvls) config.nvlsCTAs = 32;              // real: PTL502
  NCCLCHECK(ncclCommInitRankConfig(&c.comm, nranks, id, rank, &config));  // trap
  return c;
}

void allreduce_buckets(Comms& c, std::vector<float*>& buckets, const std::vector<size_t>& counts) {
  NCCLCHECK(ncclGroupStart());  // trap
  for (size_t i = 0; i < buckets.size(); ++i) {
    NCCLCHECK(ncclAllReduce(buckets[i], buckets[i], counts[i], ncclFloat, ncclSum, c.comm, c.stream));  // trap
  }
  NCCLCHECK(ncclGroupEnd());  // trap
  cudaStreamSynchronize(c.stream);  // trap
}

void expert_exchange(Comms& c, const float* send, float* recv, size_t per_rank) {
  NCCLCHECK(ncclAlltoAll(send, recv, per_rank, ncclFloat, c.comm, c.stream));  // real: PTL503
}

void* symmetric_buffer(Comms& c, size_t bytes) {
  void* ptr = nullptr;
  NCCLCHECK(ncclMemAlloc(&ptr, bytes));  // real: PTL502
  ncclWindow_t win;
  NCCLCHECK(ncclCommWindowRegister(c.comm, ptr, bytes, &win, NCCL_WIN_COLL_SYMMETRIC));  // real: PTL503
  return ptr;
}

void split_for_pipeline(Comms& c, int color, int key, ncclComm_t* out) {  // trap
  NCCLCHECK(ncclCommSplit(c.comm, color, key, out, nullptr));  // trap
  NCCLCHECK(ncclBroadcast(nullptr, nullptr, 0, ncclInt, 0, *out, c.stream));  // trap
}

void shrink_on_failure(Comms& c, int* dead, int ndead, ncclComm_t* out) {  // trap
  NCCLCHECK(ncclCommShrink(c.comm, dead, ndead, out, nullptr, NCCL_SHRINK_DEFAULT));  // real: PTL503
}
