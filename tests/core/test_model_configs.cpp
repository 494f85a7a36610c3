// Real Hugging Face config.json files (tests/data/hf_configs, SOURCES.md): each loads and gives the
// model's exact parameter count, derived from its weight shapes; every key they hold is classified.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "core/io.h"
#include "hf_configs.h"

using namespace meshplan;

static const std::string& kConfigs = meshplan_test::kHfConfigs;

static ModelSpec load(const std::string& file) { return meshplan_test::load_hf_config(file); }

// Total and active counts, exact (int64) and in double; the double path equals the exact one.
static void check_counts(const ModelSpec& m, int64_t total, int64_t active) {
  REQUIRE(m.exact_parameters().has_value());
  CHECK(*m.exact_parameters() == total);
  CHECK(m.num_parameters() == static_cast<double>(total));
  REQUIRE(m.exact_active_parameters().has_value());
  CHECK(*m.exact_active_parameters() == active);
  CHECK(m.active_parameters() == static_cast<double>(active));
}

TEST_CASE("Mixtral-8x7B: 8 experts, top-2, every layer MoE") {
  const ModelSpec m = load("mixtral-8x7b-v0.1.json");
  CHECK(m.moe.num_experts == 8);
  CHECK(m.moe.experts_per_token == 2);
  CHECK(m.moe.expert_intermediate_size == 14336);
  CHECK(m.num_moe_layers() == 32);
  CHECK_FALSE(m.tie_word_embeddings);
  // 46,702,792,704: the Hub's safetensors total for mistralai/Mixtral-8x7B-v0.1
  // (model.safetensors.index.json total_size 93,405,585,408 bytes / 2 bytes per bf16 value), also
  // keras-hub's mixtral_presets.py "params". Active: total - 32 layers x 6 unused x 3*4096*14336.
  check_counts(m, 46702792704, 46702792704 - int64_t{32} * 6 * 3 * 4096 * 14336);
  CHECK(m.active_parameters() == Approx(12.88e9).epsilon(1e-3));  // "12.9B active" (Mixtral paper)
}

TEST_CASE("DeepSeek-V3: MLA, 3 dense layers, 256 experts + 1 shared, noaux_tc router bias") {
  const ModelSpec m = load("deepseek-v3.json");
  CHECK(m.mla.enabled());
  CHECK(m.mla.q_lora_rank == 1536);
  CHECK(m.mla.kv_lora_rank == 512);
  CHECK(m.head_dim() == 192);  // qk_nope 128 + qk_rope 64
  CHECK(m.num_kv_heads == 128);
  CHECK(m.moe.num_experts == 256);
  CHECK(m.moe.experts_per_token == 8);
  CHECK(m.moe.num_shared_experts == 1);
  CHECK(m.moe.shared_expert_intermediate_size == 2048);
  CHECK(m.moe.first_dense_layers == 3);
  CHECK(m.moe.router_bias);
  CHECK(m.num_moe_layers() == 58);
  // 671,026,419,200: the main model's count from the checkpoint's tensor headers (61 layers; the
  // multi-token-prediction layer 61 excluded, as transformers' DeepseekV3ForCausalLM drops it),
  // "671B total, 37B activated" in the DeepSeek-V3 report; recounted from the safetensors headers
  // in several public audits. Active = total - 58 x 248 unused experts x 3*7168*2048.
  check_counts(m, 671026419200, 671026419200 - int64_t{58} * 248 * 3 * 7168 * 2048);
  CHECK(m.active_parameters() == Approx(37.55e9).epsilon(1e-3));
  // Group-limited routing (n_group 8, topk_group 4): read, no parameters; num_nextn_predict_layers
  // is not read as MTP modules to train.
  CHECK(m.moe.router_groups == 8);
  CHECK(m.moe.router_group_topk == 4);
  CHECK(m.mtp_layers == 0);
}

