// Combined 1F1B EP overlap (costmodel/moe_a2a_overlap.h): the expert all-to-all hidden under the
// other micro-batch's compute, hand-computed, and dense or knob-off predictions unchanged.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"
#include "costmodel/compute_time.h"
#include "costmodel/moe_a2a_overlap.h"
#include "costmodel/step.h"
#include "costmodel/validate.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ParallelConfig ep_cfg(int ep) {
  ParallelConfig c;
  c.tp = 1; c.pp = 1; c.dp = 8; c.ep = ep; c.etp = 1; c.zero_stage = 1;
  c.micro_batch_size = 1;
  return c;
}
Problem moe_problem(bool overlap) {
  Problem p = meshplan_test::problem(meshplan_test::small_moe(), 8, 64, 1024);
  p.job.knobs.moe_a2a_overlap = overlap;
  return p;
}
LayerCompute compute_of(double fwd, double bwd_in, double bwd_w) {
  LayerCompute c;
  c.forward_s = fwd; c.backward_input_s = bwd_in; c.backward_weight_s = bwd_w;
  return c;
}
}  // namespace

TEST_CASE("EP overlap hides the forward all-to-all under backward compute and the backward one under forward") {
  const Problem p = moe_problem(true);
  // Pass of 3 ms: backward compute 2 + 1.5 ms hides all of it; forward compute 1 ms hides 1 ms.
  const HiddenExpertComm h = hidden_expert_comm(p, ep_cfg(8), compute_of(1e-3, 2e-3, 1.5e-3), 3e-3);
  CHECK(h.forward_s == Approx(3e-3));
  CHECK(h.backward_s == Approx(1e-3));
  // Backward compute shorter than the pass: only 0.5 + 0.25 ms of it is hidden.
  const HiddenExpertComm s = hidden_expert_comm(p, ep_cfg(8), compute_of(4e-3, 0.5e-3, 0.25e-3), 3e-3);
  CHECK(s.forward_s == Approx(0.75e-3));
  CHECK(s.backward_s == Approx(3e-3));
}

TEST_CASE("EP overlap is off without the knob, without experts and at ep 1") {
  const LayerCompute c = compute_of(1e-3, 2e-3, 1e-3);
  CHECK(hidden_expert_comm(moe_problem(false), ep_cfg(8), c, 3e-3).forward_s == 0.0);
  CHECK(hidden_expert_comm(moe_problem(true), ep_cfg(1), c, 3e-3).forward_s == 0.0);
  ParallelConfig piped = ep_cfg(8);
  piped.pp = 2; piped.dp = 4;  // pp > 1 without a virtual pipeline: Megatron-Core has no combined 1F1B
  CHECK(hidden_expert_comm(moe_problem(true), piped, c, 3e-3).forward_s == 0.0);
  piped.virtual_stages = 2; piped.schedule = ScheduleKind::Interleaved;
  CHECK(hidden_expert_comm(moe_problem(true), piped, c, 3e-3).forward_s == Approx(3e-3));
  Problem dense = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 1024);
  dense.job.knobs.moe_a2a_overlap = true;
  ParallelConfig d = ep_cfg(1);
  CHECK(hidden_expert_comm(dense, d, c, 3e-3).backward_s == 0.0);
}

TEST_CASE("hide_expert_comm moves the hidden parts from the exposed times into hidden_s") {
  LayerComm comm;
  comm.forward_s = 5e-3; comm.backward_s = 4e-3; comm.hidden_s = 0.5e-3; comm.expert_s = 3e-3;
  hide_expert_comm(moe_problem(true), ep_cfg(8), compute_of(1e-3, 2e-3, 1.5e-3), comm);
  CHECK(comm.forward_s == Approx(2e-3));    // 5 - 3
  CHECK(comm.backward_s == Approx(3e-3));   // 4 - 1
  CHECK(comm.hidden_s == Approx(4.5e-3));   // 0.5 + 3 + 1
  CHECK(comm.expert_s == Approx(3e-3));     // the all-to-all still runs (joins the EP group)
}

TEST_CASE("EP overlap shortens a MoE step and leaves a dense step bit for bit unchanged") {
  const ParallelConfig c = ep_cfg(8);
  const double off = estimate_step(moe_problem(false), c).time.step_s;
  const double on = estimate_step(moe_problem(true), c).time.step_s;
  CHECK(on < off);
  Problem dense = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 1024);
  const double dense_off = estimate_step(dense, ep_cfg(1)).time.step_s;
  dense.job.knobs.moe_a2a_overlap = true;
  CHECK(estimate_step(dense, ep_cfg(1)).time.step_s == dense_off);
}

TEST_CASE("the Megatron-Bridge MoE rows whose recipes overlap the EP all-to-all carry moe_a2a_overlap") {
  auto set = load_validation(std::string(MESHPLAN_SOURCE_DIR) + "/validation/megatron-bridge-moe-h100.yaml");
  REQUIRE(set.ok());
  int overlapped = 0;
  for (const ValidationRun& run : set.value().runs) {
    // Qwen3 and DeepSeek-V3 H100 recipes set moe_a2a_overlap / A2A_1F1B; GPT-OSS's does not, nor does
    // 25.09's (Megatron-Bridge v0.1.0rc4 run_script.py: A2A_1F1B for DeepSeek-V3 only), nor the Qwen3-30B
    // H100 preset from v0.3.1 (26.02.01) on (PP 1, EP 16, HybridEP, no overlap).
    const bool qwen3_2509 = run.label.rfind("MB 25.09 qwen3", 0) == 0;
    const bool qwen3_30b_late = run.model == "qwen3-30b-a3b" && (run.label.rfind("MB 26.02.01", 0) == 0 ||
                                                                 run.label.rfind("MB 26.04", 0) == 0 ||
                                                                 run.label.rfind("MB 26.06", 0) == 0);
    CHECK(run.moe_a2a_overlap == (run.model != "gpt-oss-120b" && !qwen3_2509 && !qwen3_30b_late));
    CHECK(run_framework(run).moe_a2a_overlap == run.moe_a2a_overlap);
    overlapped += run.moe_a2a_overlap ? 1 : 0;
  }
  CHECK(overlapped == 8);  // 5 of 25.09-26.02, the 3 Qwen3-235B rows of 26.02.01-26.04.01
}
