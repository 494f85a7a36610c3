// Activation-checkpoint policy of a job: how a recompute mode (none|selective|full) is carried out.
#pragma once
#include <optional>
#include <string>

#include "core/error.h"

namespace meshplan {

/// Which framework rule turns a recompute mode into per-layer checkpointing (DESIGN.md `--ac-policy`).
///   Megatron:     selective = Korthikanti et al. 2022 (attention core recomputed), full = every
///                 layer checkpointed whole (the meaning of --recompute before policies existed).
///   TorchtitanOp: selective = torchtitan's op-level SAC (selective_ac_option "op"): inside each
///                 block the outputs of every other matmul, SDPA, reduce-scatter and max are saved,
///                 the rest recomputed (costmodel/ac_policy.h). none and full as Megatron.
///   EveryNLayers: full = torchtitan's layer SAC (selective_ac_option "N"): every N-th block
///                 checkpointed whole, the others keep everything. none and selective as Megatron.
enum class AcPolicyKind { Megatron, TorchtitanOp, EveryNLayers };

struct AcPolicy {
  AcPolicyKind kind = AcPolicyKind::Megatron;
  int every_n_layers = 1;  // EveryNLayers only: N >= 1 (N = 1 is full recompute of every layer)
  bool operator==(const AcPolicy& o) const { return kind == o.kind && every_n_layers == o.every_n_layers; }
  bool operator!=(const AcPolicy& o) const { return !(*this == o); }
};

/// "megatron", "torchtitan-op" or "every-N-layers" (N in decimal).
std::string to_string(const AcPolicy& p);
/// Inverse of to_string; "" reads as megatron. nullopt for anything else (N must be 1..1000000).
std::optional<AcPolicy> parse_ac_policy(const std::string& s);

struct Problem;
struct ParallelConfig;
/// torchtitan-op with --recompute selective is modelled for dense blocks with a fused attention
/// kernel (the save list names the SDPA flash/efficient kernels; MoE routing and latent attention
/// add ops it does not describe): an Error naming --ac-policy otherwise, appended to `e`.
void check_ac_policy(const Problem& p, const ParallelConfig& c, const std::string& where, ErrorList& e);

}  // namespace meshplan
