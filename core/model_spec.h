// ModelSpec: the shape of a decoder-only transformer, read from Hugging Face / GPT-2 config keys.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/error.h"
#include "core/moe_spec.h"

namespace meshplan {

enum class MlpKind { Gated, Plain };  // Gated = SwiGLU (3 matrices), Plain = GELU 4h MLP (2 matrices)

struct ModelSpec {
  std::string name;                 // file stem or explicit `name:` key
  std::string source;               // citation (`source:` key), empty when not given
  std::string model_type;           // "llama", "gpt2", ...
  int64_t hidden_size = 0;          // h
  int64_t num_layers = 0;           // L
  int64_t num_heads = 0;            // a
  int64_t num_kv_heads = 0;         // g (GQA groups); == a for multi-head attention
  int64_t intermediate_size = 0;    // f, MLP width (per gate for gated MLPs)
  int64_t vocab_size = 0;           // V
  int64_t max_position_embeddings = 0;
  MlpKind mlp = MlpKind::Gated;
  bool tie_word_embeddings = false;
  bool learned_positions = false;   // GPT-2 style absolute position table (s_max x h parameters)
  bool biases = false;              // GPT-2 style biases on linear layers
  bool dropout = true;              // trained with dropout: activations stash 1-byte dropout masks
                                    // (Korthikanti et al.); false for Llama-family configs
  int64_t head_dim_override = 0;   // explicit `head_dim` (Gemma); 0 = hidden_size / num_heads
  bool qkv_bias = false;            // biases on Q, K, V only (Qwen2)
  bool parallel_attn = false;       // attention and MLP read the same norm output (Falcon, GPT-J)
  MoeSpec moe;                      // experts; moe.enabled() == false for dense models
  MlaSpec mla;                      // latent attention; mla.enabled() == false otherwise
  double rope_theta = 0;            // RoPE base (`rope_theta`); 0 = not given. No cost term depends
                                    // on it; exports write it (Megatron --rotary-base, NeMo rotary_base)
  // Added for issue 11's model files (Falcon, Qwen3, Llama attention_bias):
  int64_t norms_per_layer = 2;      // norms in one layer: 2 (pre-attention, pre-MLP); 1 for Falcon-7B's
                                    // parallel block (input_layernorm only); 4 for Gemma 2 / 3 (post-
                                    // attention and post-feedforward norms besides the two pre-norms)
  bool norm_bias = false;           // LayerNorm with a bias (Falcon) although linear layers have none
  bool o_bias = false;              // bias on the attention output projection (Llama attention_bias)
  bool qk_norm = false;             // RMSNorm of head_dim on each Q and K head (Qwen3): 2 * head_dim
  // Sliding-window attention (no parameters; the fused kernels skip keys outside the window):
  int64_t sliding_window = 0;       // tokens each query attends back to; 0 = none
  int64_t sliding_window_layers = 0;  // how many of the L layers use it (GPT-OSS: every other one)
  // Chunked attention (Llama 4's iRoPE; no parameters): on chunked_layers of the L layers a query attends
  // to the keys of its own attention_chunk-token block only (transformers create_chunked_causal_mask).
  int64_t attention_chunk = 0;      // tokens per block; 0 = none
  int64_t chunked_layers = 0;       // how many of the L layers (Llama 4: the 3 of every 4 with RoPE)
  // Keys that add no parameter (expert biases aside) but decide which element-wise passes a framework
  // runs around the GEMMs (core/io_model_eager.cpp; costed in costmodel/megatron_eager_ops.h):
  double glu_clamp = 0;             // gated-MLP inputs clamped to +-glu_clamp (GPT-OSS swiglu_limit 7); 0 = none
  bool expert_bias = false;         // routed experts carry biases (GPT-OSS gate_up_proj_bias, down_proj_bias),
                                    // counted with the expert (core/model_params.h)
  bool attention_sinks = false;     // one learned sink logit per head (GPT-OSS self_attn.sinks), counted
  double rope_yarn_factor = 0;      // rope_scaling YaRN factor (GPT-OSS 32) where it scales RoPE by mscale != 1
                                    // (not DeepSeek-V3's: mscale = mscale_all_dim); 0 = none
  // Multi-token prediction trained with the model (core/mtp_config.h; costmodel/mtp.h):
  int64_t mtp_layers = 0;           // MTP modules (Megatron-Core --mtp-num-layers), on the last pipeline
                                    // stage; 0 = none. meshplan key `mtp_layers` (or --mtp-layers), not
                                    // read from num_nextn_predict_layers, which only says the checkpoint has them
  int64_t checkpoint_mtp_layers = 0;  // num_nextn_predict_layers: MTP modules the config describes (reports
                                      // suggest --mtp-layers when they are not trained); no cost, no count

