// Multi-token prediction (costmodel/mtp.h): DeepSeek-V3's MTP module weights from its checkpoint shapes,
// the last chunk's extra layer and head pass, the embedding copy of a pipelined MTP stage, FLOPs, memory
// (fast path = reference) and who may train it (core/mtp_config.h).
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/mtp_config.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/flops.h"
#include "costmodel/memory.h"
#include "costmodel/moe_layout.h"
#include "costmodel/mtp.h"
#include "costmodel/step.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
Problem with_mtp(Problem p, int64_t n) {
  p.model.mtp_layers = n;
  p.job.framework = Framework::Megatron;
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}
}  // namespace

TEST_CASE("DeepSeek-V3's MTP module: 11,610,068,224 weights, its checkpoint's layer 61 without embed and head") {
  ModelSpec m = meshplan_test::deepseek_v3();
  CHECK(m.mtp_parameters() == 0.0);
  m.mtp_layers = 1;
  // model.layers.61.* of deepseek-ai/DeepSeek-V3 (model.safetensors.index.json shapes): MLA q_a 7168x1536,
  // q_a_layernorm 1536, q_b 1536x24576, kv_a 7168x576, kv_a_layernorm 512, kv_b 512x32768, o 16384x7168;
  // input/post_attention layernorms 2x7168; 256 experts x 3 x 7168 x 2048, shared expert 3 x 7168 x 2048,
  // gate 256x7168 + e_score_correction_bias 256; enorm, hnorm, shared_head.norm 3x7168; eh_proj 7168x14336.
  const int64_t attention = 7168LL * 1536 + 1536 + 1536LL * 24576 + 7168LL * 576 + 512 + 512LL * 32768 + 16384LL * 7168;
  const int64_t moe = 256LL * 3 * 7168 * 2048 + 3LL * 7168 * 2048 + 256LL * 7168 + 256;
  const int64_t expected = attention + 2 * 7168 + moe + 3 * 7168 + 7168LL * 14336;
  CHECK(expected == 11610068224LL);
  CHECK(m.mtp_parameters() == static_cast<double>(expected));
  CHECK(m.exact_parameters().value() == 671026419200LL);  // the main model's count is unchanged
  m.mtp_layers = 2;
  CHECK(m.mtp_parameters() == 2.0 * static_cast<double>(expected));
}

TEST_CASE("MTP modules sit on the last chunk only") {
  const ModelSpec m = [] { ModelSpec x = meshplan_test::llama2_7b(); x.mtp_layers = 2; return x; }();
  ParallelConfig c = meshplan_test::config(1, 4, 1, 1, 8);
  c.schedule = ScheduleKind::Interleaved;
  c.virtual_stages = 2;
  for (int chunk = 0; chunk < 8; ++chunk) CHECK(chunk_mtp_layers(m, c, chunk) == (chunk == 7 ? 2 : 0));
  for (int stage = 0; stage < 4; ++stage) CHECK(stage_mtp_layers(m, c, stage) == (stage == 3 ? 2 : 0));
}

TEST_CASE("an MTP module costs the last chunk one more layer, eh_proj, two norms and the head again") {
  const Problem base = with_mtp(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), 0);
  const Problem mtp = with_mtp(base, 1);
  const ParallelConfig c = meshplan_test::config(1, 2, 4, 1, 16);
  const StepCosts a = step_costs(base, c), b = step_costs(mtp, c);
  REQUIRE(a.chunks.size() == 2);
  // The first chunk does not change.
  CHECK(b.chunks[0].forward_s == a.chunks[0].forward_s);
  CHECK(b.chunks[0].backward_input_s == a.chunks[0].backward_input_s);
  // The last: + one layer + the module's own work (tp = 1: no TP collectives).
  const LayerCompute layer = layer_compute(mtp, c);
  const EndsCompute ends = ends_compute(mtp, c);
  const HardwareProfile& hw = mtp.hardware;
  const double T = 4096.0, h = 4096.0;
  const double proj = gemm_time_s(hw, job_peak_flops(mtp), 2.0 * T * 2.0 * h * h);
  const double norms = memory_bound_time_s(hw, 3.0 * 8.0 * T * h);
  CHECK(b.chunks[1].layers == a.chunks[1].layers + 1);
  CHECK(b.chunks[1].forward_s - a.chunks[1].forward_s ==
        Approx(layer.forward_s + ends.embedding_forward_s + norms + proj + ends.head_forward_s).epsilon(1e-12));
  CHECK(b.chunks[1].backward_weight_s - a.chunks[1].backward_weight_s ==
        Approx(layer.backward_weight_s + proj + ends.head_backward_weight_s).epsilon(1e-12));
  const MtpTimes t = mtp_times(mtp, c, ends);
  CHECK(t.backward_input_s == Approx(ends.embedding_backward_s + 2.0 * norms + proj + ends.head_backward_input_s));
  // The step grows by more than the layer alone: the last stage is the slowest now.
  CHECK(estimate_step(mtp, c).time.step_s > estimate_step(base, c).time.step_s);
}

TEST_CASE("MTP FLOPs: per module one layer, eh_proj 2 T 2h h and the LM head 2 T h V, three passes") {
  ModelSpec m = meshplan_test::llama2_7b();
  const StepFlops off = step_flops(m, 8, 4096, Recompute::None);
  m.mtp_layers = 1;
  const StepFlops on = step_flops(m, 8, 4096, Recompute::None);
  const double T = 8.0 * 4096, h = 4096, V = 32000;
  const double layer = layer_forward_flops(m, 8, 4096).total();
  CHECK(on.model - off.model == Approx(3.0 * (layer + 2.0 * T * 2.0 * h * h + 2.0 * T * h * V)).epsilon(1e-12));
  const StepFlops full_off = [&] { ModelSpec x = m; x.mtp_layers = 0; return step_flops(x, 8, 4096, Recompute::Full); }();
  const StepFlops full_on = step_flops(m, 8, 4096, Recompute::Full);
  // Full recompute reruns the MTP layer's forward as well.
  CHECK((full_on.hardware - full_on.model) - (full_off.hardware - full_off.model) == Approx(layer).epsilon(1e-12));
}

