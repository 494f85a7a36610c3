// Megatron-Core's CUDA graph capture scopes (--cuda-graph-impl, --cuda-graph-scope): names and rules.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace meshplan {

struct Problem;
struct ParallelConfig;

/// The parts of a training step Megatron-Core captures into CUDA graphs and replays with one host
/// call each (megatron/core/transformer/enums.py CudaGraphScope and the --cuda-graph-scope help of
/// megatron/training/arguments.py, NVIDIA/Megatron-LM core_v0.16.0), one bit each; 0 = eager:
///   Attn           TransformerLayer._forward_attention(): input norm, QKV, attention core, output projection
///   Mlp            TransformerLayer._forward_mlp() of a dense layer
///   Moe            the whole MoE layer's _forward_mlp(); drop-and-pad MoE only (static expert shapes)
///   MoeRouter      _forward_mlp() up to MoELayer.router(): pre-MLP norm, router, routing, aux loss
///   MoePreprocess  MoELayer.preprocess(): the dispatcher's token metadata and first permutation; needs MoeRouter
///   FullIteration  the whole forward-backward iteration (--cuda-graph-impl local); alone
/// Every other scope runs under --cuda-graph-impl transformer_engine (TE make_graphed_callables).
enum CudaGraphScope : uint32_t {
  kGraphAttn = 1u << 0,
  kGraphMlp = 1u << 1,
  kGraphMoe = 1u << 2,
  kGraphMoeRouter = 1u << 3,
  kGraphMoePreprocess = 1u << 4,
  kGraphFullIteration = 1u << 5,
};

/// Names of the set bits in the enum's order ("attn", "mlp", "moe", "moe_router", "moe_preprocess",
/// "full_iteration").
std::vector<std::string> cuda_graph_scope_names(uint32_t scopes);
/// Those names joined by `separator`; "" for 0.
std::string cuda_graph_scopes_text(uint32_t scopes, const std::string& separator = ",");
/// Inverse: names separated by commas or spaces. nullopt on an unknown or repeated name or an empty
/// list; `bad` then holds the offending name.
std::optional<uint32_t> parse_cuda_graph_scopes(const std::string& s, std::string* bad = nullptr);

/// Static tensor shapes in every MoE layer's expert part: the `moe` or `full_iteration` scope, which
/// Megatron-Core captures only for drop-and-pad MoE (--moe-expert-capacity-factor with
/// --moe-pad-expert-input-to-capacity; meshplan's balanced routing is capacity 1.0 padded).
bool graphs_need_drop_and_pad(const Problem& p);

/// Megatron-Core's rules (transformer_config.py __post_init__ at core_v0.16.0): full_iteration alone;
/// moe and moe_router not together; moe_preprocess only with moe_router; moe and moe_router need a
/// MoE model, mlp a model with dense layers; full recompute only under full_iteration; no graphs with
/// activation offloading. Errors naming --cuda-graphs appended to `e`.
void check_cuda_graphs(const Problem& p, const ParallelConfig& c, const std::string& where, ErrorList& e);

}  // namespace meshplan
