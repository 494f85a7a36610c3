// Megatron-Core's selective recompute modules (core/recompute_modules.h, costmodel/recompute_modules.h):
// names, MLA's stash (costmodel/mla_stash.h), what each module takes off the stash and adds to the
// recompute, core_attn alone equal to Korthikanti's selective, and the model rules.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/recompute_modules.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/mla_stash.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"
#include "costmodel/recompute_modules.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
Problem megatron(Problem p, uint32_t modules) {
  p.job.framework = Framework::Megatron;
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.knobs.recompute_modules = modules;
  return p;
}
ParallelConfig selective(ParallelConfig c) {
  c.recompute = Recompute::Selective;
  return c;
}
}  // namespace

TEST_CASE("recompute module names read and print in Megatron's order") {
  CHECK(recompute_modules_text(kRecomputeMlp | kRecomputeMlaUpProj) == "mla_up_proj,mlp");
  CHECK(parse_recompute_modules("mlp,mla_up_proj") == (kRecomputeMlp | kRecomputeMlaUpProj));
  CHECK(parse_recompute_modules("moe_act layernorm") == (kRecomputeMoeAct | kRecomputeLayernorm));
  const uint32_t all = parse_recompute_modules("core_attn,moe_act,layernorm,mla_up_proj,mlp,moe,shared_experts").value();
  CHECK(parse_recompute_modules(recompute_modules_text(all)) == all);
  std::string bad;
  CHECK_FALSE(parse_recompute_modules("mlp,attn", &bad));
  CHECK(bad == "attn");
  CHECK_FALSE(parse_recompute_modules("mlp,mlp", &bad));
  CHECK(bad == "mlp");
  CHECK_FALSE(parse_recompute_modules(""));
}

TEST_CASE("MLA keeps Q, K, V and its output per head, and the compressed tensors whole") {
  const ModelSpec m = meshplan_test::deepseek_v3();
  const MlaStashElements s = mla_stash_elements(m, 1);
  CHECK(s.split == 128.0 * (2 * 192 + 2 * 128));  // 81,920
  CHECK(s.unsplit == 2.0 * (1536 + 512));
  CHECK(mla_stash_elements(m, 2).split == s.split / 2);
  CHECK(mla_up_proj_discarded_elements(m, 1) == 128.0 * (2 * 192 + 128) + 1536 + 512);
  CHECK(mla_up_proj_flops(m, 10.0, 1) == 2.0 * 10 * 1536 * 128 * 192 + 2.0 * 10 * 512 * 128 * 256);
  // One layer's stash, no recompute, e = 2, b s = 4096 tokens, t = 1: replicated 4 e T h, MLA, dense MLP 3 e T f,
  // fused attention's log-sum-exp 4 a T.
  const double T = 4096;
  const double expected = 2.0 * T * (4.0 * 7168 + 81920 + 4096 + 3.0 * 18432) + 4.0 * 128 * T;
  CHECK(layer_activation_bytes(m, 1, 4096, 1, false, Recompute::None, 2.0, AttentionKind::Fused) == Approx(expected));
  CHECK(mla_stash_elements(meshplan_test::llama2_7b(), 1).split == 0.0);  // MHA models keep their own terms
}

TEST_CASE("core_attn alone is Korthikanti's selective recompute, bit for bit") {
  const Problem plain = megatron(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), 0);
  const Problem core = megatron(plain, kRecomputeCoreAttn);
  const ParallelConfig c = selective(meshplan_test::config(2, 1, 4, 1, 16));
  CHECK(active_recompute_modules(core, c) == kRecomputeCoreAttn);
  CHECK(policy_layer_activation_bytes(core, c) == policy_layer_activation_bytes(plain, c));
  CHECK(layer_compute(core, c).recompute_s == layer_compute(plain, c).recompute_s);
  CHECK(estimate_step(core, c).time.step_s == Approx(estimate_step(plain, c).time.step_s).epsilon(1e-12));
  CHECK(estimate_step(core, c).throughput.hfu == Approx(estimate_step(plain, c).throughput.hfu).epsilon(1e-12));
}

TEST_CASE("modules apply under selective only, as Megatron's recompute_granularity") {
  const Problem p = megatron(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), kRecomputeMlp);
  ParallelConfig c = meshplan_test::config(1, 1, 8, 1, 8);
  for (Recompute r : {Recompute::None, Recompute::Full}) {
    c.recompute = r;
    CHECK(active_recompute_modules(p, c) == 0);
    CHECK(policy_layer_activation_bytes(p, c) == policy_layer_activation_bytes(megatron(p, 0), c));
  }
}

