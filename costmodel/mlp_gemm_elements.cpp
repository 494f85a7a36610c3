// MLP GEMM input/output elements, dense or MoE (costmodel/mlp_gemm_elements.h).
#include "costmodel/mlp_gemm_elements.h"

#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

namespace {
GemmElements dense_mlp(double tokens, double h, double f, double t, double g) {
  return GemmElements{tokens * (h + f / t), tokens * (g * f / t + h)};
}
}  // namespace

GemmElements mlp_gemm_elements(const Problem& p, const ParallelConfig& cfg, double tokens) {
  const ModelSpec& m = p.model;
  const double t = static_cast<double>(cfg.tp);
  const double h = static_cast<double>(m.hidden_size);
  const double g = m.mlp == MlpKind::Gated ? 2.0 : 1.0;
  const GemmElements dense = dense_mlp(tokens, h, static_cast<double>(m.intermediate_size), t, g);
  if (!m.moe.enabled()) return dense;
  const MoeSpec& e = m.moe;
  const double r = moe_layer_fraction(m);
  const double fs = static_cast<double>(e.num_shared_experts) * static_cast<double>(e.shared_expert_intermediate_size);
  const GemmElements shared = fs > 0.0 ? dense_mlp(tokens, h, fs, t, g) : GemmElements{};
  const double etp = static_cast<double>(cfg.etp);
  const double fe = static_cast<double>(e.expert_intermediate_size) / etp;
  // Quantized inside torchao's measured MXFP8 grouped GEMM (costmodel/moe_cost.h), not by separate casts.
  const double rows = torch_grouped_mm_mxfp8_measured(p)
                          ? 0.0
                          : moe_load_factor(p.job) * static_cast<double>(e.experts_per_token) * (tokens / t) * etp;
  GemmElements out;
  out.inputs = (1.0 - r) * dense.inputs + r * (shared.inputs + rows * (h + fe));
  out.outputs = (1.0 - r) * dense.outputs + r * (shared.outputs + rows * (g * fe + h));
  return out;
}

}  // namespace meshplan
