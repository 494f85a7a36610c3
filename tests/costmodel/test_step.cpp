// Step time assembly: estimate_step against a plain reference built from step_costs, and the
// directions every term must move in.
#include <catch2/catch.hpp>

#include <algorithm>

#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/flops.h"
#include "costmodel/memory.h"
#include "costmodel/pipeline.h"
#include "costmodel/step.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
using meshplan_test::config;

// Plain reference: per-stage sums over step_costs' chunk list (allocates; easy to read).
struct Reference { double compute_plus_tp = 0, bubble = 0; };
Reference reference(const Problem& p, const ParallelConfig& c) {
  const StepCosts sc = step_costs(p, c);
  std::vector<double> stage(c.pp, 0.0);
  for (size_t i = 0; i < sc.chunks.size(); ++i) {
    const ChunkCosts& k = sc.chunks[i];
    stage[i % c.pp] += k.forward_s + k.backward_input_s + k.backward_weight_s;
  }
  const double worst = *std::max_element(stage.begin(), stage.end());
  double sum = 0.0;
  for (double s : stage) sum += s;
  Reference r;
  r.compute_plus_tp = c.num_micro_batches * worst;
  r.bubble = (sum - worst) / (c.schedule == ScheduleKind::Interleaved ? c.virtual_stages : 1);
  return r;
}
}  // namespace

TEST_CASE("estimate_step equals the reference assembled from step_costs") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(12288, 96, 96), 64, 64, 2048);
  for (ScheduleKind s : {ScheduleKind::OneFOneB, ScheduleKind::GPipe, ScheduleKind::Interleaved}) {
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
      ParallelConfig c = config(8, 8, 1, 1, 64);
      c.schedule = s; c.recompute = r; c.sequence_parallel = r == Recompute::Selective;
      if (s == ScheduleKind::Interleaved) c.virtual_stages = 3;
      const StepEstimate e = estimate_step(p, c);
      const Reference ref = reference(p, c);
      INFO(to_string(s) << " " << to_string(r));
      CHECK(e.time.compute_s + e.time.tp_comm_s == Approx(ref.compute_plus_tp));
      CHECK(e.time.pp_bubble_s == Approx(ref.bubble));
      CHECK(e.time.step_s == Approx(e.time.compute_s + e.time.tp_comm_s + e.time.pp_bubble_s +
                                    e.time.pp_comm_s + e.time.dp_comm_s + e.time.optimizer_s));
    }
  }
}

TEST_CASE("equal stages: bubble over step matches (P-1)/(M+P-1) and the interleaved form") {
  // 96 layers, no embedding/head imbalance is impossible, so compare the bubble to the stage time.
  Problem p = meshplan_test::problem(meshplan_test::gpt(4096, 32, 32), 32, 128, 2048);
  ParallelConfig c = config(1, 4, 8, 1, 16);
  const StepEstimate e = estimate_step(p, c);
  const StageTimes mid = stage_times(p, c, 1);
  CHECK(e.time.pp_bubble_s >= 3 * mid.total() * 0.999);  // three other stages, ends are heavier
  c.schedule = ScheduleKind::Interleaved; c.virtual_stages = 2;
  CHECK(estimate_step(p, c).time.pp_bubble_s < e.time.pp_bubble_s);
  c.schedule = ScheduleKind::ZeroBubbleH1; c.virtual_stages = 1;
  CHECK(estimate_step(p, c).time.pp_bubble_s < e.time.pp_bubble_s);
}

TEST_CASE("throughput definitions: MFU from model FLOPs, HFU with recompute") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096);
  ParallelConfig c = config(1, 1, 8, 1, 8);
  c.recompute = Recompute::Full;
  const StepEstimate e = estimate_step(p, c);
  const StepFlops f = step_flops(p.model, 64, 4096, Recompute::Full);
  CHECK(e.throughput.mfu == Approx(f.model / (e.time.step_s * 8 * 312e12)));
  CHECK(e.throughput.hfu == Approx(f.hardware / (e.time.step_s * 8 * 312e12)));
  CHECK(e.throughput.hfu / e.throughput.mfu == Approx(4.0 / 3.0).epsilon(0.02));
  CHECK(e.throughput.tokens_per_s == Approx(64.0 * 4096 / e.time.step_s));
  CHECK(e.throughput.tflops_per_gpu == Approx(e.throughput.hfu * 312));
}