  int64_t head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden_size / num_heads; }
  int64_t kv_dim() const { return head_dim() * num_kv_heads; }  // width of K (and of V)
  // Width of Q and of the attention output (Megatron-Core's kv_channels x num_attention_heads): h unless
  // head_dim is set apart from it (Gemma 7B 16 x 256 = 4096 on h 3072; Qwen3-30B-A3B 32 x 128 on 2048;
  // GPT-OSS 64 x 64 on 2880). MLA models use their own widths (MlaSpec).
  int64_t q_dim() const { return head_dim() * num_heads; }

  /// Parameters of one transformer layer (attention + MLP + 2 norms [+ biases]). For MoE models
  /// this is the MEAN over layers (total layer parameters / L), so L * layer_parameters() is exact.
  double layer_parameters() const;
  /// Attention block of one layer: Q, K, V, O projections (MLA: the low-rank factors and their norms),
  /// plus QKV/linear biases. Same for every layer.
  double attention_parameters() const;
  /// A dense MLP of width intermediate_size (used by dense models and MoE's first dense layers).
  double dense_mlp_parameters() const;
  /// One routed expert (gated: 3 * h * expert_intermediate_size). 0 for dense models.
  double expert_parameters() const;
  /// The part of an MoE layer's MLP that every rank of the expert group replicates: shared experts
  /// and the router (h x E [+ E bias]). 0 for dense models.
  double moe_replicated_parameters() const;
  /// Layers whose MLP is an MoE (0 for dense models).
  int64_t num_moe_layers() const;
  /// Layer norms (+ their biases) of one layer.
  double layer_norm_parameters() const;
  /// Norms of one layer beyond the two pre-norms (Gemma 2 / 3's post-attention and post-feedforward
  /// norms: 2); each keeps its input for backward and adds an element-wise pass. 0 otherwise.
  int64_t extra_norms_per_layer() const { return norms_per_layer > 2 ? norms_per_layer - 2 : 0; }
  /// Parameters a token uses in one forward pass: routed experts counted k times, not E times.
  double active_parameters() const;
  /// Token embedding (+ learned positions) parameters.
  double embedding_parameters() const;
  /// LM head parameters (0 when tied to the embedding).
  double lm_head_parameters() const;
  /// Total trainable parameters: embedding + L layers + final norm + LM head (the main model; MTP
  /// modules are counted apart, mtp_parameters()).
  double num_parameters() const;
  /// Weights of the mtp_layers MTP modules (core/model_params.h mtp_module; the embedding and LM head
  /// are the main model's). 0 without MTP.
  double mtp_parameters() const;
  /// One MTP module's transformer layer: attention + norms + the MLP of the model's last layer kind.
  double mtp_layer_parameters() const;
  /// num_parameters() in exact integer arithmetic; nullopt when it overflows int64.
  std::optional<int64_t> exact_parameters() const;
  /// active_parameters() in exact integer arithmetic; nullopt when it overflows int64.
  std::optional<int64_t> exact_active_parameters() const;
};

/// ", 12.9B active" for a mixture-of-experts model (active_parameters() in human_count form),
/// "" for a dense one, then ", + 11.5B in MTP modules" when the model trains MTP modules: table
/// headers append it after the total.
std::string active_parameters_text(const ModelSpec& m);

/// Checks shapes: positive sizes, heads | hidden (unless head_dim is given), kv_heads | heads, and
/// the MoE/MLA fields' ranges (DESIGN.md "Accepted ranges"). `file` names the source.
ErrorList validate_model(const ModelSpec& m, const std::string& file);
/// The ranges of head_dim, the MoE and MLA fields and the norm layout (core/model_ranges.cpp);
/// appends to `errors`. Called by validate_model once the basic sizes are in range.
void validate_model_architecture(const ModelSpec& m, const std::string& file, ErrorList& errors);

}  // namespace meshplan
