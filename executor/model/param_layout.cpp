// Parameter layout of a model chunk: named views into the flat buffer, TP shard shapes, blocks.
#include "executor/model/param_layout.h"

#include <algorithm>
#include <cassert>

namespace meshplan::exec {

int64_t ParamView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const ParamView* ParamLayout::find(const std::string& name) const {
  for (const ParamView& v : views) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

namespace {

struct Builder {
  ParamLayout layout;
  int tp_size;
  int ep_size = 1;

  void begin_block(const std::string& name, int layer) {
    layout.blocks.push_back(ParamBlock{name, layer, layout.total, 0});
  }
  // Adds a view of full shape {rows, cols} (or {rows} when cols == 0), split along split_dim.
  void add(const std::string& prefix, const std::string& base, int layer,
           std::vector<int64_t> full, int split_dim, bool decay, bool expert = false) {
    ParamView v;
    v.name = prefix + base;
    v.base = base;
    v.layer = layer;
    v.block = static_cast<int>(layout.blocks.size()) - 1;
    v.offset = layout.total;
    v.full_shape = full;
    v.shape = full;
    v.split_dim = split_dim;
    v.weight_decay = decay;
    v.expert_parallel = expert;
    const int parts = expert ? ep_size : tp_size;
    if (split_dim >= 0) {
      assert(full[split_dim] % parts == 0 && "validate_chunk checks TP and EP divisibility");
      v.shape[split_dim] = full[split_dim] / parts;
    }
    layout.total += v.numel();
    layout.blocks.back().count += v.numel();
    layout.views.push_back(std::move(v));
  }
};

}  // namespace

ParamLayout make_param_layout(const ModelSpec& m, int first_layer, int num_layers,
                              bool has_embedding, bool has_head, int tp_rank, int tp_size,
                              int ep_rank, int ep_size) {
  assert(tp_rank >= 0 && tp_rank < tp_size && ep_rank >= 0 && ep_rank < ep_size);
  (void)tp_rank;  // shapes only: every rank's shard has the same shape
  (void)ep_rank;
  const int64_t E = m.moe.num_experts, Fe = m.moe.expert_intermediate_size;
  const int64_t C = m.hidden_size, V = m.vocab_size, F = m.intermediate_size;
  const int64_t q_dim = m.num_heads * m.head_dim(), kv_dim = m.kv_dim();
  const int L = static_cast<int>(m.num_layers);
  Builder b{ParamLayout{}, tp_size, ep_size};
  if (has_embedding) {
    b.begin_block("embedding", -1);
    b.add("", "embedding", -1, {V, C}, 0, true);  // vocab-parallel rows
  }
  for (int l = first_layer; l < first_layer + num_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    b.begin_block("layers." + std::to_string(l), l);
    b.add(p, "attn_norm", l, {C}, -1, false);
    b.add(p, "wq", l, {q_dim, C}, 0, true);   // column-parallel: heads
    b.add(p, "wk", l, {kv_dim, C}, 0, true);
    b.add(p, "wv", l, {kv_dim, C}, 0, true);
    b.add(p, "wo", l, {C, q_dim}, 1, true);   // row-parallel
    b.add(p, "mlp_norm", l, {C}, -1, false);
    if (m.moe.is_moe_layer(l)) {
      b.add(p, "router", l, {E, C}, -1, true);  // replicated
      b.add(p, "expert_gate", l, {E * Fe, C}, 0, true, true);  // experts split across EP
      b.add(p, "expert_up", l, {E * Fe, C}, 0, true, true);
      b.add(p, "expert_down", l, {E * C, Fe}, 0, true, true);
      continue;
    }
    b.add(p, "w_gate", l, {F, C}, 0, true);   // column-parallel: MLP width
    b.add(p, "w_up", l, {F, C}, 0, true);
    b.add(p, "w_down", l, {C, F}, 1, true);   // row-parallel
  }
  if (has_head) {
    b.begin_block("head", L);
    b.add("", "final_norm", L, {C}, -1, false);
    b.add("", "lm_head", L, {V, C}, 0, true);  // vocab-parallel logits
  }
  return std::move(b.layout);
}

std::vector<FlatSegment> flat_segments(const ParamLayout& layout, int64_t begin, int64_t end) {
  std::vector<FlatSegment> out;
  for (const ParamView& v : layout.views) {
    const int64_t lo = std::max(begin, v.offset), hi = std::min(end, v.offset + v.numel());
    if (lo >= hi) continue;
    const bool replicated = v.split_dim < 0;
    if (!out.empty() && out.back().end == lo && out.back().weight_decay == v.weight_decay &&
        out.back().tp_replicated == replicated && out.back().expert_parallel == v.expert_parallel) {
      out.back().end = hi;  // merge neighbours with the same flags
    } else {
      out.push_back(FlatSegment{lo, hi, v.weight_decay, replicated, v.expert_parallel});
    }
  }
  return out;
}

}  // namespace meshplan::exec
