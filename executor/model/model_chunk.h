// ModelChunk: contiguous Llama layers of one pipeline stage (+ embedding on the first chunk, + final
// norm, LM head and loss on the last), tensor-parallel like Megatron, with one flat parameter
// buffer and one flat gradient buffer (llm.c style: ZeRO shards are offset ranges of them).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/model_spec.h"
#include "core/parallel_config.h"
#include "executor/backend.h"
#include "executor/comm.h"
#include "executor/model/param_layout.h"
#include "executor/model/parallel_groups.h"
#include "executor/tensor.h"

namespace meshplan::exec {

/// What one chunk holds and how it runs. The model must be Llama-style: gated (SwiGLU) MLP, no
/// biases, untied LM head, no learned positions (rotary).
struct ChunkSpec {
  ModelSpec model;
  int first_layer = 0;            // global index of the first transformer layer held
  int num_layers = 0;             // contiguous layers held (may be 0 for an embedding/head-only chunk)
  bool has_embedding = false;     // first pipeline chunk: tokens in
  bool has_head = false;          // last pipeline chunk: final norm + LM head + loss
  int64_t micro_batch_size = 1;   // B sequences per micro-batch
  int64_t seq_len = 0;            // T tokens per sequence (<= max_position_embeddings)
  Recompute recompute = Recompute::None;
  uint64_t seed = 1234;           // global seed: every full tensor comes from (seed, layer, name)
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;
  bool allocate_params = true;    // false (ZeRO-3): hooks.gather_params supplies each block
  bool allocate_grads = true;     // false: hooks.grad_buffer supplies each block's gradients
  uint64_t loss_chunk_bytes = 0;  // the loss's fp32 logits in vocabulary chunks of at most this (0: whole)
};

/// This rank's place in its tensor-parallel group. group may be null when size == 1.
struct TpContext {
  int rank = 0;
  int size = 1;
  Communicator* group = nullptr;
  bool sequence_parallel = false;  // activations between layers sharded by rows of (B*T, C)
};

enum class Pass { Forward, Backward };

/// Callbacks for data parallelism. Each may be empty. `block` indexes ModelChunk::blocks().
struct ChunkHooks {
  /// Before block's weights are read in a pass (backward includes its recompute). Returns the
  /// block's parameters (blocks()[block].count floats, device memory) or nullptr to use the
  /// chunk's flat buffer. ZeRO-3 all-gathers here.
  std::function<const float*(int block, Pass pass)> gather_params;
  /// After the pass no longer needs the weights gather_params gave (ZeRO-3 frees here).
  std::function<void(int block, Pass pass)> release_params;
  /// With allocate_grads == false: where block's gradients accumulate (count floats, +=).
  std::function<float*(int block)> grad_buffer;
  /// After block's backward, when BackwardOptions::grads_final: its gradients are complete, so a
  /// DP bucket may start reducing (blocks arrive in reverse order: head, layers, embedding).
  std::function<void(int block)> grads_ready;
};

/// Inputs of one micro-batch; host pointers for tokens, device pointers for activations.
/// With context parallelism tokens and targets are this CP rank's (B, T/cp) (cp_local_tokens).
struct MicroBatchInput {
  const int32_t* tokens = nullptr;       // (B, T) when has_embedding
  const int32_t* targets = nullptr;      // (B, T) when has_head
  const float* activations = nullptr;    // (rows, C) from the previous stage when !has_embedding
};

struct BackwardOptions {
  float loss_scale = 1.0f;   // dL/d(mean loss of this micro-batch), used by the last chunk;
                             // gradient accumulation over M micro-batches and DP ranks: 1/(M*dp)
  bool grads_final = false;  // last accumulation of the step: fire hooks.grads_ready per block
};

/// Checks what a plan asks of a chunk: Llama shape, tp divides heads, kv heads, MLP width and
/// vocab; with sequence parallelism tp divides B*T. Errors name the field and give a hint.
ErrorList validate_chunk(const ChunkSpec& spec, const TpContext& tp, const std::string& where);
/// The above, and what MoE layers (model.moe) and EP/CP groups need (chunk_validate_moe_cp.cpp):
/// routed experts only, tp == 1 with MoE layers, ep divides num_experts, 2*cp divides seq_len.
ErrorList validate_chunk(const ChunkSpec& spec, const TpContext& tp, const EpCpGroups& groups,
                         const std::string& where);

struct ChunkStash;  // what one micro-batch keeps from forward to backward (model_chunk.cpp)

class ModelChunk {
 public:
  /// Asserts validate_chunk passed. Allocates the flat buffers (when asked) and initialises the
  /// parameters (layout-independent: a tp2/pp2 split holds the same numbers as one rank).
  /// `groups`: EP (MoE layers' experts and all-to-all) and CP (sequence split, ring attention);
  /// with CP the chunk holds T/cp tokens per sequence and its loss is their mean.
  ModelChunk(Backend& backend, const ChunkSpec& spec, const TpContext& tp, ChunkHooks hooks = {},
             EpCpGroups groups = {});
  ~ModelChunk();
  ModelChunk(const ModelChunk&) = delete;
  ModelChunk& operator=(const ModelChunk&) = delete;