TEST_CASE("mlp discards the dense MLP's input and intermediates and reruns its GEMMs") {
  const Problem p = megatron(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), kRecomputeMlp);
  const ParallelConfig c = selective(meshplan_test::config(2, 1, 4, 1, 16));
  ParallelConfig none = c;
  none.recompute = Recompute::None;
  // T = 4096, e = 2, t = 2, no SP: MLP input e T h, gate + up + activation output 3 e T f / t.
  const double saved = 2.0 * 4096 * 4096 + 3.0 * 2.0 * 4096 * 11008 / 2;
  CHECK(recompute_modules_dense_saving_bytes(p, c) == Approx(saved));
  CHECK(policy_layer_activation_bytes(p, c) == Approx(policy_layer_activation_bytes(p, none) - saved));
  const double rerun = layer_compute(p, c).recompute_s;
  CHECK(rerun > 0.0);
  CHECK(rerun < layer_compute(p, c).forward_s);  // less than the whole layer
  CHECK(estimate_step(p, c).throughput.hfu > estimate_step(p, none).throughput.hfu);  // the rerun GEMMs are hardware FLOPs
}

TEST_CASE("moe_act discards the experts' activation output, e x routed rows x f_e, and reruns the activation") {
  const ModelSpec m = meshplan_test::gpt_oss_120b();
  const Problem base = megatron(meshplan_test::problem(m, 64, 1280, 4096), 0);
  const Problem act = megatron(base, kRecomputeMoeAct);
  ParallelConfig c = selective(meshplan_test::config(1, 1, 64, 4, 5));
  c.ep = 8;
  c.etp = 1;
  ParallelConfig none = c;
  none.recompute = Recompute::None;
  const double routed = 4.0 * 4 * 4096;  // k T, balanced
  const double r = moe_layer_fraction(m);
  CHECK(layer_activation_bytes_for(act, c) ==
        Approx(layer_activation_bytes_for(base, none) - r * 2.0 * routed * 2880));
  CHECK(layer_compute(act, c).recompute_s > 0.0);
  CHECK(layer_compute(act, c).recompute_s < 0.05 * layer_compute(act, c).forward_s);  // memory bound, small
}

TEST_CASE("layernorm discards only norms that are modules of their own") {
  const Problem dense = megatron(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), kRecomputeLayernorm);
  const ParallelConfig c = selective(meshplan_test::config(1, 1, 8, 1, 8));
  CHECK(recompute_modules_dense_saving_bytes(dense, c) == 0.0);  // both fused into TE linears
  const Problem v3 = megatron(meshplan_test::problem(meshplan_test::deepseek_v3(), 256, 4096, 4096), kRecomputeLayernorm);
  const double r = moe_layer_fraction(v3.model);
  const double T = 4096, h = 7168;
  CHECK(recompute_modules_dense_saving_bytes(v3, c) == Approx(2.0 * T * h + r * 2.0 * T * h));  // MLA input, MoE pre-MLP
}

TEST_CASE("mla_up_proj discards Q, K, V and the up-projections' norm outputs, and reruns the up-projections") {
  const Problem none_p = megatron(meshplan_test::problem(meshplan_test::deepseek_v3(), 256, 4096, 4096), 0);
  const Problem up = megatron(none_p, kRecomputeMlaUpProj);
  ParallelConfig c = selective(meshplan_test::config(1, 16, 16, 1, 256));
  c.ep = 8;
  c.etp = 1;
  ParallelConfig none = c;
  none.recompute = Recompute::None;
  CHECK(recompute_modules_dense_saving_bytes(up, c) == Approx(2.0 * 4096 * (128.0 * 512 + 2048)));
  CHECK(layer_activation_bytes_for(up, c) ==
        Approx(layer_activation_bytes_for(none_p, none) - 2.0 * 4096 * (128.0 * 512 + 2048)));
  const LayerCompute lc = layer_compute(up, c);
  CHECK(lc.recompute_s > 0.0);
  CHECK(lc.recompute_s < layer_compute(up, none).forward_s * 0.2);
  CHECK(estimate_step(up, c).memory.peak_bytes < estimate_step(none_p, none).memory.peak_bytes);
}

TEST_CASE("moe discards the MoE stash and reruns its experts and dispatch, and the model rules name the flag") {
  const Problem base = megatron(meshplan_test::problem(meshplan_test::deepseek_v3(), 256, 4096, 4096), 0);
  ParallelConfig c = selective(meshplan_test::config(1, 16, 16, 1, 256));
  c.ep = 8;
  c.etp = 1;
  const Problem moe = megatron(base, kRecomputeMoe);
  const Problem act = megatron(base, kRecomputeMoeAct);
  CHECK(layer_activation_bytes_for(moe, c) < layer_activation_bytes_for(act, c));
  CHECK(layer_compute(moe, c).recompute_s > layer_compute(act, c).recompute_s);
  ErrorList e;
  check_recompute_modules(megatron(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096),
                                   kRecomputeMoeAct | kRecomputeMlaUpProj),
                          "test", e);
  REQUIRE(e.size() == 2);
  CHECK(e[0].field == "--recompute-modules");
  e.clear();
  check_recompute_modules(megatron(meshplan_test::problem(meshplan_test::mixtral_8x7b(), 8, 64, 4096),
                                   kRecomputeSharedExperts),
                          "test", e);
  CHECK(e.size() == 1);  // Mixtral has no shared experts
}
