// Transformer FLOP counting (formulas in costmodel/README.md "FLOPs").
#include "costmodel/flops.h"

#include "costmodel/attention.h"
#include "costmodel/moe_cost.h"
#include "costmodel/mtp.h"

namespace meshplan {

LayerFlops layer_forward_flops(const ModelSpec& m, double sequences, double seq) {
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.q_dim());  // heads x head_dim: h unless head_dim is set apart
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.intermediate_size);
  const double tokens = sequences * seq;
  LayerFlops out;
  out.qkv = 2.0 * tokens * h * (q + 2.0 * kv);
  out.scores = 2.0 * sequences * seq * seq * q;
  out.values = 2.0 * sequences * seq * seq * q;
  out.out_proj = 2.0 * tokens * q * h;
  out.mlp_up = (m.mlp == MlpKind::Gated ? 2.0 : 1.0) * 2.0 * tokens * h * f;
  out.mlp_down = 2.0 * tokens * f * h;
  if (m.moe.enabled() || m.mla.enabled()) add_moe_and_mla_flops(m, sequences, seq, out);
  return out;
}

double logits_forward_flops(const ModelSpec& m, double sequences, double seq) {
  return 2.0 * sequences * seq * static_cast<double>(m.hidden_size) * static_cast<double>(m.vocab_size);
}

double recompute_flops(const LayerFlops& f, Recompute r) {
  switch (r) {
    case Recompute::None: return 0.0;
    case Recompute::Selective: return f.attention_core();
    case Recompute::Full: return f.total();
  }
  return 0.0;
}

StepFlops step_flops(const ModelSpec& m, double sequences, double seq, Recompute r, AttentionKind k) {
  const LayerFlops layer = layer_forward_flops(m, sequences, seq);
  const double L = static_cast<double>(m.num_layers);
  // MTP modules (costmodel/mtp.h): one more layer, eh_proj and a second LM head each; their layer
  // recomputes and re-reads attention like the others.
  const double mtp = static_cast<double>(m.mtp_layers);
  const double forward = L * layer.total() + logits_forward_flops(m, sequences, seq) +
                         mtp_forward_flops(m, sequences, seq, layer.total());
  StepFlops out;
  out.model = 3.0 * forward;
  out.hardware = out.model + (L + mtp) * (recompute_flops(layer, r) + attention_backward_extra_flops(layer, k));
  return out;
}

double six_nd_flops(double parameters, double tokens) { return 6.0 * parameters * tokens; }

}  // namespace meshplan