TEST_CASE("n_group / topk_group: DeepSeek-V2 and V3 read, written back, and refused out of range") {
  CHECK(load("deepseek-v2-lite.json").moe.router_groups == 1);
  const ModelSpec v25 = load("deepseek-v2.5.json");
  CHECK(v25.moe.router_groups == 8);
  CHECK(v25.moe.router_group_topk == 3);
  auto back = parse_model(model_to_json(load("deepseek-v3.json")), "round-trip.json");
  REQUIRE(back.ok());
  CHECK(back.value().moe.router_groups == 8);
  CHECK(back.value().moe.router_group_topk == 4);
  const std::string base = R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100, "num_local_experts": 8, "num_experts_per_tok": 2, )";
  for (const auto& [tail, field] : {std::pair<std::string, std::string>{R"("n_group": 3, "topk_group": 1})", "n_group"},
                                    {R"("n_group": 4, "topk_group": 5})", "topk_group"},
                                    {R"("n_group": 0})", "n_group"}}) {
    auto bad = parse_model(base + tail, "bad.json");
    INFO(tail);
    REQUIRE(!bad.ok());
    CHECK(bad.error().field == field);
  }
  auto ok = parse_model(base + R"("n_group": 4, "topk_group": 2})", "ok.json");
  REQUIRE(ok.ok());
  CHECK(ok.value().moe.router_groups == 4);
}

TEST_CASE("DeepSeek-V2-Lite and V2.5: MLA without / with Q compression") {
  const ModelSpec lite = load("deepseek-v2-lite.json");
  CHECK(lite.mla.q_lora_rank == 0);  // null
  CHECK_FALSE(lite.moe.router_bias);  // topk_method greedy
  CHECK(lite.num_moe_layers() == 26);
  // 15,706,484,224 ("15.7B total", DeepSeek-V2-Lite model card; the Hub's safetensors total).
  check_counts(lite, 15706484224, 15706484224 - int64_t{26} * 58 * 3 * 2048 * 1408);
  const ModelSpec v25 = load("deepseek-v2.5.json");
  // "236B total, 21B activated" (DeepSeek-V2 report); exact from the same formula.
  CHECK(v25.num_parameters() == Approx(236e9).epsilon(2e-3));
  CHECK(v25.active_parameters() == Approx(21e9).epsilon(2e-2));
}

TEST_CASE("Qwen1.5-MoE-A2.7B: 60 experts, shared expert with gate, implicit QKV biases") {
  const ModelSpec m = load("qwen1.5-moe-a2.7b.json");
  CHECK(m.qkv_bias);
  CHECK_FALSE(m.o_bias);
  CHECK(m.moe.num_shared_experts == 1);
  CHECK(m.moe.shared_expert_intermediate_size == 5632);
  CHECK(m.moe.shared_expert_gate);
  CHECK(m.num_moe_layers() == 24);
  // 14,315,784,192: keras-hub qwen_moe_presets.py "params" (converted from the Hub weights).
  check_counts(m, 14315784192, 14315784192 - int64_t{24} * 56 * 3 * 2048 * 1408);
}

TEST_CASE("Qwen3-30B-A3B: head_dim 128 over hidden 2048, Q/K norms, 128 experts top-8") {
  const ModelSpec m = load("qwen3-30b-a3b.json");
  CHECK(m.head_dim() == 128);
  CHECK(m.qk_norm);
  CHECK_FALSE(m.qkv_bias);
  // 30,532,122,624 total and 3,353,032,704 active: llama.cpp's general.parameter_count for the
  // converted weights, and public per-tensor recounts.
  check_counts(m, 30532122624, 3353032704);
}

TEST_CASE("Falcon-7B: multi-query attention, parallel block, one LayerNorm with bias, tied head") {
  const ModelSpec m = load("falcon-7b-instruct.json");
  CHECK(m.num_kv_heads == 1);  // multi_query wins over num_kv_heads: 71 (new_decoder_architecture false)
  CHECK(m.parallel_attn);
  CHECK(m.norms_per_layer == 1);
  CHECK(m.norm_bias);
  CHECK_FALSE(m.biases);
  CHECK(m.mlp == MlpKind::Plain);
  CHECK(m.intermediate_size == 4 * 4544);
  CHECK(m.tie_word_embeddings);  // FalconConfig keeps PretrainedConfig's default
  // 6,921,720,704 = transformers' FalconForCausalLM.num_parameters() (tied head); the checkpoint
  // stores the head's copy too: 7,217,189,760 = this + 65024*4544 (the Hub's "7.22B").
  check_counts(m, 6921720704, 6921720704);
  CHECK(m.num_parameters() + 65024.0 * 4544 == 7217189760.0);
}

