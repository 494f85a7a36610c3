// Static memory (seeds' numbers), TP/PP split, ZeRO sharding, worst stage.
#include <catch2/catch.hpp>

#include "costmodel/memory.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("7B at 16 bytes/parameter is 112 GB of static state (seed)") {
  StaticBytes s = static_bytes(7e9, ParamConvention::Default16, 0, 1);
  CHECK(s.weights == Approx(14e9));
  CHECK(s.gradients == Approx(14e9));
  CHECK(s.optimizer == Approx(84e9));
  CHECK(s.total() == Approx(112e9));
}

TEST_CASE("13B on 8 GPUs: 208 / 71.5 / 48.75 / 26 GB for ZeRO 0/1/2/3 (seed)") {
  const double expected[] = {208e9, 71.5e9, 48.75e9, 26e9};
  for (int z = 0; z <= 3; ++z) {
    INFO("zero " << z);
    CHECK(static_bytes(13e9, ParamConvention::Default16, z, 8).total() == Approx(expected[z]));
  }
}

TEST_CASE("parameter conventions: megatron 18 B, distributed optimizer 6 + 12/DP, fp32-grads 20 B") {
  CHECK(static_bytes(1.0, ParamConvention::Megatron, 0, 8).total() == Approx(18.0));
  CHECK(static_bytes(1.0, ParamConvention::Megatron, 1, 8).total() == Approx(6.0 + 12.0 / 8));
  CHECK(static_bytes(1.0, ParamConvention::Fp32Grads, 0, 8).total() == Approx(20.0));
}

TEST_CASE("stage parameters add up to the model's parameters across TP and PP") {
  ModelSpec m = meshplan_test::llama2_70b();
  for (int tp : {1, 2, 8}) {
    for (int pp : {1, 4, 5}) {
      ParallelConfig c; c.tp = tp; c.pp = pp;
      double sum = 0.0;
      for (int s = 0; s < pp; ++s) sum += stage_parameters_per_gpu(m, c, s);
      // Norms are replicated over TP: subtract the extra copies before comparing.
      const double norms = (2.0 * m.num_layers + 1.0) * m.hidden_size;
      INFO("tp " << tp << " pp " << pp);
      CHECK(sum * tp - (tp - 1) * norms == Approx(m.num_parameters()).epsilon(1e-12));
    }
  }
}

TEST_CASE("tied embeddings: one copy with pp=1, a second on the last stage with pp>1 (Megatron)") {
  ModelSpec m = meshplan_test::llama2_7b();
  m.tie_word_embeddings = true;
  ParallelConfig c1;
  CHECK(stage_parameters_per_gpu(m, c1, 0) == Approx(m.num_parameters()));
  ParallelConfig c2; c2.pp = 2;
  const double sum = stage_parameters_per_gpu(m, c2, 0) + stage_parameters_per_gpu(m, c2, 1);
  CHECK(sum == Approx(m.num_parameters() + m.vocab_size * m.hidden_size));
}

TEST_CASE("estimate_memory picks the worst stage and sums the parts") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  ParallelConfig c; c.tp = 8; c.pp = 8; c.dp = 1; c.micro_batch_size = 1; c.num_micro_batches = 64;
  MemoryBreakdown worst = estimate_memory(p, c);
  for (int s = 0; s < c.pp; ++s) CHECK(stage_memory(p, c, s).peak_bytes <= worst.peak_bytes);
  CHECK(worst.worst_stage == 0);  // 1F1B: stage 0 holds P micro-batches of activations
  CHECK(worst.peak_bytes == Approx(worst.weights_bytes + worst.gradients_bytes + worst.optimizer_bytes +
                                   worst.activations_bytes + worst.other_bytes));
  CHECK(worst.other_bytes == p.hardware.other_memory_bytes);
}

TEST_CASE("ZeRO-3 adds two gathered layers of weights to the activations term") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 8, 4096);
  ParallelConfig c; c.dp = 8; c.micro_batch_size = 1; c.num_micro_batches = 1;
  c.zero_stage = 2;
  const MemoryBreakdown z2 = estimate_memory(p, c);
  c.zero_stage = 3;
  const MemoryBreakdown z3 = estimate_memory(p, c);
  CHECK(z3.activations_bytes - z2.activations_bytes ==
        Approx(2.0 * 2.0 * layer_parameters_per_gpu(p.model, 1)));
  CHECK(z3.weights_bytes == Approx(z2.weights_bytes / 8));
}

TEST_CASE("estimate_memory (fast path) equals the max over stages of stage_memory (reference)") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(12288, 96, 96), 256, 256, 2048);
  for (ScheduleKind s : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                         ScheduleKind::ZeroBubbleH1}) {
    for (int pp : {1, 5, 8}) {
      for (int zero = 0; zero <= 3; ++zero) {
        if (s == ScheduleKind::Interleaved && pp < 2) continue;
        ParallelConfig c; c.tp = 8; c.pp = pp; c.dp = 256 / (8 * pp) > 0 ? 256 / (8 * pp) : 1;
        c.micro_batch_size = 1; c.num_micro_batches = 40; c.zero_stage = zero;
        c.schedule = s; c.virtual_stages = s == ScheduleKind::Interleaved ? 2 : 1;
        c.recompute = zero % 2 ? Recompute::Selective : Recompute::Full; c.sequence_parallel = zero >= 2;
        MemoryBreakdown ref; ref.peak_bytes = -1;
        for (int st = 0; st < pp; ++st) {
          const MemoryBreakdown mb = stage_memory(p, c, st);
          if (mb.peak_bytes > ref.peak_bytes) ref = mb;
        }
        const MemoryBreakdown fast = estimate_memory(p, c);
        INFO(to_string(s) << " pp " << pp << " zero " << zero);
        CHECK(fast.worst_stage == ref.worst_stage);
        CHECK(fast.peak_bytes == Approx(ref.peak_bytes).epsilon(1e-12));
        CHECK(fast.weights_bytes == Approx(ref.weights_bytes).epsilon(1e-12));
        CHECK(fast.activations_bytes == Approx(ref.activations_bytes).epsilon(1e-12));
      }
    }
  }
}
