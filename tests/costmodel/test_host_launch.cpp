// Host issue time of Megatron-Core's eager layers (costmodel/host_launch.h): the count table, the
// CUDA graph scopes that replace it, the launch-bound floor and its sync wait, and the step it gives.
#include <catch2/catch.hpp>

#include "core/cuda_graphs.h"
#include "core/framework.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/host_launch.h"
#include "costmodel/moe_cost.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// Mixtral 8x7B (every layer MoE, no q/k norms, no MLA, no shared expert) under Megatron-Core, bf16.
Problem megatron_mixtral(uint32_t graphs = 0) {
  Problem p = meshplan_test::problem(meshplan_test::mixtral_8x7b(), 8, 64, 4096);
  p.job.framework = Framework::Megatron;
  p.job.knobs = framework_knobs(framework_spec(Framework::Megatron));
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.knobs.cuda_graphs = graphs;
  return p;
}
ParallelConfig ep2() {
  ParallelConfig c = meshplan_test::config(1, 1, 8, 1, 8);
  c.ep = 2;  // 4 local experts
  return c;
}
double ops(double n) { return n * kHostOpSeconds; }
double launches(double n) { return n * kHostLaunchSeconds; }
}  // namespace

TEST_CASE("host issue time of an eager MoE layer follows the count table") {
  const HostLaunchTimes t = host_launch_times(megatron_mixtral(), ep2());
  // Attention {10, 17} less the q/k norms {2, 4}; router {10, 10}, preprocess {10, 1}, after the sync
  // {10, 9}; per local expert {2, 4} launches in TE's loop, 4 experts.
  CHECK(t.forward_s == Approx(ops(8 + 10 + 10 + 10) + launches(4 * 2)));
  CHECK(t.backward_s == Approx(ops(13 + 10 + 1 + 9) + launches(4 * 4)));
  CHECK(t.post_sync_s == Approx(ops(10) + launches(4 * 2)));
  CHECK(t.syncs);
  // Full recompute issues the forward again in the backward.
  ParallelConfig full = ep2();
  full.recompute = Recompute::Full;
  CHECK(host_launch_times(megatron_mixtral(), full).backward_s == Approx(t.backward_s + t.forward_s));
  // FP8 current scaling: 4 quantization kernels per expert input.
  Problem fp8 = megatron_mixtral();
  fp8.job.fp8 = Fp8Recipe::Current;
  CHECK(host_launch_times(fp8, ep2()).forward_s == Approx(ops(15 + 10 + 10 + 10) + launches(4 * 10)));
}

TEST_CASE("CUDA graph scopes replace their kernels by one replay each") {
  const HostLaunchTimes eager = host_launch_times(megatron_mixtral(), ep2());
  const HostLaunchTimes attn = host_launch_times(megatron_mixtral(kGraphAttn), ep2());
  CHECK(attn.forward_s == Approx(eager.forward_s - ops(8 - 1)));
  CHECK(attn.backward_s == Approx(eager.backward_s - ops(13 - 1)));
  // The router and preprocess graphs hold everything before the dispatch.
  const HostLaunchTimes front = host_launch_times(megatron_mixtral(kGraphMoeRouter | kGraphMoePreprocess), ep2());
  CHECK(front.forward_s == Approx(eager.forward_s - ops(20 - 1)));
  CHECK(front.post_sync_s == Approx(eager.post_sync_s));
  CHECK(front.syncs);
  // The whole MoE layer: drop-and-pad, no sync, no per-expert launches.
  const HostLaunchTimes moe = host_launch_times(megatron_mixtral(kGraphAttn | kGraphMoe), ep2());
  CHECK(moe.forward_s == Approx(ops(2)));
  CHECK_FALSE(moe.syncs);
  CHECK(moe.post_sync_s == 0.0);
  const HostLaunchTimes whole = host_launch_times(megatron_mixtral(kGraphFullIteration), ep2());
  CHECK(whole.forward_s == 0.0);
  CHECK(whole.backward_s == 0.0);
}

TEST_CASE("only Megatron-Core's model code is charged host issue time") {
  Problem p = megatron_mixtral();
  p.job.framework = Framework::Fsdp;
  p.job.knobs = framework_knobs(framework_spec(Framework::Fsdp));
  CHECK(host_launch_times(p, ep2()).forward_s == 0.0);
}

