// FSDP2 under a pipeline schedule (torchtitan, pp > 1): the stage gathered once and kept, fp32
// gradient accumulators unsharded, one reduce-scatter after the last backward; each term by hand.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/framework.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/estimate.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "costmodel/zero_comm.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// Llama 3 8B on 32 GPUs: tp 2, pp 2, FSDP 8, 8 micro-batches of 1 x 4096, torchtitan's knobs.
Problem titan() {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 32, 64, 4096);
  p.job.knobs = framework_knobs(framework_spec(Framework::Torchtitan));
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.convention = ParamConvention::Megatron;
  return p;
}
ParallelConfig layout(int zero) {
  ParallelConfig c = meshplan_test::config(2, 2, 8, 1, 8);
  c.zero_stage = zero;
  c.sequence_parallel = true;
  return c;
}
}  // namespace

TEST_CASE("FSDP2 under a pipeline: the mode holds for torchtitan with pp > 1 and ZeRO 2 or 3 only") {
  const Problem p = titan();
  CHECK(p.job.knobs.sharding.pipeline_keeps_unsharded);
  CHECK(pipeline_keeps_unsharded(p, layout(3)));
  CHECK(pipeline_keeps_unsharded(p, layout(2)));
  CHECK_FALSE(pipeline_keeps_unsharded(p, layout(1)));
  ParallelConfig flat = layout(3);
  flat.pp = 1;
  flat.dp = 16;
  CHECK_FALSE(pipeline_keeps_unsharded(p, flat));  // no pipeline: FSDP reshards after every pass
  ParallelConfig alone = layout(3);
  alone.dp = 1;
  CHECK_FALSE(pipeline_keeps_unsharded(p, alone));  // nothing to shard over
  for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp, Framework::Nemo})
    CHECK_FALSE(framework_knobs(framework_spec(f)).sharding.pipeline_keeps_unsharded);
}

TEST_CASE("FSDP2 under a pipeline: unsharded 16-bit weights and fp32 accumulators, no gathered-layer buffers") {
  const Problem p = titan();
  Problem off = p;
  off.job.knobs.sharding.pipeline_keeps_unsharded = false;
  for (int zero : {2, 3}) {
    const ParallelConfig c = layout(zero);
    for (int stage = 0; stage < 2; ++stage) {
      const double params = stage_parameters_per_gpu(p.model, c, stage);
      const MemoryBreakdown m = stage_memory(p, c, stage);
      const MemoryBreakdown base = stage_memory(off, c, stage);
      CHECK(m.weights_bytes == Approx(2.0 * params));    // bf16, whole stage, all step
      CHECK(m.gradients_bytes == Approx(4.0 * params));  // fp32 accumulators, unsharded
      CHECK(m.optimizer_bytes == base.optimizer_bytes);  // still sharded over the 8 FSDP ranks
      const double buffers = zero == 3 ? 2.0 * layer_parameters_per_gpu(p.model, 2) * 2.0 : 0.0;
      CHECK(base.activations_bytes - m.activations_bytes == Approx(buffers));
    }
    // The fast path equals the reference, stage by stage.
    const MemoryBreakdown fast = estimate_memory(p, c);
    const double worst = std::max(stage_memory(p, c, 0).peak_bytes, stage_memory(p, c, 1).peak_bytes);
    CHECK(fast.peak_bytes == Approx(worst));
  }
}

TEST_CASE("FSDP2 under a pipeline: one gather per step behind the first forward, the reduce-scatter after the last backward") {
  const Problem p = titan();
  const ParallelConfig c = layout(3);
  const StageTimes st = stage_times(p, c, 0);
  const ShardedCollectives sc = sharded_collectives(p, c, 0, grad_group(p.hardware, c));
  const double L = sc.layers;
  REQUIRE(L == 16);
  const double gather = sc.gather_ends_s + L * sc.gather_layer_s;
  const double reduce = L * sc.reduce_layer_s + sc.reduce_ends_s;
  const DpComm d = pipeline_unsharded_dp_comm(p, c, 0, st);
  CHECK(d.total_s == Approx(gather + reduce));
  const double miss = std::max(0.0, sc.gather_layer_s - st.forward_s / L);  // FSDP: whole next unit prefetched
  CHECK(d.exposed_s == Approx(sc.gather_ends_s + sc.gather_layer_s + (L - 1) * miss + reduce));
  CHECK(d.exposed_s >= reduce);  // nothing of the stage is left to hide its reduce-scatters
  ParallelConfig serial = c;
  serial.dp_overlap = false;
  CHECK(pipeline_unsharded_dp_comm(p, serial, 0, st).exposed_s == Approx(d.total_s));

  // Through a whole step: the DP term is this plus FSDP2's copies; ordinary ZeRO-3 gathers and
  // reduces every one of the 8 micro-batches.
  const StepEstimate e = estimate_step(p, c);
  const Fsdp2CopyTimes copies = fsdp2_copy_times(p, c);
  const double copies_s = 8 * L * (copies.forward_s + copies.backward_s);
  double exposed = 0;
  for (int stage = 0; stage < 2; ++stage)
    exposed = std::max(exposed, pipeline_unsharded_dp_comm(p, c, stage, stage_times(p, c, stage)).exposed_s + copies_s);
  CHECK(e.time.dp_comm_s == Approx(exposed));
  Problem off = p;
  off.job.knobs.sharding.pipeline_keeps_unsharded = false;
  CHECK(dp_comm(off, c, 0, st).total_s > 8 * gather);
}

TEST_CASE("FSDP2 under a pipeline: copies of one gather and one reduce per step, an fp32 accumulation per micro-batch") {
  const Problem p = titan();
  const ParallelConfig c = layout(3);
  const double P = layer_parameters_per_gpu(p.model, 2), d = 8, M = 8;
  const double gather = 6.0 * P / d + 4.0 * P;     // (4 + e) P / d + 2 e P, e = 2
  const double reduce = 8.0 * P + 12.0 * P / d;    // 2 r P + (r + 8) P / d, r = 4
  const double accumulate = (6.0 + 7 * 10.0) * P / M;  // (e + r) once, (e + 2 r) after
  const Fsdp2CopyTimes t = pipeline_copy_times(p, c);
  CHECK(t.forward_s == Approx(memory_bound_time_s(p.hardware, gather / M)));
  CHECK(t.backward_s == Approx(memory_bound_time_s(p.hardware, reduce / M + accumulate)));
  CHECK(fsdp2_copy_times(p, c).forward_s == t.forward_s);
}