TEST_CASE("DP communication: overlap hides it, ZeRO-3 adds gathers, inter-node costs more") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 64, 512, 4096);
  ParallelConfig c = config(1, 1, 64, 1, 8);
  const StepEstimate overlapped = estimate_step(p, c);
  c.dp_overlap = false;
  const StepEstimate exposed = estimate_step(p, c);
  CHECK(exposed.time.dp_comm_s > overlapped.time.dp_comm_s);
  // Exposed DDP all-reduce of 7B bf16 grads over 64 GPUs (8 per node, hierarchical).
  const double grads = p.model.num_parameters() * 2.0;
  CHECK(exposed.time.dp_comm_s == Approx(all_reduce_s(p.hardware, place_group(p.hardware, 64, 1), grads)));
  c.zero_stage = 3;
  const StepEstimate z3 = estimate_step(p, c);
  CHECK(z3.time.dp_comm_s > exposed.time.dp_comm_s);
  CHECK(z3.memory.peak_bytes < exposed.memory.peak_bytes);
}

TEST_CASE("TP inside a node is cheaper than TP across nodes") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 16, 16, 4096);
  p.job.allow_tp_across_nodes = true;
  ParallelConfig c = config(16, 1, 1, 1, 16);
  const double across = estimate_step(p, c).time.tp_comm_s;
  p.hardware.gpus_per_node = 16;
  const double inside = estimate_step(p, c).time.tp_comm_s;
  // Hierarchical across 2 nodes: the inter-node hop carries 1/8 of the data through 8 NICs, so
  // it costs more than NVLink alone but far less than a flat ring on one NIC per GPU would.
  CHECK(across > inside);
  const LinkSpec& ib = p.hardware.inter_node;
  const double bytes = 2.0 * 4096 * 8192;
  CHECK(across < estimate_step(p, c).config.num_micro_batches * 80 * 4 *
                     collective_time_s(Collective::AllReduceRing, bytes, 16, ib));
}

TEST_CASE("memory that does not fit is the bottleneck, otherwise the largest exposed term") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 8, 8, 4096);
  ParallelConfig c = config(8, 1, 1, 1, 8);
  const StepEstimate e = estimate_step(p, c);
  CHECK_FALSE(e.fits);  // 70B x 16 B / 8 GPUs = 140 GB per GPU
  CHECK(e.bottleneck == Bottleneck::Memory);
  CHECK(std::string(to_string(e.bottleneck)) == "memory");
  Problem q = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096);
  const StepEstimate f = estimate_step(q, config(8, 1, 1, 1, 64));
  CHECK(f.fits);
  CHECK(f.bottleneck == Bottleneck::Compute);
}

TEST_CASE("step_costs: one entry per chunk, embedding first, LM head last, gradients sum up") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  ParallelConfig c = config(8, 4, 2, 1, 32);
  c.schedule = ScheduleKind::Interleaved; c.virtual_stages = 2;
  const StepCosts sc = step_costs(p, c);
  REQUIRE(sc.chunks.size() == 8);
  CHECK(sc.chunks.front().has_embedding);
  CHECK(sc.chunks.back().has_lm_head);
  int layers = 0;
  for (const auto& k : sc.chunks) {
    layers += k.layers;
    CHECK(k.forward_s > 0);
    CHECK(k.backward_input_s > 0);
    CHECK(k.backward_weight_s > 0);
    CHECK(k.activation_bytes > 0);
    CHECK(k.dp_reduce_s > 0);
    CHECK(k.zero3_gather_s == 0);
  }
  CHECK(layers == 80);
  CHECK(sc.p2p_bytes == Approx(p2p_activation_bytes(p, c)));
  CHECK(sc.p2p_s > 0);
  CHECK(sc.optimizer_s > 0);
}

