// ModelChunk: flat buffers, initialisation, and per-micro-batch forward/backward over the blocks
// (embedding, layers, head) with the recompute mode's stash and the DP hooks.
#include "executor/model/model_chunk.h"

#include <algorithm>
#include <cassert>

#include "core/loss_chunk.h"
#include "executor/model/embed_head.h"
#include "executor/model/init.h"
#include "executor/model/layer.h"

namespace meshplan::exec {

struct ModelChunk::Runtime {
  Runtime(Backend& be, const TpContext& tp, const LayerDims& dims_in, const EpCpGroups& groups)
      : dims(dims_in), ops(be, tp, dims_in.N, dims_in.C), ctx{be, ops, dims, &groups} {}
  LayerDims dims;
  TpOps ops;
  LayerContext ctx;
  std::vector<LayerOffsets> offsets;  // per local layer (dense and MoE layers differ)
  VocabShard vocab;
};

struct ChunkStash {
  Tensor tokens;                   // (N) i32, first chunk
  std::vector<Tensor> resid;       // num_layers + 1 of (Nl, C): input, then each layer's output
  std::vector<LayerStash> layers;  // per layer; empty stashes with full recompute
  HeadStash head;                  // last chunk
};

namespace {
LayerDims make_dims(const ChunkSpec& s, const TpContext& tp, const EpCpGroups& g) {
  const ModelSpec& m = s.model;
  LayerDims d;
  d.B = s.micro_batch_size;
  d.T = s.seq_len / g.cp.size;
  d.T_full = s.seq_len;
  d.experts = m.moe.num_experts;
  d.top_k = m.moe.experts_per_token;
  d.fe = m.moe.expert_intermediate_size;
  d.C = m.hidden_size;
  d.nh = m.num_heads / tp.size;
  d.nkv = m.num_kv_heads / tp.size;
  d.D = m.head_dim();
  d.f = m.intermediate_size / tp.size;
  d.N = d.B * d.T;
  d.Nl = tp.sequence_parallel && tp.size > 1 ? d.N / tp.size : d.N;
  d.eps = s.norm_eps;
  d.theta = s.rope_theta;
  return d;
}
}  // namespace

ModelChunk::ModelChunk(Backend& backend, const ChunkSpec& spec, const TpContext& tp,
                       ChunkHooks hooks, EpCpGroups groups)
    : backend_(backend), spec_(spec), tp_(tp), hooks_(std::move(hooks)), groups_(groups) {
  assert(validate_chunk(spec, tp, groups, "ModelChunk").empty());
  layout_ = make_param_layout(spec.model, spec.first_layer, spec.num_layers, spec.has_embedding,
                              spec.has_head, tp.rank, tp.size, groups.ep.rank, groups.ep.size);
  rt_ = std::make_unique<Runtime>(backend, tp, make_dims(spec, tp, groups_), groups_);
  for (int i = 0; i < spec.num_layers; ++i) rt_->offsets.push_back(layer_offsets(layout_, layer_block(i)));
  rt_->vocab = VocabShard{tp.rank * (spec.model.vocab_size / tp.size),
                          spec.model.vocab_size / tp.size};
  if (spec.allocate_params) {
    params_ = Tensor(backend, DType::F32, {layout_.total});
    init_params(params_.f32(), 0, layout_.total);
  }
  if (spec.allocate_grads) {
    grads_ = Tensor(backend, DType::F32, {layout_.total});
    zero_grads();
  }
}

ModelChunk::~ModelChunk() = default;

void ModelChunk::zero_grads() {
  if (!grads_.empty()) backend_.fill(grads_.f32(), 0.0f, layout_.total);
}

void ModelChunk::init_params(float* dst, int64_t begin, int64_t count) const {
  assert(begin >= 0 && begin + count <= layout_.total);
  for (const ParamView& v : layout_.views) {
    const int64_t lo = std::max(begin, v.offset), hi = std::min(begin + count, v.offset + v.numel());
    if (lo >= hi) continue;
    const std::vector<float> shard =
        shard_of(full_initial_values(v, spec_.seed, spec_.model.num_layers), v,
                 v.expert_parallel ? groups_.ep.rank : tp_.rank);
    backend_.copy_from_host(dst + (lo - begin), shard.data() + (lo - v.offset),
                            static_cast<uint64_t>(hi - lo) * 4);
  }
}

int64_t ModelChunk::activation_rows() const { return rt_->dims.Nl; }

const float* ModelChunk::block_params(int block, Pass pass) {
  if (hooks_.gather_params) {
    if (const float* p = hooks_.gather_params(block, pass)) return p;
  }
  assert(!params_.empty() && "no parameters: allocate_params is false and no gather hook gave any");
  return params_.f32() + layout_.blocks[block].offset;
}

void ModelChunk::done_with_params(int block, Pass pass) {
  if (hooks_.release_params) hooks_.release_params(block, pass);
}

float* ModelChunk::block_grads(int block) {
  if (!grads_.empty()) return grads_.f32() + layout_.blocks[block].offset;
  assert(hooks_.grad_buffer && "allocate_grads is false: grad_buffer hook required");
  return hooks_.grad_buffer(block);
}

void ModelChunk::block_done(int block, Pass pass, const BackwardOptions* opt) {
  done_with_params(block, pass);
  if (opt != nullptr && opt->grads_final && hooks_.grads_ready) hooks_.grads_ready(block);
}

const float* ModelChunk::forward(int mb, const MicroBatchInput& in) {
  assert(stash_.count(mb) == 0 && "micro-batch already in flight");
  const LayerDims& d = rt_->dims;
  auto st = std::make_unique<ChunkStash>();
  st->resid.resize(static_cast<size_t>(spec_.num_layers) + 1);
  st->resid[0] = Tensor(backend_, DType::F32, {d.Nl, d.C});
  if (spec_.has_embedding) {
    assert(in.tokens != nullptr);
    st->tokens = Tensor(backend_, DType::I32, {d.N});
    backend_.copy_from_host(st->tokens.data(), in.tokens, st->tokens.bytes());
    embedding_forward(rt_->ctx, block_params(0, Pass::Forward), st->tokens.i32(), rt_->vocab,
                      st->resid[0].f32());
    block_done(0, Pass::Forward, nullptr);
  } else {
    assert(in.activations != nullptr);
    backend_.copy(st->resid[0].data(), in.activations, st->resid[0].bytes());
  }
  forward_layers(*st);
  if (spec_.has_head) {
    assert(in.targets != nullptr);
    HeadStash& h = st->head;
    h.targets = Tensor(backend_, DType::I32, {d.N});
    backend_.copy_from_host(h.targets.data(), in.targets, h.targets.bytes());
    const float* p = block_params(head_block(), Pass::Forward);
    const ParamView& norm = *layout_.find("final_norm");
    const ParamView& head = *layout_.find("lm_head");
    const int64_t base = layout_.blocks[head_block()].offset;
    head_forward(rt_->ctx, p + (norm.offset - base), p + (head.offset - base),
                 st->resid.back().f32(), rt_->vocab, spec_.loss_chunk_bytes, h);
    block_done(head_block(), Pass::Forward, nullptr);
    losses_[mb] = static_cast<float>(backend_.sum(h.losses.f32(), d.N) / static_cast<double>(d.N));
  }
  const float* out = spec_.has_head ? nullptr : st->resid.back().f32();
  stash_[mb] = std::move(st);
  return out;
}

void ModelChunk::forward_layers(ChunkStash& st) {
  const LayerDims& d = rt_->dims;
  // Kept only where the backend's backward reads them (the CPU's); flash-style backends recompute.
  const bool keep_probs = spec_.recompute == Recompute::None && !groups_.cp.active() &&
                          backend_.attention_backward_reads_probs();
  for (int i = 0; i < spec_.num_layers; ++i) {
    const int block = layer_block(i);
    const LayerWeights w = layer_weights(block_params(block, Pass::Forward), rt_->offsets[i]);
    st.resid[i + 1] = Tensor(backend_, DType::F32, {d.Nl, d.C});
    LayerStash ls;
    layer_forward(rt_->ctx, w, st.resid[i].f32(), st.resid[i + 1].f32(), ls, keep_probs);
    // Full recompute keeps only the layer inputs (resid); ls is dropped here.
    st.layers.push_back(spec_.recompute == Recompute::Full ? LayerStash{} : std::move(ls));
    block_done(block, Pass::Forward, nullptr);
  }
}

uint64_t ModelChunk::stash_bytes_per_micro_batch() const {
  const LayerDims& d = rt_->dims;
  const int64_t resid = d.Nl * d.C;
  int64_t total = resid;  // the chunk's input copy
  int64_t narrow = 0;     // of which kept in bf16: h1, h2, act, q, k, v, att (model/gemm_stash.h)
  const bool bf16_stash = backend_.keeps_bf16_gemm_stash();
  const bool bf16_attention = !groups_.cp.active() && backend_.keeps_bf16_attention_stash(d.attention());
  for (int i = 0; i < spec_.num_layers; ++i) {
    int64_t layer = resid;  // the layer's output (the next layer's input)
    if (spec_.recompute != Recompute::Full) {
      layer += 2 * d.Nl + 3 * resid;                     // rstd1, rstd2, h1, x_mid, h2
      layer += d.N * (2 * d.qd() + 2 * d.kvd());         // q, k, v, att
      if (bf16_attention) narrow += d.N * (2 * d.qd() + 2 * d.kvd());
      layer += d.B * d.nh * d.T;                         // lse
      if (rt_->offsets[i].moe()) {
        // recv_x, gate, up, act of the rows this rank's experts receive (balanced routing:
        // N*k rows; the real count depends on the router) and the combined outputs (N*k, C).
        const int64_t rows = d.N * d.top_k;
        layer += rows * d.C + 3 * rows * d.fe + rows * d.C;
      } else {
        layer += 3 * d.N * d.f;                          // gate, up, act
        if (bf16_stash) narrow += resid + d.N * d.f;     // h2, act
      }
      if (bf16_stash) narrow += resid;                   // h1
      if (spec_.recompute == Recompute::None && !groups_.cp.active() &&
          backend_.attention_backward_reads_probs()) {
        layer += d.B * d.nh * d.T * d.T;                 // probs
      }
    }
    total += layer;
  }
  if (spec_.has_embedding) total += d.N;               // tokens
  if (spec_.has_head) {
    // Chunked losses keep no logits (core/loss_chunk.h): only the row statistics.
    const bool chunked = loss_chunk_columns(d.N, rt_->vocab.size, spec_.loss_chunk_bytes) < rt_->vocab.size;
    total += d.N + d.Nl + resid + (chunked ? 0 : d.N * rt_->vocab.size) + 4 * d.N;
  }
  return static_cast<uint64_t>(total) * 4 - static_cast<uint64_t>(narrow) * 2;  // fp32/int32, bf16
}

float ModelChunk::loss(int mb) const {
  auto it = losses_.find(mb);
  assert(spec_.has_head && it != losses_.end() && "loss of a micro-batch without forward");
  return it->second;
}

void ModelChunk::release_output(int mb) {
  auto it = stash_.find(mb);
  assert(it != stash_.end() && !spec_.has_head);
  // The first chunk with no layers has no copy of its own: its output is also its input, which
  // backward does not need (the embedding backward reads only tokens).
  it->second->resid.back().reset();
}

const float* ModelChunk::backward(int mb, const float* grad_output, const BackwardOptions& opt) {
  auto it = stash_.find(mb);
  assert(it != stash_.end() && "backward of a micro-batch without forward");
  ChunkStash& st = *it->second;
  const LayerDims& d = rt_->dims;
  Tensor dres(backend_, DType::F32, {d.Nl, d.C});  // dL/d(residual stream), flows down the chunk
  if (spec_.has_head) {
    const int hb = head_block();
    const float* p = block_params(hb, Pass::Backward);
    float* g = block_grads(hb);
    const int64_t base = layout_.blocks[hb].offset;
    const int64_t on = layout_.find("final_norm")->offset - base;
    const int64_t oh = layout_.find("lm_head")->offset - base;
    head_backward(rt_->ctx, p + on, p + oh, g + on, g + oh, st.resid.back().f32(), rt_->vocab,
                  opt.loss_scale, st.head, dres.f32());
    st.head = HeadStash{};
    block_done(hb, Pass::Backward, &opt);
  } else {
    assert(grad_output != nullptr);
    backend_.copy(dres.data(), grad_output, dres.bytes());
  }
  backward_layers(st, dres.f32(), opt);
  const float* result = nullptr;
  if (spec_.has_embedding) {
    // The embedding's backward reads no weights: no gather_params/release_params for it.
    embedding_backward(rt_->ctx, block_grads(0), dres.f32(), st.tokens.i32(), rt_->vocab);
    if (opt.grads_final && hooks_.grads_ready) hooks_.grads_ready(0);
  } else {
    grad_input_ = std::move(dres);
    result = grad_input_.f32();
  }
  stash_.erase(it);
  return result;
}

void ModelChunk::backward_layers(ChunkStash& st, float* dres, const BackwardOptions& opt) {
  const LayerDims& d = rt_->dims;
  for (int i = spec_.num_layers - 1; i >= 0; --i) {
    const int block = layer_block(i);
    const LayerWeights w = layer_weights(block_params(block, Pass::Backward), rt_->offsets[i]);
    const LayerGrads g = layer_grads(block_grads(block), rt_->offsets[i]);
    st.resid[i + 1].reset();
    if (spec_.recompute == Recompute::Full) {
      LayerStash ls;  // re-run this layer's forward from its kept input
      Tensor y(backend_, DType::F32, {d.Nl, d.C});
      layer_forward(rt_->ctx, w, st.resid[i].f32(), y.f32(), ls, true);
      y.reset();
      layer_backward(rt_->ctx, w, g, st.resid[i].f32(), ls, dres);
    } else {
      layer_backward(rt_->ctx, w, g, st.resid[i].f32(), st.layers[i], dres);
      st.layers[i] = LayerStash{};
    }
    block_done(block, Pass::Backward, &opt);
  }
}

}  // namespace meshplan::exec
