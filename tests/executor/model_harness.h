// Runs a small Llama model split any way (tp ranks as threads, pipeline chunks in sequence) for a
// few micro-batches and returns losses and the full (unsharded) gradients, for equivalence tests.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec_test_util.h"
#include "executor/comm_local.h"
#include "executor/model/model_chunk.h"

namespace exec_test {

inline meshplan::ModelSpec tiny_llama(int64_t layers = 2) {
  meshplan::ModelSpec m;
  m.name = "tiny";
  m.model_type = "llama";
  m.hidden_size = 32;
  m.num_layers = layers;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.intermediate_size = 48;
  m.vocab_size = 64;
  m.max_position_embeddings = 64;
  return m;
}

struct Split {
  int tp = 1;
  bool sp = false;
  std::vector<int> layers_per_chunk;  // empty: one chunk with every layer
  meshplan::Recompute recompute = meshplan::Recompute::None;
  meshplan::exec::CpuOptions cpu;
  uint64_t loss_chunk_bytes = 0;  // ChunkSpec::loss_chunk_bytes of the last chunk (0: whole logits)
};

struct RunResult {
  std::vector<float> losses;                         // per micro-batch
  std::map<std::string, std::vector<float>> grads;   // full tensors, by name
  std::map<std::string, std::vector<float>> params;  // full tensors, by name
  uint64_t peak_bytes = 0;                           // TP rank 0's backend
};

/// Writes this rank's shard (v.shape) of `local` into its place in `full` (v.full_shape).
inline void place_shard(std::vector<float>& full, const std::vector<float>& local,
                        const meshplan::exec::ParamView& v, int tp_rank) {
  if (full.empty()) full.assign(static_cast<size_t>(meshplan::exec::shape_numel(v.full_shape)), 0.0f);
  if (v.split_dim < 0) {
    full = local;
  } else if (v.split_dim == 0) {
    std::copy(local.begin(), local.end(), full.begin() + tp_rank * v.numel());
  } else {
    const int64_t rows = v.full_shape[0], cols = v.full_shape[1], lc = v.shape[1];
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(local.begin() + r * lc, local.begin() + (r + 1) * lc,
                full.begin() + r * cols + tp_rank * lc);
    }
  }
}

/// One ChunkSpec per pipeline chunk, in model order, holding `layers_per_chunk` layers each (empty:
/// one chunk with every layer); the first has the embedding, the last the head.
inline std::vector<meshplan::exec::ChunkSpec> chunk_specs(const meshplan::ModelSpec& m,
                                                          std::vector<int> layers_per_chunk, int64_t B,
                                                          int64_t T, meshplan::Recompute recompute,
                                                          uint64_t seed) {
  if (layers_per_chunk.empty()) layers_per_chunk.push_back(static_cast<int>(m.num_layers));
  std::vector<meshplan::exec::ChunkSpec> specs;
  int first = 0;
  for (size_t c = 0; c < layers_per_chunk.size(); ++c) {
    meshplan::exec::ChunkSpec s;
    s.model = m;
    s.first_layer = first;
    s.num_layers = layers_per_chunk[c];
    s.has_embedding = c == 0;
    s.has_head = c + 1 == layers_per_chunk.size();
    s.micro_batch_size = B;
    s.seq_len = T;
    s.recompute = recompute;
    s.seed = seed;
    first += layers_per_chunk[c];
    specs.push_back(s);
  }
  return specs;
}

/// Inputs and targets (B, T) of one micro-batch.
struct MicroBatchTokens {
  std::vector<int32_t> in, tg;
};

/// The B rows from `first_row` of tokens (rows, T+1): inputs are [.., 0:T], targets [.., 1:T+1].
inline MicroBatchTokens micro_batch_tokens(const std::vector<int32_t>& tokens, int64_t first_row, int64_t B,
                                           int64_t T) {
  MicroBatchTokens mb{std::vector<int32_t>(B * T), std::vector<int32_t>(B * T)};
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < T; ++t) {
      mb.in[b * T + t] = tokens[(first_row + b) * (T + 1) + t];
      mb.tg[b * T + t] = tokens[(first_row + b) * (T + 1) + t + 1];
    }
  }
  return mb;
}

/// tokens (M, B, T+1): micro-batch m's inputs are [.., 0:T], targets [.., 1:T+1].
inline RunResult run_model(const meshplan::ModelSpec& m, const Split& split, int64_t B, int64_t T,
                           int M, const std::vector<int32_t>& tokens, uint64_t seed = 7) {
  using namespace meshplan::exec;
  RunResult result;
  result.losses.assign(M, 0.0f);
  std::mutex mu;
  run_local_ranks(split.tp, [&](int rank, Communicator& comm) {
    auto be = make_cpu_backend(split.cpu);
    std::vector<std::unique_ptr<ModelChunk>> model;
    for (ChunkSpec s : chunk_specs(m, split.layers_per_chunk, B, T, split.recompute, seed)) {
      s.loss_chunk_bytes = split.loss_chunk_bytes;
      model.push_back(std::make_unique<ModelChunk>(*be, s, TpContext{rank, split.tp, &comm, split.sp}));
    }
    std::vector<float> losses(M);
    for (int mb = 0; mb < M; ++mb) {  // GPipe order: all forwards, then all backwards
      const MicroBatchTokens tok = micro_batch_tokens(tokens, int64_t{mb} * B, B, T);
      const float* act = nullptr;
      for (auto& chunk : model) act = chunk->forward(mb, MicroBatchInput{tok.in.data(), tok.tg.data(), act});
      losses[mb] = model.back()->loss(mb);
    }
    for (int mb = M - 1; mb >= 0; --mb) {
      const float* grad = nullptr;
      for (size_t c = model.size(); c-- > 0;) {
        grad = model[c]->backward(mb, grad, BackwardOptions{1.0f / M, mb == 0});
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    if (rank == 0) {
      result.losses = losses;
      result.peak_bytes = be->memory().peak_bytes();
    }
    for (auto& chunk : model) {
      for (const ParamView& v : chunk->views()) {
        const float* g = chunk->grads() + v.offset;
        const float* p = chunk->params() + v.offset;
        place_shard(result.grads[v.name], std::vector<float>(g, g + v.numel()), v, rank);
        place_shard(result.params[v.name], std::vector<float>(p, p + v.numel()), v, rank);
      }
    }
  });
  return result;
}

/// Largest rel_error over every gradient tensor of a against b; names the worst in `worst`.
inline double max_grad_error(const RunResult& a, const RunResult& b, std::string* worst = nullptr) {
  double e = 0;
  for (const auto& [name, g] : b.grads) {
    const double r = rel_error(a.grads.at(name), g);
    if (r > e) {
      e = r;
      if (worst) *worst = name;
    }
  }
  return e;
}

}  // namespace exec_test
