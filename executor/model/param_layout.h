// ParamLayout: where each named parameter of a model chunk lives in the flat buffer (offset, local
// TP shard shape, full shape, split dimension) and the per-block ranges DP buckets and ZeRO-3 use.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/model_spec.h"

namespace meshplan::exec {

/// One named tensor of this rank. Names: "embedding" (V, C); per layer "layers.<l>.attn_norm" (C),
/// ".wq" (NH*D, C), ".wk" (NKV*D, C), ".wv" (NKV*D, C), ".wo" (C, NH*D), ".mlp_norm" (C),
/// ".w_gate" (F, C), ".w_up" (F, C), ".w_down" (C, F); "final_norm" (C), "lm_head" (V, C).
/// Weights are stored (out, in) like torch.nn.Linear: y = x @ W^T. A MoE layer (model.moe,
/// moe_layer.h) has ".router" (E, C) and the E experts stacked: ".expert_gate" (E*Fe, C),
/// ".expert_up" (E*Fe, C), ".expert_down" (E*C, Fe), expert e at rows [e*Fe, ...) / [e*C, ...),
/// split by expert across EP ranks, in place of w_gate, w_up, w_down.
struct ParamView {
  std::string name;                 // full name, e.g. "layers.3.wq"
  std::string base;                 // name inside its layer, e.g. "wq" (seeds the initialiser)
  int layer = -1;                   // global layer; -1 embedding; num_layers for final_norm/lm_head
  int block = 0;                    // index into ParamLayout::blocks
  int64_t offset = 0;               // elements from the start of the flat buffer
  std::vector<int64_t> shape;       // this TP rank's shard
  std::vector<int64_t> full_shape;  // unsharded
  int split_dim = -1;               // dim split across TP ranks (rank r holds slice r); -1 replicated
  bool weight_decay = true;         // false for norm gains
  int64_t numel() const;
  bool expert_parallel = false;     // split_dim is split across EP ranks (by expert), not TP
};

/// A unit of DP bucketing and ZeRO-3 gathering: the embedding, one layer, or the head.
struct ParamBlock {
  std::string name;    // "embedding", "layers.<l>", "head"
  int layer = -1;      // as ParamView::layer
  int64_t offset = 0;  // elements
  int64_t count = 0;   // elements
};

struct ParamLayout {
  std::vector<ParamView> views;    // in flat-buffer order
  std::vector<ParamBlock> blocks;  // in forward order, contiguous, covering [0, total)
  int64_t total = 0;
  const ParamView* find(const std::string& name) const;  // nullptr if absent
};

/// Layout of a chunk holding layers [first_layer, first_layer + num_layers) plus optional
/// embedding/head, for TP rank `tp_rank` of `tp_size`. Column-parallel (wq, wk, wv, w_gate, w_up,
/// embedding, lm_head) split dim 0; row-parallel (wo, w_down) split dim 1; norms replicated.
/// MoE layers' experts are split across `ep_size` EP ranks (this is `ep_rank`).
ParamLayout make_param_layout(const ModelSpec& m, int first_layer, int num_layers,
                              bool has_embedding, bool has_head, int tp_rank, int tp_size,
                              int ep_rank = 0, int ep_size = 1);

/// Parameter segments of the flat range [begin, end) with their weight-decay flag and whether
/// this rank counts them in a TP-wide norm (replicated tensors only on tp rank 0).
struct FlatSegment {
  int64_t begin = 0;
  int64_t end = 0;
  bool weight_decay = true;
  bool tp_replicated = false;
  bool expert_parallel = false;  // expert tensors (differ across EP ranks)
};
std::vector<FlatSegment> flat_segments(const ParamLayout& layout, int64_t begin, int64_t end);

}  // namespace meshplan::exec
