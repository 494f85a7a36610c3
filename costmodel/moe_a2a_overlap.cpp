// MoE all-to-all hidden under the other micro-batch's compute (costmodel/moe_a2a_overlap.h).
#include "costmodel/moe_a2a_overlap.h"

#include <algorithm>

namespace meshplan {

HiddenExpertComm hidden_expert_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c,
                                    double expert_pass_s) {
  HiddenExpertComm out;
  if (!p.job.knobs.moe_a2a_overlap || !p.model.moe.enabled() || cfg.ep <= 1 || expert_pass_s <= 0.0) return out;
  // Megatron-Core runs the combined 1F1B path only without PP or with the interleaved schedule
  // (transformer_config.py at core_v0.15.0 asserts virtual_pipeline_model_parallel_size when pp > 1).
  if (cfg.pp > 1 && cfg.virtual_stages <= 1) return out;
  out.forward_s = std::min(expert_pass_s, c.backward_input_s + c.backward_weight_s);
  out.backward_s = std::min(expert_pass_s, c.forward_s);
  return out;
}

void hide_expert_comm(const Problem& p, const ParallelConfig& cfg, const LayerCompute& c, LayerComm& comm) {
  const HiddenExpertComm h = hidden_expert_comm(p, cfg, c, comm.expert_s);
  comm.forward_s -= h.forward_s;
  comm.backward_s -= h.backward_s;
  comm.hidden_s += h.forward_s + h.backward_s;
}

}  // namespace meshplan
