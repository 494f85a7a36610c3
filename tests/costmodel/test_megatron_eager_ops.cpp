// Megatron-Core's eager passes for GPT-OSS-style layers (costmodel/megatron_eager_ops.h): the bytes by
// hand, each switch (framework, fused grouped MLP, fused YaRN RoPE, model features) and the layer time.
#include <catch2/catch.hpp>

#include "costmodel/compute_time.h"
#include "costmodel/megatron_eager_ops.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ModelSpec gpt_oss_with_features() {
  ModelSpec m = meshplan_test::gpt_oss_120b();
  m.glu_clamp = 7.0;
  m.expert_bias = true;
  m.rope_yarn_factor = 32.0;
  return m;
}
Problem megatron_problem(const ModelSpec& m) {
  Problem p = meshplan_test::problem(m, 64, 1280, 4096);
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.knobs.megatron_core_model_code = true;
  return p;
}
ParallelConfig ep8() {
  ParallelConfig c;
  c.tp = 1; c.pp = 4; c.dp = 16; c.ep = 8; c.etp = 1; c.zero_stage = 1;
  c.micro_batch_size = 1; c.num_micro_batches = 80;
  return c;
}
}  // namespace

TEST_CASE("GPT-OSS under Megatron-Core: clamp, expert-bias and unfused YaRN bytes by hand") {
  const Problem p = megatron_problem(gpt_oss_with_features());
  // Routed rows: load 1 x top-4 x 4096 tokens = 16384, f = 2880, h = 2880, bf16 (e = 2), every layer MoE.
  // Clamp: forward 8 f e, backward 10 f e per row; bias loop: 6 h e each way per row.
  // YaRN: q and k of 4096 tokens x (64 + 8) heads x 64 = 18,874,368 elements, 10 e each way.
  const double rows = 16384, f = 2880, h = 2880, e = 2, q = 4096.0 * 72 * 64;
  const EagerBytes b = megatron_eager_op_bytes(p, ep8());
  CHECK(b.forward == Approx(rows * e * (8 * f + 6 * h) + 10 * q * e));
  CHECK(b.backward == Approx(rows * e * (10 * f + 6 * h) + 10 * q * e));
}

TEST_CASE("Megatron eager passes: off outside Megatron-Core, per switch, and for models without them") {
  const ParallelConfig c = ep8();
  const double rows = 16384, f = 2880, h = 2880, e = 2, q = 4096.0 * 72 * 64;
  Problem p = megatron_problem(gpt_oss_with_features());
  p.job.knobs.megatron_core_model_code = false;  // torchtitan, FSDP, meshplan: not this model code
  CHECK(megatron_eager_op_bytes(p, c).forward == 0.0);
  p = megatron_problem(gpt_oss_with_features());
  p.job.knobs.fused_grouped_mlp = true;  // TE op fuser: clamp and biases inside the grouped kernels
  CHECK(megatron_eager_op_bytes(p, c).forward == Approx(10 * q * e));
  p = megatron_problem(gpt_oss_with_features());
  p.job.knobs.yarn_rope_fused = true;  // Megatron-Core <= 0.15 ran TE's fused RoPE
  CHECK(megatron_eager_op_bytes(p, c).forward == Approx(rows * e * (8 * f + 6 * h)));
  ModelSpec plain = gpt_oss_with_features();
  plain.glu_clamp = 0; plain.expert_bias = false; plain.rope_yarn_factor = 0;
  const EagerBytes none = megatron_eager_op_bytes(megatron_problem(plain), c);
  CHECK(none.forward == 0.0);
  CHECK(none.backward == 0.0);
  // Dense models keep only the RoPE part.
  ModelSpec dense = meshplan_test::gpt_oss_120b();
  dense.moe = MoeSpec{};
  dense.glu_clamp = 7.0; dense.rope_yarn_factor = 32.0;
  CHECK(megatron_eager_op_bytes(megatron_problem(dense), c).forward == Approx(10 * q * e));
}

TEST_CASE("the eager passes add their bytes at the element-wise rate to the layer's forward and backward") {
  ModelSpec plain = gpt_oss_with_features();
  plain.glu_clamp = 0; plain.expert_bias = false; plain.rope_yarn_factor = 0;
  const Problem with = megatron_problem(gpt_oss_with_features()), without = megatron_problem(plain);
  const ParallelConfig c = ep8();
  const LayerCompute a = layer_compute(with, c), z = layer_compute(without, c);
  const EagerBytes b = megatron_eager_op_bytes(with, c);
  CHECK(a.forward_s - z.forward_s == Approx(memory_bound_time_s(with.hardware, b.forward)));
  CHECK(a.backward_input_s - z.backward_input_s == Approx(memory_bound_time_s(with.hardware, b.backward)));
  CHECK(a.recompute_s == Approx(z.recompute_s));  // recompute none
}
