// torchtitan's own code, costed from its source: the fp32 complex rotary embedding and repeat_kv,
// FSDP2's copies around its collectives, foreach AdamW; each term by hand and through a whole step.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/fsdp2_copies.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "costmodel/zero_comm.h"
#include "costmodel/torchtitan_attention_ops.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("torchtitan attention inputs: 16 + 2e bytes per q/k element for RoPE, 2e T (h + kv) for repeat_kv") {
  const ModelSpec m = meshplan_test::llama3_8b();  // h 4096, kv 1024
  const EagerBytes b = torchtitan_attention_input_bytes(m, 2, 8192, 1, 2.0);
  const double T = 2.0 * 8192;
  CHECK(b.forward == 20.0 * T * 5120 + 4.0 * T * 5120);  // 2.01 GB
  CHECK(b.backward == b.forward);
  CHECK(torchtitan_attention_input_bytes(m, 2, 8192, 4, 2.0).forward == Approx(b.forward / 4));
  ModelSpec mha = m;
  mha.num_kv_heads = mha.num_heads;  // no GQA: repeat_kv returns its input
  CHECK(torchtitan_attention_input_bytes(mha, 2, 8192, 1, 2.0).forward == 20.0 * T * 8192);
}

TEST_CASE("FSDP2 copies: copy-in and copy-out of every gather, the gradients' copy-in of every reduce-scatter") {
  const double P = 218.1e6;
  const EagerBytes c = fsdp2_copy_bytes(P, 8, 2.0, 4.0);
  CHECK(c.forward == Approx(6.0 * P / 8 + 4.0 * P));                      // 4.75 P
  CHECK(c.backward == Approx(6.0 * P / 8 + 4.0 * P + 6.0 * P + 12.0 * P / 8));  // 12.25 P
  CHECK(fsdp2_copy_bytes(P, 0, 2.0, 4.0).forward == Approx(6.0 * P + 4.0 * P));  // degree clamped to 1
}

TEST_CASE("torchtitan's knobs: FSDP2 copies as exposed ZeRO time, foreach AdamW, fp32 loss, others unaffected") {
  const FrameworkKnobs titan = framework_knobs(framework_spec(Framework::Torchtitan));
  CHECK(titan.sharding.fsdp2_copies);
  CHECK(titan.torchtitan_attention_inputs);
  CHECK(titan.foreach_adamw);
  CHECK(titan.cross_entropy == CrossEntropyKernel::TorchFp32);
  for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp, Framework::Nemo}) {
    const FrameworkKnobs k = framework_knobs(framework_spec(f));
    CHECK_FALSE((k.sharding.fsdp2_copies || k.torchtitan_attention_inputs));
  }
  // The optimizer: PyTorch's default AdamW (foreach) under torchtitan and plain PyTorch FSDP, a fused
  // Adam under Megatron-Core, NeMo and DeepSpeed.
  CHECK(framework_knobs(framework_spec(Framework::Fsdp)).foreach_adamw);
  for (Framework f : {Framework::Megatron, Framework::DeepSpeed, Framework::Nemo, Framework::Meshplan})
    CHECK_FALSE(framework_knobs(framework_spec(f)).foreach_adamw);

  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 16, 8192);
  ParallelConfig c;
  c.dp = 8;
  c.zero_stage = 3;
  c.micro_batch_size = 2;
  c.num_micro_batches = 1;
  const StepEstimate base = estimate_step(p, c);
  Problem with_copies = p;
  with_copies.job.knobs.sharding.fsdp2_copies = true;
  const StepEstimate copied = estimate_step(with_copies, c);
  const EagerBytes bytes = fsdp2_copy_bytes(layer_parameters_per_gpu(p.model, 1), 8, 2.0, 4.0);
  const double per_layer = memory_bound_time_s(p.hardware, bytes.forward) + memory_bound_time_s(p.hardware, bytes.backward);
  CHECK(copied.time.dp_comm_s - base.time.dp_comm_s == Approx(32 * per_layer).epsilon(1e-9));
  CHECK(copied.time.compute_s == base.time.compute_s);  // the planner's time bound keeps compute ZeRO-free

  Problem foreach = p;
  foreach.job.knobs.foreach_adamw = true;
  const double local = estimate_step(p, c).time.optimizer_s;
  const double params_local = 8.03e9 / 8;  // Llama 3 8B over 8 shards
  CHECK(estimate_step(foreach, c).time.optimizer_s == Approx(memory_bound_time_s(p.hardware, params_local * 92.0)).epsilon(0.01));
  CHECK(estimate_step(foreach, c).time.optimizer_s > local);

  Problem rope = p;
  rope.job.knobs.torchtitan_attention_inputs = true;
  const double extra = layer_compute(rope, c).forward_s - layer_compute(p, c).forward_s;
  CHECK(extra == Approx(memory_bound_time_s(p.hardware, torchtitan_attention_input_bytes(p.model, 2, 8192, 1, 2.0).forward)));
}

TEST_CASE("FSDP2 copies run on the compute stream and cover the ZeRO-3 collectives as the layer's compute does") {
  // Llama 3 8B over 64 GPUs with a slow network: the per-layer gathers and reduce-scatters outlast the
  // layer's compute, so what covers them matters.
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 64, 64, 2048);
  p.hardware.inter_node = {2e9, 10e-6, 0.8};
  p.job.knobs.sharding.fsdp2_copies = true;
  ParallelConfig c;
  c.dp = 64;
  c.zero_stage = 3;
  c.micro_batch_size = 1;
  c.num_micro_batches = 1;
  const StageTimes st = stage_times(p, c, 0);
  const ShardedCollectives sc = sharded_collectives(p, c, 0, zero_shard_group(p.hardware, c));
  const Fsdp2CopyTimes copies = fsdp2_copy_times(p, c);
  const double L = 32;
  const double covered = zero3_exposed_s(sc, st.forward_s / L + copies.forward_s, st.backward_s / L + copies.backward_s,
                                         0.0, p.job.knobs.sharding);
  const double bare = zero3_exposed_s(sc, st.forward_s / L, st.backward_s / L, 0.0, p.job.knobs.sharding);
  REQUIRE(covered < bare);  // the copies do hide something here
  CHECK(dp_comm(p, c, 0, st).exposed_s == Approx(covered + L * (copies.forward_s + copies.backward_s)).epsilon(1e-12));
}
