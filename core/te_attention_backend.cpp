// Transformer Engine's training attention path by head dimensions, GPU and releases (core/te_attention_backend.h).
#include "core/te_attention_backend.h"

#include <cmath>
#include <cstdio>

#include "core/attention_library.h"

namespace meshplan {

const char* to_string(TeAttentionPath p) {
  switch (p) {
    case TeAttentionPath::Cudnn: return "cudnn";
    case TeAttentionPath::FlashAttention: return "flash_attn";
    case TeAttentionPath::Unfused: return "unfused";
  }
  return "cudnn";
}

std::optional<TeAttentionPath> parse_te_attention_path(const std::string& s) {
  for (TeAttentionPath p : {TeAttentionPath::Cudnn, TeAttentionPath::FlashAttention, TeAttentionPath::Unfused})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

namespace {
// "" is today's release: newer than any threshold.
bool at_least(const std::string& version, const char* threshold) {
  return version.empty() || compare_library_versions(version, threshold) >= 0;
}

bool cudnn_fused_ok(double cc, int64_t dqk, int64_t dv, const std::string& te, const std::string& cudnn) {
  if (dqk <= 0 || dv <= 0 || dqk % 8 != 0 || dv % 8 != 0) return false;
  if (dqk <= 128 && dv <= 128) return true;
  const bool hopper = cc >= 9.0 && cc < 10.0, blackwell = cc >= 10.0;
  if (hopper && dqk <= 256 && dv <= 256) return at_least(cudnn, at_least(te, "2.5") ? "9.5" : "9.0");
  if (blackwell && dqk == 192 && dv == 128) return at_least(te, "2.5") && at_least(cudnn, "9.11");
  // bffde8f4a (2026-07-31, after the 2.18 tag; TE 2.20.0.dev0): d 256 training on CC 10.x with cuDNN >= 9.23.
  if (cc >= 10.0 && cc < 11.0 && dqk == 256 && dv == 256) return at_least(te, "2.20") && at_least(cudnn, "9.23");
  return false;
}

bool flash_attn2_ok(double cc, int64_t dqk, int64_t dv) {
  if (dqk != dv || dqk > 256 || dqk % 8 != 0) return false;
  if (dqk <= 192) return true;
  for (double allowed : {8.0, 9.0, 10.0, 12.0})
    if (std::fabs(cc - allowed) < 1e-9) return true;
  return false;
}
}  // namespace

TeAttentionPath te_attention_path(double compute_capability, int64_t head_dim_qk, int64_t head_dim_v,
                                  const std::string& te_version, const std::string& cudnn_version) {
  if (cudnn_fused_ok(compute_capability, head_dim_qk, head_dim_v, te_version, cudnn_version))
    return TeAttentionPath::Cudnn;
  if (flash_attn2_ok(compute_capability, head_dim_qk, head_dim_v)) return TeAttentionPath::FlashAttention;
  return TeAttentionPath::Unfused;
}

AttentionHeadDims attention_head_dims(const ModelSpec& m) {
  if (m.mla.enabled()) return {m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim, m.mla.v_head_dim};
  return {m.head_dim(), m.head_dim()};
}

void apply_te_attention_path(FrameworkKnobs& k, const ModelSpec& m, double compute_capability,
                             const std::string& te_version, const std::string& cudnn_version) {
  // Only Transformer Engine's fused cuDNN attention as Megatron-Core / NeMo run it; a profile without a
  // compute capability cannot be judged.
  if (!k.megatron_core_model_code || k.attention != AttentionKind::Fused ||
      k.fused_kernel != FusedAttentionKernel::Cudnn || compute_capability <= 0.0)
    return;
  const AttentionHeadDims d = attention_head_dims(m);
  k.te_attention = te_attention_path(compute_capability, d.qk, d.v, te_version, cudnn_version);
  if (k.te_attention == TeAttentionPath::FlashAttention) k.fused_kernel = FusedAttentionKernel::FlashAttention2;
  if (k.te_attention == TeAttentionPath::Unfused) k.attention = AttentionKind::Materialized;
}

std::string te_attention_note(const FrameworkKnobs& k, const ModelSpec& m, double compute_capability) {
  if (k.te_attention == TeAttentionPath::Cudnn) return "";
  const AttentionHeadDims d = attention_head_dims(m);
  char cc[16];
  std::snprintf(cc, sizeof cc, "%.1f", compute_capability);
  const std::string dims = std::to_string(d.qk) + "/" + std::to_string(d.v);
  const std::string then = k.te_attention == TeAttentionPath::Unfused
                               ? "its UnfusedDotProductAttention runs (scores and softmax in HBM), costed as "
                                 "materialized attention"
                               : "it runs flash-attn 2, costed with the profile's flash2 curve";
  return "Transformer Engine does not run its cuDNN fused attention for head dims " + dims + " (q.k/v) in training on "
         "compute capability " + cc + " at the releases costed (--te-version, --cudnn-version; default today's): " + then;
}

}  // namespace meshplan
