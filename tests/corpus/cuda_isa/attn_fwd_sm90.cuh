// Hopper attention forward mainloop on CuTe (FlashAttention-3-like structure).
#pragma once
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/pipeline/pipeline.hpp>

namespace attn {
using namespace cute;

template <int kBlockM, int kBlockN, int kHeadDim, class Element>
struct Sm90Traits {
  using TileShape_MNK = Shape<Int<kBlockM>, Int<kBlockN>, Int<kHeadDim>>;
  using AtomLayoutMNK = Layout<Shape<Int<kBlockM / 64>, _1, _1>>;
  using TiledMmaQK = decltype(make_tiled_mma(
      GMMA::ss_op_selector<Element, Element, float, TileShape_MNK>(), AtomLayoutMNK{}));  // real: PTL301
  using TiledMmaPV = decltype(make_tiled_mma(
      SM90_64x128x16_F32BF16BF16_RS<GMMA::Major::K, GMMA::Major::MN>{}, AtomLayoutMNK{}));  // real: PTL301
  using GmemTiledCopyQ = SM90_TMA_LOAD;  // real: PTL302
  using GmemTiledCopyKV = SM90_TMA_LOAD_MULTICAST;  // real: PTL302
  using SmemCopyAtomO = Copy_Atom<SM90_U32x4_STSM_N, Element>;  // real: PTL402
  using SmemCopyAtomP = Copy_Atom<SM75_U32x4_LDSM_N, Element>;  // real: PTL402
  using MainloopPipeline = typename cutlass::PipelineTmaAsync<2>;
  using ClusterShape = Shape<_1, _1, _1>;
};

template <class Traits, class TensorQ, class TensorK>
__device__ void load_q_k(TensorQ const& gQ, TensorK const& gK, typename Traits::MainloopPipeline& pipe,
                         cutlass::arch::ClusterTransactionBarrier& bar_q, int n_block) {  // real: PTL303
  auto tma_q = make_tma_copy(typename Traits::GmemTiledCopyQ{}, gQ, SmemLayout{}, select<0, 2>(typename Traits::TileShape_MNK{}), _1{});  // real: PTL302
  if (cute::elect_one_sync()) {  // trap
    bar_q.arrive_and_expect_tx(kTmaBytesQ);
    copy(tma_q.with(reinterpret_cast<uint64_t&>(bar_q)), gQ, sQ);
  }
}

template <class Traits>
__global__ void __launch_bounds__(384, 1) attn_fwd_kernel(CUTE_GRID_CONSTANT typename Traits::Params const params) {
  int warp_group_idx = cutlass::canonical_warp_group_idx();  // trap
  extern __shared__ char smem[];
  if (warp_group_idx == 0) {
    cutlass::arch::warpgroup_reg_dealloc<24>();  // real: PTL305
    producer_loop(params, smem);  // trap
  } else {
    cutlass::arch::warpgroup_reg_alloc<240>();  // real: PTL305
    typename Traits::TiledMmaQK tiled_mma_qk;
    Tensor tSrS = partition_fragment_C(tiled_mma_qk, select<0, 1>(typename Traits::TileShape_MNK{}));
    warpgroup_fence_operand(tSrS);  // real: PTL301
    warpgroup_arrive();  // real: PTL301
    gemm(tiled_mma_qk, tSrQ, tSrK, tSrS);
    warpgroup_commit_batch();  // real: PTL301
    warpgroup_wait<0>();  // real: PTL301
    float row_max = -INFINITY;  // trap
    for (int i = 0; i < size(tSrS); ++i) row_max = fmaxf(row_max, tSrS(i));  // trap
    cutlass::arch::NamedBarrier::sync(256, 1);  // trap
    cute::tma_store_fence();  // real: PTL302
  }
}

}  // namespace attn