TEST_CASE("MTP weights, experts and the pipelined stage's embedding copy sit on the last stage") {
  const ModelSpec v3 = [] { ModelSpec x = meshplan_test::deepseek_v3(); x.mtp_layers = 1; return x; }();
  ParallelConfig c = meshplan_test::config(2, 4, 8, 1, 8);
  c.ep = 8;
  c.etp = 1;
  const double h = 7168, V = 129280;
  const double routed = 256.0 * v3.expert_parameters();
  const double norms = v3.layer_norm_parameters();
  const double layer = (v3.mtp_layer_parameters() - routed - norms) / 2.0 + norms;
  CHECK(mtp_parameters_per_gpu(v3, c, 3) == Approx(layer + 2.0 * h * h / 2.0 + 3.0 * h + V * h / 2.0));
  CHECK(mtp_parameters_per_gpu(v3, c, 0) == 0.0);
  CHECK(mtp_expert_parameters_per_gpu(v3, c, 3) == Approx(routed / 8.0));
  ModelSpec none = v3;
  none.mtp_layers = 0;
  CHECK(stage_parameters_per_gpu(v3, c, 3) - stage_parameters_per_gpu(none, c, 3) ==
        Approx(mtp_parameters_per_gpu(v3, c, 3)));
  CHECK(stage_expert_parameters_per_gpu(v3, c, 3) - stage_expert_parameters_per_gpu(none, c, 3) ==
        Approx(routed / 8.0));
  CHECK(stage_parameters_per_gpu(v3, c, 1) == stage_parameters_per_gpu(none, c, 1));
  // Without pipelining the embedding is the main model's own: no copy.
  ParallelConfig flat = meshplan_test::config(2, 1, 32, 1, 8);
  flat.ep = 8;
  CHECK(mtp_parameters_per_gpu(v3, flat, 0) == Approx(layer + 2.0 * h * h / 2.0 + 3.0 * h));
}

TEST_CASE("with MTP the memory fast path still equals the max over stages of stage_memory") {
  for (int pp : {1, 2, 4}) {
    for (ScheduleKind s : {ScheduleKind::OneFOneB, ScheduleKind::Interleaved}) {
      if (s == ScheduleKind::Interleaved && pp < 2) continue;
      const Problem p = with_mtp(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), 1);
      ParallelConfig c = meshplan_test::config(2, pp, 4 / pp, 1, 64 / (4 / pp));
      c.schedule = s;
      c.virtual_stages = s == ScheduleKind::Interleaved ? 2 : 1;
      c.zero_stage = 1;
      c.sequence_parallel = true;
      MemoryBreakdown ref;
      ref.peak_bytes = -1;
      for (int st = 0; st < pp; ++st) {
        const MemoryBreakdown mb = stage_memory(p, c, st);
        if (mb.peak_bytes > ref.peak_bytes) ref = mb;
      }
      const MemoryBreakdown fast = estimate_memory(p, c);
      INFO("pp " << pp << " " << to_string(s));
      CHECK(fast.worst_stage == ref.worst_stage);
      CHECK(fast.peak_bytes == Approx(ref.peak_bytes).epsilon(1e-12));
      CHECK(fast.activations_bytes == Approx(ref.activations_bytes).epsilon(1e-12));
      // The last stage holds one more layer's stash and the MTP head's logits.
      const Problem off = with_mtp(p, 0);
      CHECK(stage_memory(p, c, pp - 1).activations_bytes > stage_memory(off, c, pp - 1).activations_bytes);
      if (pp > 1) CHECK(stage_memory(p, c, 0).peak_bytes == stage_memory(off, c, 0).peak_bytes);
    }
  }
}

TEST_CASE("a pipelined MTP stage all-reduces its embedding copy's gradient with the first stage") {
  const Problem off = with_mtp(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), 0);
  const Problem on = with_mtp(off, 1);
  const ParallelConfig c = meshplan_test::config(1, 2, 4, 1, 16);
  CHECK(tied_embedding_sync_s(off, c) == 0.0);  // untied, no MTP
  CHECK(tied_embedding_sync_s(on, c) > 0.0);
  CHECK(tied_embedding_sync_s(on, meshplan_test::config(1, 1, 8, 1, 8)) == 0.0);
}

TEST_CASE("only Megatron-LM and NeMo train MTP modules") {
  Problem p = with_mtp(meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096), 1);
  for (Framework f : {Framework::Megatron, Framework::Nemo}) {
    p.job.framework = f;
    CHECK(validate_mtp_job(p.model, p.job, "t").empty());
  }
  for (Framework f : {Framework::DeepSpeed, Framework::Fsdp, Framework::Torchtitan, Framework::Meshplan}) {
    p.job.framework = f;
    const ErrorList e = validate_mtp_job(p.model, p.job, "t");
    REQUIRE(e.size() == 1);
    CHECK(e.front().one_line().find("mtp_layers") != std::string::npos);
    CHECK_FALSE(validate_framework(p, meshplan_test::config(1, 1, 8, 1, 8), "t").empty());
  }
  p.model.mtp_layers = 0;
  CHECK(validate_mtp_job(p.model, p.job, "t").empty());
}
