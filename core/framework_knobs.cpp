// Names of the framework knobs' enums (core/framework_knobs.h).
#include "core/framework_knobs.h"

namespace meshplan {

const char* to_string(AttentionKind k) { return k == AttentionKind::Fused ? "fused" : "materialized"; }

std::optional<AttentionKind> parse_attention(const std::string& s) {
  if (s == "fused") return AttentionKind::Fused;
  if (s == "materialized") return AttentionKind::Materialized;
  return std::nullopt;
}

const char* to_string(FusedAttentionKernel k) {
  switch (k) {
    case FusedAttentionKernel::FlashAttention2: return "flash2";
    case FusedAttentionKernel::Cudnn: return "cudnn";
    case FusedAttentionKernel::FlashAttention1: return "flash1";
    case FusedAttentionKernel::Triton: return "triton";
    case FusedAttentionKernel::TritonOps: return "triton-ops";
  }
  return "flash2";
}

std::optional<FusedAttentionKernel> parse_fused_kernel(const std::string& s) {
  for (auto k : {FusedAttentionKernel::FlashAttention2, FusedAttentionKernel::Cudnn,
                 FusedAttentionKernel::FlashAttention1, FusedAttentionKernel::Triton,
                 FusedAttentionKernel::TritonOps})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

const char* to_string(BackwardPrefetch b) {
  switch (b) {
    case BackwardPrefetch::Pre: return "pre";
    case BackwardPrefetch::Post: return "post";
    case BackwardPrefetch::None: return "none";
  }
  return "?";
}

std::optional<BackwardPrefetch> parse_backward_prefetch(const std::string& s) {
  for (auto b : {BackwardPrefetch::Pre, BackwardPrefetch::Post, BackwardPrefetch::None})
    if (s == to_string(b)) return b;
  return std::nullopt;
}

const char* to_string(CrossEntropyKernel k) {
  switch (k) {
    case CrossEntropyKernel::Generic: return "generic";
    case CrossEntropyKernel::Unfused: return "unfused";
    case CrossEntropyKernel::Fused: return "fused";
    case CrossEntropyKernel::TorchFp32: return "torch_fp32";
    case CrossEntropyKernel::TeInplace: return "te_inplace";
    case CrossEntropyKernel::Te: return "te";
    case CrossEntropyKernel::FlashXentropy: return "flash_xentropy";
  }
  return "generic";
}

std::optional<CrossEntropyKernel> parse_cross_entropy(const std::string& s) {
  for (auto k : {CrossEntropyKernel::Generic, CrossEntropyKernel::Unfused, CrossEntropyKernel::Fused,
                 CrossEntropyKernel::TorchFp32, CrossEntropyKernel::TeInplace, CrossEntropyKernel::Te,
                 CrossEntropyKernel::FlashXentropy})
    if (s == to_string(k)) return k;
  return std::nullopt;
}

}  // namespace meshplan
