// What the framework exports add for Megatron-Core's CUDA graph scopes, and which exports refuse them.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Megatron-LM flags of the job's CUDA graph scopes (core/cuda_graphs.h), at core_v0.16.0's
/// megatron/training/arguments.py: --cuda-graph-impl transformer_engine --cuda-graph-scope a b c for the
/// per-layer scopes; --cuda-graph-impl local --cuda-graph-scope full_iteration with
/// --no-check-for-nan-in-loss-and-grad (asserted there) and, with EP > 1,
/// --moe-pad-experts-for-cuda-graph-inference (asserted for the local implementation with EP). A MoE
/// model under the moe or full_iteration scope runs drop-and-pad, the static shapes those graphs need:
/// --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity (the balanced load meshplan costs).
/// Empty without graphs. Pairs of (flag, value); an empty value is a switch.
std::vector<std::pair<std::string, std::string>> megatron_cuda_graph_flags(const Problem& p, const ParallelConfig& c);

/// NeMo model.cuda_graph_impl and model.cuda_graph_scope (the same TransformerConfig fields) and, for the
/// drop-and-pad scopes, moe_expert_capacity_factor / moe_pad_expert_input_to_capacity; two-space
/// indented; "" without graphs.
std::string nemo_cuda_graph_keys(const Problem& p);

/// DeepSpeed, FSDP and torchtitan exports have no Megatron-Core graph scopes: one-line Error naming
/// cuda_graphs under `--export kind`; true otherwise.
Result<bool> check_cuda_graph_export(const std::string& kind, const Problem& p);

}  // namespace meshplan
