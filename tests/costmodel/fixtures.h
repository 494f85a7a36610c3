// Shared test fixtures: Korthikanti et al. 2022 GPT shapes, Llama shapes, an A100-like profile.
#pragma once
#include "core/parallel_config.h"

namespace meshplan_test {

/// GPT shape (MHA, plain 4h GELU MLP, vocab 51200) as in Korthikanti et al. 2022 Table 3.
inline meshplan::ModelSpec gpt(int64_t h, int64_t layers, int64_t heads) {
  meshplan::ModelSpec m;
  m.name = "gpt";
  m.hidden_size = h; m.num_layers = layers; m.num_heads = heads; m.num_kv_heads = heads;
  m.intermediate_size = 4 * h; m.vocab_size = 51200; m.max_position_embeddings = 2048;
  m.mlp = meshplan::MlpKind::Plain; m.biases = true; m.learned_positions = true;
  return m;
}

inline meshplan::ModelSpec llama2_70b() {
  meshplan::ModelSpec m;
  m.name = "llama-2-70b";
  m.hidden_size = 8192; m.num_layers = 80; m.num_heads = 64; m.num_kv_heads = 8;
  m.intermediate_size = 28672; m.vocab_size = 32000; m.max_position_embeddings = 4096;
  m.mlp = meshplan::MlpKind::Gated;
  return m;
}

inline meshplan::ModelSpec llama3_8b() {
  meshplan::ModelSpec m;
  m.name = "llama-3-8b";
  m.hidden_size = 4096; m.num_layers = 32; m.num_heads = 32; m.num_kv_heads = 8;
  m.intermediate_size = 14336; m.vocab_size = 128256; m.max_position_embeddings = 8192;
  m.mlp = meshplan::MlpKind::Gated; m.dropout = false;
  return m;
}

inline meshplan::ModelSpec llama2_7b() {
  meshplan::ModelSpec m;
  m.name = "llama-2-7b";
  m.hidden_size = 4096; m.num_layers = 32; m.num_heads = 32; m.num_kv_heads = 32;
  m.intermediate_size = 11008; m.vocab_size = 32000; m.max_position_embeddings = 4096;
  m.mlp = meshplan::MlpKind::Gated;
  return m;
}

/// A DGX-A100-like profile written out in the test (independent of the shipped YAML).
inline meshplan::HardwareProfile a100() {
  meshplan::HardwareProfile hw;
  hw.name = "test-a100";
  hw.memory_bytes = 80e9; hw.reserved_memory_bytes = 2.5e9; hw.other_memory_bytes = 2e9;
  hw.peak_flops = {{"bf16", 312e12}, {"fp16", 312e12}};
  hw.hbm_bytes_per_s = 2039e9; hw.hbm_efficiency = 0.8;
  hw.gemm_efficiency = {{1e9, 0.45}, {1e11, 0.8}};
  hw.gpus_per_node = 8;
  hw.intra_node = {300e9, 5e-6, 0.8};
  hw.inter_node = {25e9, 10e-6, 0.8};
  return hw;
}

inline meshplan::Problem problem(const meshplan::ModelSpec& m, int64_t gpus, int64_t batch, int64_t seq) {
  meshplan::Problem p;
  p.model = m; p.hardware = a100();
  p.job.gpus = gpus; p.job.global_batch = batch; p.job.seq_len = seq;
  // These fixtures check Korthikanti et al.'s materialized-attention accounting; tests of the fused
  // kernel (the CLI default) set it explicitly.
  p.job.knobs.attention = meshplan::AttentionKind::Materialized;
  return p;
}

/// tp x pp x dp ranks, micro-batches of `mb` sequences, M of them per step; the rest defaults.
inline meshplan::ParallelConfig config(int tp, int pp, int dp, int64_t mb, int64_t M) {
  meshplan::ParallelConfig c;
  c.tp = tp; c.pp = pp; c.dp = dp; c.micro_batch_size = mb; c.num_micro_batches = M;
  return c;
}

}  // namespace meshplan_test
