// MoE all-to-all hidden under the other micro-batch's compute (Megatron-Core combined 1F1B schedule).
#pragma once
#include "core/parallel_config.h"
#include "costmodel/compute_time.h"

namespace meshplan {

/// The part of one mean layer's expert dispatch/combine (LayerComm::expert_s, one pass, seconds)
/// that --overlap-moe-expert-parallel-comm hides, forward pass and backward pass.
struct HiddenExpertComm {
  double forward_s = 0;   // forward all-to-all hidden under the other micro-batch's backward compute
  double backward_s = 0;  // backward all-to-all hidden under the other micro-batch's forward compute
};

/// Megatron-Core's combined 1F1B schedule (megatron/core/pipeline_parallel/combined_1f1b.py,
/// NVIDIA/Megatron-LM commit d98e8a64) runs the forward of one micro-batch and the backward of
/// another layer by layer on two streams: "EP A2A in forward step is hidden by the attention/mlp
/// computation in the backward step, and vice versa"; delay_wgrad_compute lets the dW GEMMs run
/// under the backward combine too. Per layer:
///   hidden forward  = min(expert_s, backward_input_s + backward_weight_s)
///   hidden backward = min(expert_s, forward_s)
/// Zero unless FrameworkKnobs::moe_a2a_overlap, the model has experts, ep > 1 and the pipeline is
/// interleaved or absent (Megatron-Core core_v0.15.0 asserts a virtual pipeline when pp > 1). Not modelled:
/// the pipeline's warm-up and cool-down steps (forward or backward alone), which have nothing to
/// overlap with: (P-1)*2 + (v-1)*P of the v*M chunk steps in Megatron's interleaved schedule.
HiddenExpertComm hidden_expert_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c,
                                    double expert_pass_s);

/// Applies hidden_expert_comm to `comm` (after add_expert_comm): the hidden parts leave the exposed
/// forward_s / backward_s and join hidden_s, whose kOverlapComputeSlowdown share slows the compute
/// they run under, as for every other overlapped collective.
void hide_expert_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c, LayerComm& comm);

}  // namespace meshplan