TEST_CASE("ZeRO-2/3 reduce-scatter gradients every micro-batch, ZeRO-0/1 once per step") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 64, 512, 4096);
  auto dp_total = [&](int zero, int64_t M) {
    ParallelConfig c = config(1, 1, 64, 512 / (64 * M), M);
    c.zero_stage = zero; c.dp_overlap = false;
    const StageTimes st = stage_times(p, c, 0);
    return dp_comm(p, c, 0, st).total_s;
  };
  CHECK(dp_total(0, 8) == Approx(dp_total(0, 1)));
  CHECK(dp_total(1, 8) == Approx(dp_total(1, 1)));
  // ZeRO-2: M reduce-scatters + one weight all-gather.
  const double ag = all_gather_s(p.hardware, place_group(p.hardware, 64, 1), p.model.num_parameters() * 2.0);
  CHECK(dp_total(2, 8) - ag == Approx(8 * (dp_total(2, 1) - ag)));
  // ZeRO-3: per micro-batch a gather for forward, one for backward, and the reduce-scatter.
  CHECK(dp_total(3, 8) == Approx(8 * dp_total(3, 1)));
  CHECK(dp_total(3, 1) > dp_total(2, 1) - ag);
}

TEST_CASE("dp_all_reduce: ZeRO-1 under DeepSpeed's BF16_Optimizer all-reduces its gradients") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 64, 512, 4096);
  ParallelConfig c = config(1, 1, 64, 2, 4);
  c.dp_overlap = false;
  const GroupPlacement g = place_group(p.hardware, 64, 1);
  const double grads = p.model.num_parameters() * param_bytes(p.job.convention).gradients;
  auto dp_total = [&](int zero, bool all_reduce) {
    c.zero_stage = zero;
    p.job.knobs.dp_all_reduce = all_reduce;
    return dp_comm(p, c, 0, stage_times(p, c, 0)).total_s;
  };
  // The reduction alone changes: reduce-scatter -> all-reduce; the bf16 weight all-gather stays.
  CHECK(dp_total(1, true) - dp_total(1, false) ==
        Approx(all_reduce_s(p.hardware, g, grads) - reduce_scatter_s(p.hardware, g, grads)));
  CHECK(dp_total(1, true) > dp_total(1, false));
  // ZeRO-0 all-reduces anyway: the knob changes nothing there.
  CHECK(dp_total(0, true) == Approx(dp_total(0, false)));
  // The simulator's per-chunk reduction follows the same rule.
  c.zero_stage = 1;
  p.job.knobs.dp_all_reduce = true;
  CHECK(step_costs(p, c).chunks[0].dp_reduce_s == Approx(all_reduce_s(p.hardware, g, grads)));
}

TEST_CASE("hidden communication slows compute by kOverlapComputeSlowdown of its time") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(6144, 48, 64), 8, 4, 2048);
  ParallelConfig c = config(8, 1, 1, 4, 1);
  c.recompute = Recompute::Full;
  const StepEstimate normal = estimate_step(p, c);
  const LayerCompute lc = layer_compute(p, c);
  const LayerComm comm = layer_tp_comm(p, c, lc);
  REQUIRE(comm.hidden_s > 0);
  Problem fast = p;
  fast.hardware.intra_node.bandwidth_bytes_per_s = 1e30;  // communication (hidden or not) vanishes
  fast.hardware.intra_node.latency_s = 0;
  const StepEstimate ideal = estimate_step(fast, c);
  CHECK(normal.time.compute_s - ideal.time.compute_s ==
        Approx(48 * kOverlapComputeSlowdown * comm.hidden_s).epsilon(1e-6));
}

TEST_CASE("synchronous TP all-reduce: both backward all-reduces in the open, none hidden, 2 x all_reduce_s more per layer") {
  // 2021-22 forks all-reduced dX after the layer's backward (validation key tp_async_allreduce: false).
  Problem p = meshplan_test::problem(meshplan_test::gpt(6144, 48, 64), 8, 4, 2048);
  ParallelConfig c = config(8, 1, 1, 4, 1);
  c.recompute = Recompute::Full;
  const LayerCompute lc = layer_compute(p, c);
  const LayerComm async_comm = layer_tp_comm(p, c, lc);
  REQUIRE(async_comm.hidden_s > 0);
  p.job.knobs.tp_async_allreduce = false;
  const LayerComm sync_comm = layer_tp_comm(p, c, lc);
  const double ar = all_reduce_s(p.hardware, place_group(p.hardware, 8, 1), 2.0 * 4 * 2048 * 6144);
  CHECK(sync_comm.backward_s == Approx(2.0 * ar));
  CHECK(sync_comm.hidden_s == 0.0);
  CHECK(sync_comm.forward_s == Approx(async_comm.forward_s));    // the forward's all-reduces were always open
  CHECK(sync_comm.recompute_s == Approx(async_comm.recompute_s));
  CHECK(sync_comm.backward_s > async_comm.backward_s);
  // Under sequence parallelism the knob does not apply (reduce-scatter / all-gather path).
  c.sequence_parallel = true;
  const LayerComm sp_sync = layer_tp_comm(p, c, layer_compute(p, c));
  p.job.knobs.tp_async_allreduce = true;
  const LayerComm sp_async = layer_tp_comm(p, c, layer_compute(p, c));
  CHECK(sp_sync.backward_s == Approx(sp_async.backward_s));
}

