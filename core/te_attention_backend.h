// Which attention path Transformer Engine takes in training for a model's head dimensions on a GPU, by TE and cuDNN release.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/framework_knobs.h"
#include "core/model_spec.h"

namespace meshplan {

/// Transformer Engine's DotProductAttention picks, in training, the first of: cuDNN's fused attention
/// (F16 arbitrary-seqlen backend), flash-attn 2, its own UnfusedDotProductAttention (softmax(QK^T) written
/// to HBM). Which one is allowed depends on the head dimensions, the GPU and the releases
/// (transformer_engine/common/fused_attn/fused_attn.cpp nvte_get_fused_attn_backend; pytorch
/// dot_product_attention/utils.py get_attention_backend):
/// - cuDNN: head dims <= 128 (multiples of 8) everywhere. Up to 256 on Hopper (sm90) with cuDNN >= 9.0
///   (TE <= 2.4) or >= 9.5 (TE >= 2.5, "9.5: <= 256 + Hopper + bprop"). On Blackwell (sm >= 100) TE <= 2.4
///   refuses anything above 128 ("!(sm_arch_ >= 100 && (head_dim_qk > 128 || head_dim_v > 128))", v2.1-v2.4);
///   TE 2.5 (71c76b6ba "Add support for head_dim > 128", 2025-06-14) adds d_qk 192 / d_v 128 (MLA) with
///   cuDNN >= 9.11 ("9.11: d_qk = 192, d_v = 128 + Blackwell + bprop"); TE 2.20 (bffde8f4a, 2026-07-31)
///   d 256 on CC 10.x with cuDNN >= 9.23. Equal dims of 192 (Nemotron-4) stay refused on Blackwell.
/// - flash-attn 2: only with d_qk == d_v ("Disabling FlashAttention as it does not support MLA"), <= 256,
///   above 192 only on sm80/90/100/120.
/// - otherwise UnfusedDotProductAttention.
/// (TeAttentionPath is declared in core/framework_knobs.h: the knobs record the path taken.)
/// "cudnn", "flash_attn", "unfused" (to_string's names).
std::optional<TeAttentionPath> parse_te_attention_path(const std::string& s);

/// Release strings as core/attention_library.h reads them ("2.2", "9.11.0"); "" = today's release.
TeAttentionPath te_attention_path(double compute_capability, int64_t head_dim_qk, int64_t head_dim_v,
                                  const std::string& te_version, const std::string& cudnn_version);

struct AttentionHeadDims {
  int64_t qk = 0, v = 0;
};
/// MLA: qk_nope + qk_rope and v_head_dim (DeepSeek-V3: 192, 128); otherwise head_dim for both.
AttentionHeadDims attention_head_dims(const ModelSpec& m);

/// For a job that attends through Transformer Engine (Megatron-Core / NeMo: fused cuDNN attention), the
/// path the given releases allow on this GPU: UnfusedDotProductAttention is costed as materialized
/// attention (scores and softmax in HBM, Korthikanti et al. 2022), flash-attn 2 with its curve; the
/// knobs record it (FrameworkKnobs::te_attention). Other jobs are left alone.
void apply_te_attention_path(FrameworkKnobs& k, const ModelSpec& m, double compute_capability,
                             const std::string& te_version, const std::string& cudnn_version);

/// One line for the estimate and plan reports ("" when the job took TE's fused attention).
std::string te_attention_note(const FrameworkKnobs& k, const ModelSpec& m, double compute_capability);

}  // namespace meshplan