  const ChunkSpec& spec() const { return spec_; }
  const TpContext& tp() const { return tp_; }
  const EpCpGroups& groups() const { return groups_; }
  const ParamLayout& layout() const { return layout_; }
  const std::vector<ParamView>& views() const { return layout_.views; }
  const std::vector<ParamBlock>& blocks() const { return layout_.blocks; }
  int64_t num_params() const { return layout_.total; }   // elements of this rank's flat buffer

  float* params() { return params_.empty() ? nullptr : params_.f32(); }  // (num_params) or null
  float* grads() { return grads_.empty() ? nullptr : grads_.f32(); }     // (num_params) or null
  void zero_grads();
  /// dst (count, device) = initial values of flat elements [begin, begin + count).
  void init_params(float* dst, int64_t begin, int64_t count) const;

  /// Rows of the activations passed between stages: B*T, or B*T/tp with sequence parallelism.
  int64_t activation_rows() const;
  int64_t activation_numel() const { return activation_rows() * spec_.model.hidden_size; }

  /// Forward of micro-batch `mb` (any id not currently in flight). Returns the output
  /// activations (rows, C), valid until release_output(mb) or backward(mb); nullptr on the last
  /// chunk (see loss()). The input activations are copied: the caller may reuse its buffer.
  const float* forward(int mb, const MicroBatchInput& in);
  /// Mean cross-entropy of micro-batch mb over its B*T tokens (last chunk). Available from its
  /// forward until the next forward of the same micro-batch id.
  float loss(int mb) const;
  /// Frees mb's output activations early (after the pipeline has sent them).
  void release_output(int mb);
  /// Backward of micro-batch `mb`: grad_output (rows, C) unless last chunk. Adds into the
  /// gradients; frees mb's stash. Returns the input gradient (rows, C), valid until the next
  /// backward call, or nullptr on the first chunk.
  const float* backward(int mb, const float* grad_output, const BackwardOptions& opt);

  int micro_batches_in_flight() const { return static_cast<int>(stash_.size()); }
  /// Bytes one micro-batch keeps from forward to backward (its output included), from the
  /// shapes alone (README's stash table); tests check it against the tracker.
  uint64_t stash_bytes_per_micro_batch() const;
  /// Bytes held by the backend's tensors now / at peak (all chunks on this device together).
  uint64_t held_bytes() const { return backend_.memory().held_bytes(); }
  uint64_t peak_bytes() const { return backend_.memory().peak_bytes(); }

 private:
  struct Runtime;  // dims, TP collectives, per-layer offsets (model_chunk.cpp)

  const float* block_params(int block, Pass pass);
  void done_with_params(int block, Pass pass);
  float* block_grads(int block);
  int layer_block(int i) const { return (spec_.has_embedding ? 1 : 0) + i; }
  int head_block() const { return static_cast<int>(layout_.blocks.size()) - 1; }
  void forward_layers(ChunkStash& st);
  void backward_layers(ChunkStash& st, float* dres, const BackwardOptions& opt);
  void block_done(int block, Pass pass, const BackwardOptions* opt);

  Backend& backend_;
  ChunkSpec spec_;
  TpContext tp_;
  ChunkHooks hooks_;
  EpCpGroups groups_;
  ParamLayout layout_;
  std::unique_ptr<Runtime> rt_;
  Tensor params_;      // (num_params)
  Tensor grads_;       // (num_params)
  Tensor grad_input_;  // (rows, C) returned by backward
  std::map<int, std::unique_ptr<ChunkStash>> stash_;
  std::map<int, float> losses_;  // last chunk: mean loss per micro-batch id
};

}  // namespace meshplan::exec