TEST_CASE("estimate_step's memoised stage classes equal per-stage dp_comm and optimizer (reference)") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(12288, 95, 96), 512, 512, 2048);
  for (int zero = 0; zero <= 3; ++zero) {
    ParallelConfig c = config(8, 8, 8, 1, 64);
    c.zero_stage = zero; c.recompute = Recompute::Selective; c.sequence_parallel = true;
    c.schedule = ScheduleKind::Interleaved; c.virtual_stages = 2;  // 95 layers: uneven chunks
    double dp_exposed = 0, dp_hidden = 0, opt = 0;
    for (int s = 0; s < c.pp; ++s) {
      const StageTimes st = stage_times(p, c, s);
      const DpComm d = dp_comm(p, c, s, st);
      dp_exposed = std::max(dp_exposed, d.exposed_s);
      dp_hidden = std::max(dp_hidden, d.total_s - d.exposed_s);
      opt = std::max(opt, optimizer_time_s(p, c, s));
    }
    const StepEstimate e = estimate_step(p, c);
    INFO("zero " << zero);
    CHECK(e.time.dp_comm_s == Approx(dp_exposed));
    CHECK(e.time.optimizer_s == Approx(opt));
    const Reference ref = reference(p, c);
    CHECK(e.time.compute_s + e.time.tp_comm_s ==
          Approx(ref.compute_plus_tp + kOverlapComputeSlowdown * dp_hidden));
  }
}

TEST_CASE("DualPipeV: rank 0 holds the embedding and the LM head and the others wait for it") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(4096, 32, 32), 4, 16, 2048);  // DP 1: no hidden DP traffic
  ParallelConfig c = config(1, 4, 1, 1, 16);
  c.schedule = ScheduleKind::DualPipeV;
  c.virtual_stages = 2;
  // The V's ends are both on rank 0: its stage has the most parameters and the head's activations.
  const MemoryBreakdown m0 = stage_memory(p, c, 0), m3 = stage_memory(p, c, 3);
  CHECK(m0.weights_bytes > m3.weights_bytes);
  CHECK(m0.activations_bytes > m3.activations_bytes);
  const StageTimes s0 = stage_times(p, c, 0), s1 = stage_times(p, c, 1);
  CHECK(s0.total() > 1.05 * s1.total());
  // Reference: M times rank 0's stage (the V places chunks r and 2P-1-r on rank r).
  const StepEstimate e = estimate_step(p, c);
  const StepCosts sc = step_costs(p, c);
  double rank0 = 0.0;
  for (int g : {0, 7}) rank0 += sc.chunks[g].forward_s + sc.chunks[g].backward_input_s + sc.chunks[g].backward_weight_s;
  CHECK(e.time.compute_s + e.time.tp_comm_s == Approx(16 * rank0));
  // Rank 0, more than a few percent slower than the others, fills its fill/drain idle with its own work
  // (tests/simulator "DualPipeV ..."), and its transfers run under the other chunk's compute.
  CHECK(e.time.pp_bubble_s == 0.0);
  c.schedule = ScheduleKind::OneFOneB;
  c.virtual_stages = 1;
  CHECK(estimate_step(p, c).time.pp_comm_s > e.time.pp_comm_s);
  // Tied embeddings: both copies on rank 0, nothing to all-reduce between stages.
  p.model.tie_word_embeddings = true;
  CHECK(tied_embedding_sync_s(p, c) > 0.0);
  c.schedule = ScheduleKind::DualPipeV;
  c.virtual_stages = 2;
  CHECK(tied_embedding_sync_s(p, c) == 0.0);
}
