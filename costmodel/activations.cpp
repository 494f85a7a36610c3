// Activation bytes per layer and micro-batches in flight (derivation in costmodel/README.md).
#include "costmodel/activations.h"

#include <algorithm>

#include "core/loss_chunk.h"
#include "costmodel/attention.h"
#include "costmodel/mla_stash.h"

namespace meshplan {

namespace {
struct ActivationParts {
  double replicated = 0;  // R: not split by TP unless sequence parallel
  double split = 0;       // S: split by TP
  double core = 0;        // A: attention core, split by TP (heads)
  double unsplit = 0;     // MLA's compressed Q/KV tensors: split by neither TP nor SP (mla_stash.h)
};

// e = bytes per activation element; masks are 1 byte each and exist only with dropout. The
// coefficients are small integers times e, so e = 2 with dropout gives Korthikanti's 10, 4 + 4,
// 6 or 4, 5 bit for bit.
ActivationParts parts(const ModelSpec& m, double b, double s, double e, AttentionKind k) {
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.q_dim());  // Q and the attention output (h unless head_dim is set)
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.intermediate_size);
  const double masks = m.dropout ? 2.0 : 0.0;  // the two hidden dropout masks (attention, MLP)
  ActivationParts p;
  // Korthikanti's 4 e: the QKV and MLP GEMM inputs and the two pre-norms' inputs. Each norm beyond two
  // (Gemma 2 / 3's post-attention and post-feedforward norms) keeps its input for backward: e more.
  const double extra_norms = static_cast<double>(m.extra_norms_per_layer());
  p.replicated = (4.0 * e + extra_norms * e + masks) * s * b * h;
  const double mlp = s * b * f * (m.mlp == MlpKind::Gated ? 3.0 * e : 2.0 * e);
  p.split = s * b * (2.0 * e * q + 2.0 * e * kv) + mlp;
  if (m.mla.enabled()) {  // Q, K, V and output of latent attention, per TP rank (costmodel/mla_stash.h)
    const MlaStashElements mla = mla_stash_elements(m, 1);  // whole layer: split is divided by tp below
    p.split = e * s * b * mla.split + mlp;
    p.unsplit = e * s * b * mla.unsplit;
  }
  // Materialized: softmax output, with dropout also its 1-byte mask and the dropout output;
  // fused: the log-sum-exp only.
  p.core = attention_core_stash_bytes(m, k, b, s, e);
  return p;
}
}  // namespace

double activation_element_bytes(const std::string& dtype) {
  return dtype == "fp32" || dtype == "tf32" ? 4.0 : 2.0;
}

double layer_activation_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, Recompute r,
                              double e, AttentionKind k) {
  const double t = static_cast<double>(tp);
  const ActivationParts p = parts(m, b, s, e, k);
  const double replicated = sp ? p.replicated / t : p.replicated;
  switch (r) {
    case Recompute::None: return replicated + p.split / t + p.core / t + p.unsplit;
    case Recompute::Selective: return replicated + p.split / t + p.unsplit;
    case Recompute::Full: return e * s * b * static_cast<double>(m.hidden_size) / (sp ? t : 1.0);
  }
  return 0.0;
}

double recompute_working_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, Recompute r,
                               double e, AttentionKind k) {
  switch (r) {
    case Recompute::None: return 0.0;
    case Recompute::Selective: return parts(m, b, s, e, k).core / tp;
    case Recompute::Full: return layer_activation_bytes(m, b, s, tp, sp, Recompute::None, e, k);
  }
  return 0.0;
}

double embedding_activation_bytes(const ModelSpec& m, double b, double s, int tp, bool sp) {
  if (!m.dropout) return 0.0;
  return s * b * static_cast<double>(m.hidden_size) / (sp ? tp : 1);
}

namespace {
// Vocabulary columns per loss chunk on this GPU, or 0 when the logits are one chunk.
double chunk_columns(const ModelSpec& m, double b, double s, int tp, uint64_t loss_chunk_bytes) {
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(b * s));
  const int64_t vocab_local = std::max<int64_t>(1, m.vocab_size / tp);
  const int64_t columns = loss_chunk_columns(rows, vocab_local, loss_chunk_bytes);
  return columns < vocab_local ? static_cast<double>(columns) : 0.0;
}
}  // namespace

double head_activation_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double e,
                             uint64_t loss_chunk_bytes) {
  const double h = static_cast<double>(m.hidden_size);
  const double V = static_cast<double>(m.vocab_size);
  const bool chunked = chunk_columns(m, b, s, tp, loss_chunk_bytes) > 0;
  return 2.0 * e * s * b * h / (sp ? tp : 1) + (chunked ? 0.0 : 4.0 * s * b * V / tp);
}

double loss_chunk_working_bytes(const ModelSpec& m, double b, double s, int tp, uint64_t loss_chunk_bytes) {
  return 4.0 * s * b * chunk_columns(m, b, s, tp, loss_chunk_bytes);
}

double first_chunk_in_flight(ScheduleKind kind, int pp, int v, int64_t M) {
  if (kind == ScheduleKind::DualPipeV) return std::min(static_cast<double>(M), 2.0 * pp);
  return microbatches_in_flight(kind, pp, v, M, 0);
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
    case ScheduleKind::DualPipeV: return std::min(2.0 * Md, 2.0 * pp + 1.0) / 2.0;
  }
  return Md;
}

}  // namespace meshplan