TEST_CASE("Falcon-40B: new decoder architecture, 8 KV heads, two LayerNorms") {
  const ModelSpec m = load("falcon-40b.json");
  CHECK(m.num_kv_heads == 8);
  CHECK(m.norms_per_layer == 2);
  CHECK(m.tie_word_embeddings);
  // The checkpoint holds 41,835,970,560 values (the Hub's safetensors total, "41.8B"), which
  // includes a stored copy of the tied head: 41,835,970,560 - 65024*8192 trainable parameters.
  check_counts(m, 41835970560 - int64_t{65024} * 8192, 41835970560 - int64_t{65024} * 8192);
}

TEST_CASE("Gemma-7B: head_dim 256, GeGLU, tied embedding") {
  const ModelSpec m = load("gemma-7b.json");
  CHECK(m.head_dim() == 256);
  CHECK(m.mlp == MlpKind::Gated);
  CHECK(m.tie_word_embeddings);  // GemmaConfig default
  // 8,537,680,896: keras-hub gemma_presets.py "params" for gemma_7b_en.
  check_counts(m, 8537680896, 8537680896);
}

TEST_CASE("Qwen2-7B: implicit QKV biases") {
  const ModelSpec m = load("qwen2-7b.json");
  CHECK(m.qkv_bias);
  // 7,615,616,512: llama.cpp general.parameter_count of Qwen2/Qwen2.5-7B (same shapes).
  check_counts(m, 7615616512, 7615616512);
}

TEST_CASE("every key of the shipped Hugging Face configs is read, harmless or refused") {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".json") continue;
    auto text = read_text_file(entry.path().string());
    REQUIRE(text.ok());
    INFO(entry.path().filename().string());
    CHECK(unclassified_model_keys(text.value()).empty());
    ++files;
  }
  CHECK(files >= 10);
}

TEST_CASE("every shipped config round-trips through model_to_json with the same counts") {
  for (const auto& entry : std::filesystem::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".json") continue;
    const ModelSpec m = load(entry.path().filename().string());
    auto back = parse_model(model_to_json(m), "roundtrip.json");
    INFO(entry.path().filename().string() << ": " << (back.ok() ? "" : back.error().one_line()));
    REQUIRE(back.ok());
    CHECK(model_to_json(back.value()) == model_to_json(m));
    CHECK(back.value().exact_parameters() == m.exact_parameters());
    CHECK(back.value().exact_active_parameters() == m.exact_active_parameters());
  }
}

TEST_CASE("GPT-OSS-120B: gated (SwiGLU) experts, 128 experts top-4") {
  // The config.json keys of openai/gpt-oss-120b that set the shapes (as in
  // validation/megatron-bridge-moe-h100.yaml). GptOssExperts holds gate_up_proj [E, h, 2f] and
  // down_proj [E, f, h] (transformers models/gpt_oss/modeling_gpt_oss.py, commit 00d4b3d2).
  auto r = parse_model(
      "{model_type: gpt_oss, hidden_size: 2880, num_hidden_layers: 36, num_attention_heads: 64, "
      "num_key_value_heads: 8, head_dim: 64, intermediate_size: 2880, num_local_experts: 128, "
      "num_experts_per_tok: 4, attention_bias: true, vocab_size: 201088, max_position_embeddings: 131072, "
      "tie_word_embeddings: false}",
      "gpt-oss-120b.yaml");
  REQUIRE(r.ok());
  const ModelSpec m = r.value();
  CHECK(m.mlp == MlpKind::Gated);
  // From the weight shapes of modeling_gpt_oss.py, per layer: 2 norms 5,760; q/k/v/o 26,542,080 + biases
  // 8,000; sinks 64; router 368,640 + bias 128; 128 experts x (3 x 2880 x 2880 + 2 x 2880 + 2880 bias)
  // = 3,186,155,520. x 36 = 115,670,886,912, + embedding and LM head 2 x 579,133,440 + final norm 2,880:
  // 116,829,156,672, OpenAI's "116.83B total". Active: 4 of 128 experts, 5,711,982,912; without the
  // input embedding 5,132,849,472, the model card's "5.13B active".
  CHECK(m.exact_parameters() == 116829156672);
  CHECK(m.exact_active_parameters() == 5711982912);
  CHECK(m.num_parameters() == Approx(116.83e9).epsilon(1e-3));
}
