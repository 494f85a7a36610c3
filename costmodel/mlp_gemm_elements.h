// Input and output elements of the MLP GEMMs of the mean layer (dense, or MoE routed + shared experts).
#pragma once
#include "core/parallel_config.h"

namespace meshplan {

/// Elements entering (inputs) and leaving (outputs) the MLP GEMMs of one mean layer, one
/// micro-batch, on one GPU: what FP8 quantizes (costmodel/fp8.h fp8_cast_bytes).
struct GemmElements {
  double inputs = 0;
  double outputs = 0;
};

/// Dense MLP on `tokens` = b*s/cp tokens, TP t: inputs tokens*(h + f/t) (up, down), outputs
/// tokens*(g*f/t + h), g = 2 for a gated MLP (gate + up) else 1.
/// MoE models, weighted by the MoE-layer fraction r: (1-r) dense layers, and in the MoE layers the
/// shared experts (f_s = n_shared * shared_intermediate, TP-split like the dense MLP) plus the
/// routed rows the busiest GPU's experts see, R = load*k*(tokens/t)*etp (sequence parallelism
/// shards tokens over TP before the dispatch; ETP all-gathers them): inputs R*(h + f_e/etp),
/// outputs R*(g*f_e/etp + h). Transformer Engine's GroupedLinear quantizes each expert's input and
/// output gradient as te.Linear does (TEGroupedMLP, megatron/core/transformer/moe/experts.py,
/// NVIDIA/Megatron-LM commit d98e8a64), so the k-fold routed rows are what FP8 casts.
/// torchao's MXFP8 grouped GEMM quantizes the routed rows itself, inside its measured speedup
/// (costmodel/moe_cost.h torch_grouped_mm_mxfp8_measured): there the routed rows are left out.
GemmElements mlp_gemm_elements(const Problem& p, const ParallelConfig& cfg, double tokens);

}  // namespace meshplan
