// Transformer Engine's training attention path by head dims, GPU and releases, and how a job's knobs take it.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/te_attention_backend.h"

using namespace meshplan;

namespace {
ModelSpec mla_model() {
  ModelSpec m;
  m.hidden_size = 7168;
  m.num_heads = 128;
  m.num_kv_heads = 128;
  m.mla.q_lora_rank = 1536;
  m.mla.kv_lora_rank = 512;
  m.mla.qk_nope_head_dim = 128;
  m.mla.qk_rope_head_dim = 64;
  m.mla.v_head_dim = 128;
  return m;
}

ModelSpec plain_model(int64_t hidden, int64_t heads) {
  ModelSpec m;
  m.hidden_size = hidden;
  m.num_heads = heads;
  m.num_kv_heads = heads;
  return m;
}

FrameworkKnobs megatron() { return framework_knobs(framework_spec(Framework::Megatron)); }
}  // namespace

TEST_CASE("TE's cuDNN attention takes head dims up to 128 on every GPU and release") {
  for (double cc : {8.0, 9.0, 10.0, 10.3})
    for (const char* te : {"1.13", "2.2", "2.5", ""}) {
      CHECK(te_attention_path(cc, 128, 128, te, "9.1.0") == TeAttentionPath::Cudnn);
      CHECK(te_attention_path(cc, 64, 64, te, "") == TeAttentionPath::Cudnn);
    }
}

TEST_CASE("MLA's 192 by 128 heads on Blackwell need TE 2.5 and cuDNN 9.11 or else run unfused") {
  CHECK(te_attention_path(10.0, 192, 128, "2.2", "9.11.0") == TeAttentionPath::Unfused);   // TE refuses > 128
  CHECK(te_attention_path(10.0, 192, 128, "2.4", "") == TeAttentionPath::Unfused);
  CHECK(te_attention_path(10.0, 192, 128, "2.5", "9.10.2") == TeAttentionPath::Unfused);  // cuDNN too old
  CHECK(te_attention_path(10.0, 192, 128, "2.5", "9.11.0") == TeAttentionPath::Cudnn);
  CHECK(te_attention_path(10.0, 192, 128, "", "") == TeAttentionPath::Cudnn);  // today's releases
  // Hopper: up to 256 with cuDNN 9.0 (TE <= 2.4) or 9.5 (TE >= 2.5).
  CHECK(te_attention_path(9.0, 192, 128, "2.2", "9.1.0") == TeAttentionPath::Cudnn);
  CHECK(te_attention_path(9.0, 192, 128, "2.5", "9.1.0") == TeAttentionPath::Unfused);
  CHECK(te_attention_path(9.0, 192, 128, "2.5", "9.5.0") == TeAttentionPath::Cudnn);
  CHECK(te_attention_path(9.0, 192, 128, "2.2", "8.9.7") == TeAttentionPath::Unfused);
}

TEST_CASE("equal head dims above 128 that cuDNN refuses run flash-attn 2 where it allows them") {
  // Nemotron-4's 192 on Blackwell: no cuDNN path in any release, flash-attn 2 up to 192 everywhere.
  CHECK(te_attention_path(10.0, 192, 192, "", "") == TeAttentionPath::FlashAttention);
  CHECK(te_attention_path(9.0, 192, 192, "", "") == TeAttentionPath::Cudnn);
  // 256 on CC 10.x: cuDNN from TE 2.20 with cuDNN 9.23, flash-attn 2 before (on 10.0; not on 10.3).
  CHECK(te_attention_path(10.0, 256, 256, "2.18", "9.23.0") == TeAttentionPath::FlashAttention);
  CHECK(te_attention_path(10.0, 256, 256, "2.20", "9.22.0") == TeAttentionPath::FlashAttention);
  CHECK(te_attention_path(10.0, 256, 256, "2.20", "9.23.0") == TeAttentionPath::Cudnn);
  CHECK(te_attention_path(10.3, 256, 256, "", "") == TeAttentionPath::Cudnn);     // CC 10.x includes GB300's 10.3
  CHECK(te_attention_path(10.3, 256, 256, "2.18", "") == TeAttentionPath::Unfused);  // flash-attn 2: > 192 not on 10.3
  CHECK(te_attention_path(12.0, 256, 256, "", "") == TeAttentionPath::FlashAttention);  // the cuDNN path is CC 10.x only
  CHECK(te_attention_path(8.0, 256, 256, "", "") == TeAttentionPath::FlashAttention);
  CHECK(te_attention_path(10.0, 320, 320, "", "") == TeAttentionPath::Unfused);
  CHECK(te_attention_path(10.0, 100, 100, "", "") == TeAttentionPath::Unfused);  // not a multiple of 8
}

TEST_CASE("a Megatron job on an old TE costs MLA on Blackwell as materialized attention") {
  const ModelSpec m = mla_model();
  CHECK(attention_head_dims(m).qk == 192);
  CHECK(attention_head_dims(m).v == 128);
  FrameworkKnobs k = megatron();
  REQUIRE(k.fused_kernel == FusedAttentionKernel::Cudnn);
  apply_te_attention_path(k, m, 10.0, "2.2", "");
  CHECK(k.attention == AttentionKind::Materialized);
  CHECK(k.te_attention == TeAttentionPath::Unfused);
  CHECK(te_attention_note(k, m, 10.0).find("192/128") != std::string::npos);
  CHECK(te_attention_note(k, m, 10.0).find("materialized") != std::string::npos);

  FrameworkKnobs today = megatron();
  apply_te_attention_path(today, m, 10.0, "", "");
  CHECK(today.attention == AttentionKind::Fused);
  CHECK(today.fused_kernel == FusedAttentionKernel::Cudnn);
  CHECK(te_attention_note(today, m, 10.0).empty());

  FrameworkKnobs hopper = megatron();
  apply_te_attention_path(hopper, m, 9.0, "2.2", "");
  CHECK(hopper.attention == AttentionKind::Fused);
}

TEST_CASE("the flash-attn fallback keeps fused attention on the flash2 curve") {
  const ModelSpec m = plain_model(18432, 96);  // Nemotron-4 340B: 96 heads of 192
  FrameworkKnobs k = megatron();
  apply_te_attention_path(k, m, 10.0, "", "");
  CHECK(k.attention == AttentionKind::Fused);
  CHECK(k.fused_kernel == FusedAttentionKernel::FlashAttention2);
  CHECK(k.te_attention == TeAttentionPath::FlashAttention);
  CHECK(te_attention_note(k, m, 10.0).find("flash-attn 2") != std::string::npos);
}

TEST_CASE("jobs that do not attend through TE's cuDNN attention are left alone") {
  const ModelSpec m = mla_model();
  FrameworkKnobs torchtitan = framework_knobs(framework_spec(Framework::Torchtitan));
  apply_te_attention_path(torchtitan, m, 10.0, "2.2", "9.1.0");
  CHECK(torchtitan.attention == AttentionKind::Fused);
  CHECK(torchtitan.te_attention == TeAttentionPath::Cudnn);
  FrameworkKnobs named = megatron();
  named.attention = AttentionKind::Materialized;  // already costed so (--attention materialized)
  apply_te_attention_path(named, m, 10.0, "2.2", "");
  CHECK(named.te_attention == TeAttentionPath::Cudnn);
  FrameworkKnobs no_cc = megatron();  // a profile without gpu.compute_capability
  apply_te_attention_path(no_cc, m, 0.0, "2.2", "");
  CHECK(no_cc.attention == AttentionKind::Fused);
}
