// validate_chunk: what the executor's Llama model needs of a model shape and a TP split.
#include <string>

#include "executor/model/model_chunk.h"

namespace meshplan::exec {

namespace {
void require_divides(ErrorList& errs, const std::string& where, const char* field, int64_t value,
                     int tp) {
  if (value % tp != 0) {
    errs.push_back(make_error(where, field, std::to_string(value),
                              "not divisible by tp=" + std::to_string(tp),
                              "choose a tp that divides " + std::string(field)));
  }
}
}  // namespace

ErrorList validate_chunk(const ChunkSpec& s, const TpContext& tp, const std::string& where) {
  ErrorList errs;
  const ModelSpec& m = s.model;
  if (m.mlp != MlpKind::Gated || m.biases || m.learned_positions || m.tie_word_embeddings) {
    errs.push_back(make_error(where, "model_type", m.model_type,
                              "the executor trains Llama-style models only",
                              "use a gated MLP, no biases, rotary positions, untied LM head"));
  }
  // Its layer has the two pre-norms and no Q/K norms: a Gemma 2/3 or Qwen3 layer would train as another model.
  if (m.norms_per_layer != 2 || m.qk_norm) {
    errs.push_back(make_error(where, m.qk_norm ? "qk_norm" : "norms_per_layer",
                              m.qk_norm ? "true" : std::to_string(m.norms_per_layer),
                              "the executor's Llama layer has two pre-norms and no Q/K norms",
                              "run a Llama-style model (norms_per_layer 2, no qk_norm)"));
  }
  if (m.hidden_size <= 0 || m.num_heads <= 0 || m.num_kv_heads <= 0 || m.vocab_size <= 0 ||
      m.intermediate_size <= 0 || m.hidden_size % m.num_heads != 0 ||
      m.num_heads % m.num_kv_heads != 0 || m.head_dim() % 2 != 0) {
    errs.push_back(make_error(where, "hidden_size", std::to_string(m.hidden_size),
                              "needs heads | hidden, kv_heads | heads and an even head dimension"));
    return errs;
  }
  if (s.seq_len <= 0 || s.micro_batch_size <= 0) {
    errs.push_back(make_error(where, "seq_len", std::to_string(s.seq_len),
                              "sequence length and micro-batch size must be positive"));
  }
  // The cost model skips the keys outside a sliding window; the executor's attention is full causal,
  // so running such a model would measure something other than what was predicted.
  if (m.sliding_window > 0 && m.sliding_window_layers > 0 && s.seq_len > m.sliding_window) {
    errs.push_back(make_error(where, "sliding_window", std::to_string(m.sliding_window),
                              "the executor's attention is full causal (no sliding window) at seq_len=" +
                                  std::to_string(s.seq_len),
                              "drop sliding_window from the model file, or run with --seq <= the window"));
  }
  if (m.attention_chunk > 0 && m.chunked_layers > 0 && s.seq_len > m.attention_chunk) {
    errs.push_back(make_error(where, "attention_chunk_size", std::to_string(m.attention_chunk),
                              "the executor's attention is full causal (no chunked attention) at seq_len=" +
                                  std::to_string(s.seq_len),
                              "run with --seq <= the chunk, or drop attention_chunk_size from the model file"));
  }
  if (m.max_position_embeddings > 0 && s.seq_len > m.max_position_embeddings) {
    errs.push_back(make_error(where, "seq_len", std::to_string(s.seq_len),
                              "longer than max_position_embeddings=" +
                                  std::to_string(m.max_position_embeddings)));
  }
  if (s.num_layers < 0 || s.first_layer < 0 || s.first_layer + s.num_layers > m.num_layers) {
    errs.push_back(make_error(where, "num_layers", std::to_string(s.num_layers),
                              "layers outside the model's " + std::to_string(m.num_layers)));
  }
  if (tp.size < 1 || tp.rank < 0 || tp.rank >= tp.size) {
    errs.push_back(make_error(where, "tp", std::to_string(tp.size), "bad tensor-parallel rank"));
    return errs;
  }
  require_divides(errs, where, "num_attention_heads", m.num_heads, tp.size);
  require_divides(errs, where, "num_key_value_heads", m.num_kv_heads, tp.size);
  require_divides(errs, where, "intermediate_size", m.intermediate_size, tp.size);
  require_divides(errs, where, "vocab_size", m.vocab_size, tp.size);
  if (tp.sequence_parallel && tp.size > 1) {
    require_divides(errs, where, "micro_batch_size*seq_len", s.micro_batch_size * s.seq_len,
                    tp.size);
  }
  return errs;
}

}  // namespace meshplan::exec
