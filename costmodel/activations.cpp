// Activation bytes per layer and micro-batches in flight (derivation in costmodel/README.md).
#include "costmodel/activations.h"

#include <algorithm>

namespace meshplan {

namespace {
struct ActivationParts {
  double replicated = 0;  // R: not split by TP unless sequence parallel
  double split = 0;       // S: split by TP
  double core = 0;        // A: attention core, split by TP (heads)
};

ActivationParts parts(const ModelSpec& m, double b, double s) {
  const double h = static_cast<double>(m.hidden_size);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.intermediate_size);
  const double a = static_cast<double>(m.num_heads);
  ActivationParts p;
  p.replicated = 10.0 * s * b * h;
  p.split = s * b * (4.0 * h + 4.0 * kv) + s * b * f * (m.mlp == MlpKind::Gated ? 6.0 : 4.0);
  p.core = 5.0 * a * s * s * b;
  return p;
}
}  // namespace

double layer_activation_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, Recompute r) {
  const double t = static_cast<double>(tp);
  const ActivationParts p = parts(m, b, s);
  const double replicated = sp ? p.replicated / t : p.replicated;
  switch (r) {
    case Recompute::None: return replicated + p.split / t + p.core / t;
    case Recompute::Selective: return replicated + p.split / t;
    case Recompute::Full: return 2.0 * s * b * static_cast<double>(m.hidden_size) / (sp ? t : 1.0);
  }
  return 0.0;
}

double recompute_working_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, Recompute r) {
  switch (r) {
    case Recompute::None: return 0.0;
    case Recompute::Selective: return parts(m, b, s).core / tp;
    case Recompute::Full: return layer_activation_bytes(m, b, s, tp, sp, Recompute::None);
  }
  return 0.0;
}

double embedding_activation_bytes(const ModelSpec& m, double b, double s, int tp, bool sp) {
  return s * b * static_cast<double>(m.hidden_size) / (sp ? tp : 1);
}

double head_activation_bytes(const ModelSpec& m, double b, double s, int tp, bool sp) {
  const double h = static_cast<double>(m.hidden_size);
  const double V = static_cast<double>(m.vocab_size);
  return 4.0 * s * b * h / (sp ? tp : 1) + 4.0 * s * b * V / tp;
}

double microbatches_in_flight(ScheduleKind kind, int pp, int v, int64_t M, int stage) {
  const double Md = static_cast<double>(M);
  switch (kind) {
    case ScheduleKind::GPipe: return Md;
    case ScheduleKind::OneFOneB:
    case ScheduleKind::ZeroBubbleH1: return std::min(Md, static_cast<double>(pp - stage));
    case ScheduleKind::Interleaved: {
      // Megatron's interleaved warm-up runs 2(P - rank - 1) + (v - 1)P forward chunks before the
      // first backward; one more forward is in flight when that backward starts.
      const double chunks = std::min(static_cast<double>(v) * Md,
                                     2.0 * (pp - stage - 1) + (v - 1.0) * pp + 1.0);
      return chunks / v;
    }
  }
  return Md;
}

}  // namespace meshplan
