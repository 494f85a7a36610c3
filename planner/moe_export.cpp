// MoE / MLA additions to the framework exports (planner/moe_export.h).
#include "planner/moe_export.h"

#include <cmath>
#include <sstream>

namespace meshplan {

namespace {
std::string str(int64_t v) { return std::to_string(v); }

// Megatron's --moe-layer-freq list expression, run-length coded: ([0]*3+[1]*58) for DeepSeek-V3.
std::string layer_pattern(const ModelSpec& m) {
  std::string out;
  int64_t i = 0;
  while (i < m.num_layers) {
    const bool moe = m.moe.is_moe_layer(i);
    int64_t n = 0;
    while (i < m.num_layers && m.moe.is_moe_layer(i) == moe) ++i, ++n;
    out += (out.empty() ? "" : "+") + std::string(moe ? "[1]*" : "[0]*") + str(n);
  }
  return "\"(" + out + ")\"";
}

bool every_layer_moe(const ModelSpec& m) { return m.moe.first_dense_layers == 0 && m.moe.layer_freq <= 1; }

std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}
}  // namespace

std::vector<std::pair<std::string, std::string>> megatron_moe_flags(const Problem& p, const ParallelConfig& c) {
  const ModelSpec& m = p.model;
  std::vector<std::pair<std::string, std::string>> f;
  if (m.mla.enabled()) {
    f.push_back({"--multi-latent-attention", ""});
    if (m.mla.q_lora_rank > 0) f.push_back({"--q-lora-rank", str(m.mla.q_lora_rank)});
    f.push_back({"--kv-lora-rank", str(m.mla.kv_lora_rank)});
    f.push_back({"--qk-head-dim", str(m.mla.qk_nope_head_dim)});
    f.push_back({"--qk-pos-emb-head-dim", str(m.mla.qk_rope_head_dim)});
    f.push_back({"--v-head-dim", str(m.mla.v_head_dim)});
  }
  if (!m.moe.enabled()) return f;
  f.push_back({"--num-experts", str(m.moe.num_experts)});
  f.push_back({"--moe-router-topk", str(m.moe.experts_per_token)});
  f.push_back({"--moe-ffn-hidden-size", str(m.moe.expert_intermediate_size)});
  if (m.moe.num_shared_experts > 0)
    f.push_back({"--moe-shared-expert-intermediate-size",
                 str(m.moe.num_shared_experts * m.moe.shared_expert_intermediate_size)});
  if (!every_layer_moe(m)) f.push_back({"--moe-layer-freq", layer_pattern(m)});
  if (m.moe.router_bias) f.push_back({"--moe-router-enable-expert-bias", ""});
  f.push_back({"--expert-model-parallel-size", str(c.ep)});
  f.push_back({"--expert-tensor-parallel-size", str(c.etp)});
  f.push_back({"--moe-grouped-gemm", ""});
  // As costed (core/moe_dispatcher.h): alltoall, or the flex dispatcher with its backend
  // (megatron/core/transformer/moe/README.md: --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend).
  if (p.job.knobs.moe_dispatcher == MoeDispatcher::AllToAll) {
    f.push_back({"--moe-token-dispatcher-type", "alltoall"});
  } else {
    f.push_back({"--moe-token-dispatcher-type", "flex"});
    f.push_back({"--moe-flex-dispatcher-backend", to_string(p.job.knobs.moe_dispatcher)});
  }
  if (p.job.moe_capacity_factor > 0) f.push_back({"--moe-expert-capacity-factor", number(p.job.moe_capacity_factor)});
  if (p.job.knobs.moe_a2a_overlap) {  // as costed (costmodel/moe_a2a_overlap.h): both flags, as Megatron-Bridge sets them
    f.push_back({"--overlap-moe-expert-parallel-comm", ""});
    f.push_back({"--delay-wgrad-compute", ""});
  }
  // As costed (costmodel/megatron_eager_ops.h): Megatron-LM core_v0.18 builds its arguments from
  // TransformerConfig's fields (training/arguments.py ArgumentGroupFactory), use_transformer_engine_op_fuser
  // among them.
  if (p.job.knobs.fused_grouped_mlp) f.push_back({"--use-transformer-engine-op-fuser", ""});
  return f;
}

