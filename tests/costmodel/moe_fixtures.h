// MoE test shapes built in C++ (the config reader learns the MoE keys separately): DeepSeek-V3,
// Mixtral 8x7B, and a small MoE for planner equivalence tests.
#pragma once
#include "core/parallel_config.h"

namespace meshplan_test {

/// DeepSeek-V3 from its Hugging Face config.json (deepseek-ai/DeepSeek-V3): hidden 7168, 61 layers,
/// 128 heads, dense intermediate 18432, 256 routed experts of 2048, 1 shared, top-8, first 3 layers
/// dense, MLA q_lora 1536, kv_lora 512, rope 64, nope 128, v 128, vocab 129280, untied.
inline meshplan::ModelSpec deepseek_v3() {
  meshplan::ModelSpec m;
  m.name = "deepseek-v3";
  m.model_type = "deepseek_v3";
  m.hidden_size = 7168; m.num_layers = 61; m.num_heads = 128; m.num_kv_heads = 128;
  m.intermediate_size = 18432; m.vocab_size = 129280; m.max_position_embeddings = 163840;
  m.mlp = meshplan::MlpKind::Gated; m.dropout = false;
  m.moe.num_experts = 256; m.moe.experts_per_token = 8; m.moe.expert_intermediate_size = 2048;
  m.moe.num_shared_experts = 1; m.moe.shared_expert_intermediate_size = 2048;
  m.moe.first_dense_layers = 3; m.moe.layer_freq = 1; m.moe.router_bias = true;
  m.mla.q_lora_rank = 1536; m.mla.kv_lora_rank = 512; m.mla.qk_rope_head_dim = 64;
  m.mla.qk_nope_head_dim = 128; m.mla.v_head_dim = 128;
  return m;
}

/// Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): every layer MoE, 8 experts of 14336, top-2.
inline meshplan::ModelSpec mixtral_8x7b() {
  meshplan::ModelSpec m;
  m.name = "mixtral-8x7b";
  m.model_type = "mixtral";
  m.hidden_size = 4096; m.num_layers = 32; m.num_heads = 32; m.num_kv_heads = 8;
  m.intermediate_size = 14336; m.vocab_size = 32000; m.max_position_embeddings = 32768;
  m.mlp = meshplan::MlpKind::Gated; m.dropout = false;
  m.moe.num_experts = 8; m.moe.experts_per_token = 2; m.moe.expert_intermediate_size = 14336;
  return m;
}

/// A small MoE (16 experts, top-2, 8 layers) whose whole search space is cheap to enumerate.
inline meshplan::ModelSpec small_moe() {
  meshplan::ModelSpec m;
  m.name = "small-moe";
  m.hidden_size = 1024; m.num_layers = 8; m.num_heads = 16; m.num_kv_heads = 8;
  m.intermediate_size = 2816; m.vocab_size = 32000; m.max_position_embeddings = 4096;
  m.mlp = meshplan::MlpKind::Gated; m.dropout = false;
  m.moe.num_experts = 16; m.moe.experts_per_token = 2; m.moe.expert_intermediate_size = 704;
  m.moe.num_shared_experts = 1; m.moe.shared_expert_intermediate_size = 1408;
  m.moe.first_dense_layers = 1;
  return m;
}

}  // namespace meshplan_test

namespace meshplan_test {

/// gpt-oss-120b (openai/gpt-oss-120b config.json): hidden 2880, 36 layers, 64 heads of 64, 8 KV heads,
/// 128 experts of 2880 (SwiGLU), top-4, QKV/attention biases, router bias, vocab 201088, untied.
/// Its alternating 128-token sliding-window attention is not modelled (full attention counted).
inline meshplan::ModelSpec gpt_oss_120b() {
  meshplan::ModelSpec m;
  m.name = "gpt-oss-120b";
  m.model_type = "gpt_oss";
  m.hidden_size = 2880; m.num_layers = 36; m.num_heads = 64; m.num_kv_heads = 8; m.head_dim_override = 64;
  m.intermediate_size = 2880; m.vocab_size = 201088; m.max_position_embeddings = 131072;
  m.mlp = meshplan::MlpKind::Gated; m.dropout = false; m.qkv_bias = true;
  m.moe.num_experts = 128; m.moe.experts_per_token = 4; m.moe.expert_intermediate_size = 2880;
  m.moe.router_bias = true;
  return m;
}

}  // namespace meshplan_test
