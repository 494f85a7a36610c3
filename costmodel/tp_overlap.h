// Exposed TP communication of one layer under Megatron's --tp-comm-overlap (Transformer Engine
// userbuffers): each sequence-parallel all-gather / reduce-scatter pipelined with its GEMM.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/compute_time.h"

namespace meshplan {

/// Forward GEMM seconds of one layer, one micro-batch, on one GPU (heads/FFN split by tp).
struct LayerGemmTimes {
  double qkv_s = 0, out_s = 0, up_s = 0, down_s = 0;
};
LayerGemmTimes layer_gemm_times(const Problem& p, const ParallelConfig& cfg);

/// TP communication of one layer with sequence parallelism and --tp-comm-overlap, given one
/// all-gather `ag_s` and one reduce-scatter `rs_s` of the b*s*h activation over the TP group.
/// TE splits each collective into tp chunks and runs chunk i's transfer under GEMM chunk i-1
/// (transformer_engine/pytorch/module/base.py initialize_ub; Megatron-LM docs "tp-comm-overlap"),
/// so a collective is exposed only by what exceeds the GEMM it is paired with:
///   forward  = max(0, ag - qkv) + max(0, rs - out) + max(0, ag - up) + max(0, rs - down)
///   backward = max(0, ag - out) + max(0, ag - down)       gradient all-gathers under the dX GEMMs
///            + max(0, rs - qkv) + max(0, rs - up)         input-gradient reduce-scatters under dX
///            + max(0, 2 ag - (qkv + up))                  input re-gathers under the dW GEMMs
/// (dX and dW GEMMs take as long as the forward GEMM they mirror). hidden_s = all collectives
/// (4 ag + 4 rs forward and backward, + 2 re-gathers) minus the exposed part: it is charged
/// kOverlapComputeSlowdown like every other overlapped collective. recompute_s is left 0: the
/// caller applies the job's activation-checkpoint policy (policy_tp_recompute_s, ac_policy.h).
LayerComm overlapped_tp_comm(const LayerGemmTimes& g, double ag_s, double rs_s);

}  // namespace meshplan