std::string nemo_moe_keys(const Problem& p, const ParallelConfig& c) {
  const ModelSpec& m = p.model;
  if (!m.moe.enabled()) return "";
  std::ostringstream o;
  o << "  num_moe_experts: " << m.moe.num_experts << "\n"
    << "  moe_router_topk: " << m.moe.experts_per_token << "\n"
    << "  moe_ffn_hidden_size: " << m.moe.expert_intermediate_size << "\n"
    << "  expert_model_parallel_size: " << c.ep << "\n"
    << "  expert_tensor_parallel_size: " << c.etp << "\n"
    << "  moe_grouped_gemm: true\n";
  if (p.job.knobs.moe_dispatcher == MoeDispatcher::AllToAll)
    o << "  moe_token_dispatcher_type: alltoall\n";
  else
    o << "  moe_token_dispatcher_type: flex\n  moe_flex_dispatcher_backend: " << to_string(p.job.knobs.moe_dispatcher) << "\n";
  if (m.moe.num_shared_experts > 0)
    o << "  moe_shared_expert_intermediate_size: "
      << m.moe.num_shared_experts * m.moe.shared_expert_intermediate_size << "\n";
  if (!every_layer_moe(m)) o << "  moe_layer_freq: " << layer_pattern(m) << "\n";
  if (p.job.knobs.moe_a2a_overlap) o << "  overlap_moe_expert_parallel_comm: true\n  delay_wgrad_compute: true\n";
  return o.str();
}

std::string torchtitan_moe_keys(const Problem& p, const ParallelConfig& c) {
  if (!p.model.moe.enabled()) return "";
  return "expert_parallel_degree = " + str(c.ep) + "\nexpert_tensor_parallel_degree = " + str(c.etp) + "\n";
}

Result<bool> check_deepspeed_moe(const Problem& p, const ParallelConfig& c) {
  if (!p.model.moe.enabled()) return true;
  const std::string where = "--export deepspeed";
  if (p.job.knobs.moe_a2a_overlap)
    return make_error(where, "moe_a2a_overlap", "true",
                      "is Megatron-Core's overlapped expert all-to-all (combined 1F1B); DeepSpeed-MoE has none",
                      "plan without --moe-a2a-overlap, or export for megatron");
  if (p.job.knobs.moe_dispatcher != MoeDispatcher::AllToAll)
    return make_error(where, "moe_dispatcher", to_string(p.job.knobs.moe_dispatcher),
                      "is Megatron-Core's flex dispatcher; DeepSpeed-MoE dispatches with its own all-to-all",
                      "plan with --moe-dispatcher alltoall, or export for megatron");
  if (c.dp % c.ep != 0)
    return make_error(where, "ep", str(c.ep),
                      "DeepSpeed-MoE forms expert-parallel groups inside the data-parallel group, so ep must divide dp=" +
                          str(c.dp),
                      "plan with --ep dividing dp, or export for megatron");
  if (c.etp != 1 && c.etp != c.tp)
    return make_error(where, "etp", str(c.etp),
                      "DeepSpeed-MoE splits experts only by the model's own TP (tp=" + str(c.tp) + ") or not at all",
                      "plan with --etp 1 or --etp " + str(c.tp) + ", or export for megatron");
  return true;
}

std::string deepspeed_moe_note(const Problem& p, const ParallelConfig& c) {
  if (!p.model.moe.enabled()) return "";
  return "deepspeed: ds_config.json has no expert keys: build the MoE layers with deepspeed.moe.layer.MoE(num_experts=" +
         str(p.model.moe.num_experts) + ", ep_size=" + str(c.ep) + ", k=" + str(p.model.moe.experts_per_token) +
         (c.etp > 1 ? ", enable_expert_tensor_parallelism=True" : "") + ")";
}

}  // namespace meshplan