TEST_CASE("the launch-bound floor: host-bound layers wait, GPU-bound ones wait only after the sync") {
  Problem p = megatron_mixtral();
  p.job.seq_len = 256;  // a micro-batch of 256 tokens: the experts run shorter than the host issues them
  const HostLaunchTimes h = host_launch_times(p, ep2());
  const double experts = layer_compute(p, ep2()).expert_forward_s;  // the GPU's post-sync compute (moe_cost.h)
  REQUIRE(experts > 0.0);
  REQUIRE(experts < h.post_sync_s);
  SECTION("host-bound") {
    LayerCompute c;
    c.forward_s = 1e-3;
    c.backward_input_s = 1e-3;
    c.expert_forward_s = experts;
    apply_host_launch_floor(p, ep2(), c, LayerComm{});
    CHECK(c.forward_s == Approx(std::max(h.forward_s, 1e-3 + h.post_sync_s - experts)));
    CHECK(c.backward_input_s == Approx(h.backward_s));
    CHECK(c.host_wait_s == Approx(c.forward_s - 1e-3 + h.backward_s - 1e-3));
  }
  SECTION("GPU-bound, the dispatch and experts longer than the host's post-sync issue") {
    LayerCompute c;
    c.forward_s = 1.0;
    c.backward_input_s = 1.0;
    c.expert_forward_s = experts;
    LayerComm comm;
    comm.expert_s = 0.5;
    apply_host_launch_floor(p, ep2(), c, comm);
    CHECK(c.forward_s == 1.0);
    CHECK(c.backward_input_s == 1.0);
    CHECK(c.host_wait_s == 0.0);
  }
  SECTION("GPU-bound, but the post-sync expert part is short: the GPU waits for the host there") {
    LayerCompute c;
    c.forward_s = 1.0;
    c.backward_input_s = 1.0;
    c.expert_forward_s = experts;
    apply_host_launch_floor(p, ep2(), c, LayerComm{});
    CHECK(c.forward_s == Approx(1.0 + h.post_sync_s - experts));
    // The combined 1F1B EP overlap queues the other micro-batch's backward before the sync.
    Problem overlap = p;
    overlap.job.knobs.moe_a2a_overlap = true;
    LayerCompute o;
    o.forward_s = 1.0;
    o.backward_input_s = 1.0;
    apply_host_launch_floor(overlap, ep2(), o, LayerComm{});
    CHECK(o.forward_s == 1.0);
  }
}

TEST_CASE("a step of eager MoE layers reports its host wait, and larger micro-batches amortize it") {
  Problem p = megatron_mixtral();
  p.hardware.peak_flops["bf16"] = 2250e12;  // a fast GPU: small per-micro-batch GPU work
  ParallelConfig c = ep2();
  const StepEstimate eager = estimate_step(p, c);
  CHECK(eager.time.host_wait_s > 0.0);
  CHECK(eager.time.host_wait_s < eager.time.compute_s);
  Problem full = p;
  full.job.knobs.cuda_graphs = kGraphFullIteration;
  const StepEstimate graphed = estimate_step(full, c);
  CHECK(graphed.time.host_wait_s == 0.0);
  CHECK(graphed.time.step_s < eager.time.step_s);
  ParallelConfig big = c;
  big.micro_batch_size = 8;
  big.num_micro_batches = 1;
  CHECK(estimate_step(p, big).time.host_wait_s < eager.time.host_wait_s);
}

TEST_CASE("a step that waits on the host more than it computes names the host its bottleneck") {
  Problem p = megatron_mixtral();
  p.hardware.peak_flops["bf16"] = 2250e12;
  ParallelConfig c = ep2();
  c.micro_batch_size = 1;
  p.job.seq_len = 512;  // 512 tokens per micro-batch: little GPU work per launch
  p.hardware.memory_bytes = 1e15;  // fits: the time terms decide
  const StepEstimate e = estimate_step(p, c);
  INFO("host wait " << e.time.host_wait_s << " s of compute " << e.time.compute_s << " s");
  CHECK(e.time.host_wait_s > e.time.compute_s - e.time.host_wait_s);
  CHECK(e.bottleneck == Bottleneck::Host);
  CHECK(std::string(to_string(e.bottleneck)) == "host");
}
