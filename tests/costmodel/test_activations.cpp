// Activation memory equals Korthikanti et al. 2022's closed forms; GQA/SwiGLU generalisation.
#include <catch2/catch.hpp>

#include "costmodel/activations.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
struct Shape { const char* name; int64_t h, L, a; };
// Korthikanti et al. 2022, Table 3.
const Shape kShapes[] = {{"22B", 6144, 48, 64}, {"175B", 12288, 96, 96},
                         {"530B", 20480, 105, 128}, {"1T", 25600, 128, 160}};
}  // namespace

TEST_CASE("per-layer activations equal Korthikanti et al.'s closed forms (s=2048, b=1, t=8)") {
  const double s = 2048, b = 1, t = 8;
  for (const Shape& sh : kShapes) {
    INFO(sh.name);
    const ModelSpec m = meshplan_test::gpt(sh.h, sh.L, sh.a);
    const double h = sh.h, a = sh.a, sbh = s * b * h;
    // Table 2: tensor parallel; + sequence parallel; + selective; + both; full recompute.
    CHECK(layer_activation_bytes(m, b, s, 8, false, Recompute::None) ==
          Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
    CHECK(layer_activation_bytes(m, b, s, 8, true, Recompute::None) ==
          Approx(sbh / t * (34 + 5 * a * s / h)));
    CHECK(layer_activation_bytes(m, b, s, 8, false, Recompute::Selective) ==
          Approx(sbh * (10 + 24 / t)));
    CHECK(layer_activation_bytes(m, b, s, 8, true, Recompute::Selective) == Approx(sbh * 34 / t));
    CHECK(layer_activation_bytes(m, b, s, 8, false, Recompute::Full) == Approx(2 * sbh));
    CHECK(layer_activation_bytes(m, b, s, 8, true, Recompute::Full) == Approx(2 * sbh / t));
    // No parallelism: sbh(34 + 5as/h), eq. (1) of the paper.
    CHECK(layer_activation_bytes(m, b, s, 1, false, Recompute::None) == Approx(sbh * (34 + 5 * a * s / h)));
  }
}

TEST_CASE("175B numbers: 34sbh/t is 102 MB per layer, full stash 6.3 MB with SP") {
  const ModelSpec m = meshplan_test::gpt(12288, 96, 96);
  CHECK(layer_activation_bytes(m, 1, 2048, 8, true, Recompute::Selective) ==
        Approx(34.0 * 2048 * 12288 / 8));  // 106,954,752 bytes
  CHECK(layer_activation_bytes(m, 1, 2048, 8, true, Recompute::Full) == Approx(6291456.0));
}

TEST_CASE("GQA and SwiGLU: Llama-2-70B layer, worked by hand") {
  const ModelSpec m = meshplan_test::llama2_70b();  // h 8192, kv 1024, f 28672, a 64
  const double s = 4096, b = 1, h = 8192, kv = 1024, f = 28672, a = 64;
  const double R = 10 * s * b * h;
  const double S = s * b * (4 * h + 4 * kv) + 6 * s * b * f;
  const double A = 5 * a * s * s * b;
  CHECK(layer_activation_bytes(m, b, s, 1, false, Recompute::None) == Approx(R + S + A));
  CHECK(layer_activation_bytes(m, b, s, 8, false, Recompute::None) == Approx(R + S / 8 + A / 8));
  CHECK(layer_activation_bytes(m, b, s, 8, true, Recompute::Selective) == Approx((R + S) / 8));
}

TEST_CASE("Q and the attention output are heads x head_dim wide where head_dim is set apart (Qwen3-30B-A3B)") {
  // h 2048 with 32 query heads x 128 and 4 KV heads: Q and the out-projection's input are 4096 wide.
  ModelSpec m = meshplan_test::llama2_70b();
  m.hidden_size = 2048;
  m.num_heads = 32;
  m.num_kv_heads = 4;
  m.head_dim_override = 128;
  m.intermediate_size = 6144;
  const double s = 4096, b = 1, h = 2048, q = 4096, kv = 512, f = 6144, a = 32;
  const double R = 10 * s * b * h;
  const double S = s * b * (4 * q + 4 * kv) + 6 * s * b * f;
  const double A = 5 * a * s * s * b;
  CHECK(layer_activation_bytes(m, b, s, 1, false, Recompute::None) == Approx(R + S + A));
  CHECK(layer_activation_bytes(m, b, s, 8, true, Recompute::Selective) == Approx((R + S) / 8));
}

TEST_CASE("micro-batches in flight per schedule") {
  CHECK(microbatches_in_flight(ScheduleKind::GPipe, 4, 1, 16, 0) == 16);
  CHECK(microbatches_in_flight(ScheduleKind::OneFOneB, 4, 1, 16, 0) == 4);
  CHECK(microbatches_in_flight(ScheduleKind::OneFOneB, 4, 1, 16, 3) == 1);
  CHECK(microbatches_in_flight(ScheduleKind::OneFOneB, 4, 1, 2, 0) == 2);
  CHECK(microbatches_in_flight(ScheduleKind::ZeroBubbleH1, 4, 1, 16, 1) == 3);
  // Interleaved stage 0: (1 + (P-1)/(P v)) P "full-stage" micro-batches (Korthikanti et al. sec. 4.2.3).
  const int P = 8, v = 3;
  CHECK(microbatches_in_flight(ScheduleKind::Interleaved, P, v, 64, 0) ==
        Approx((1.0 + (P - 1.0) / (P * v)) * P));
  // Last stage: (v-1)P + 1 chunks.
  CHECK(microbatches_in_flight(ScheduleKind::Interleaved, P, v, 64, P - 1) == Approx(((v - 1.0) * P + 1) / v));
}

TEST_CASE("DualPipeV keeps 2P + 1 chunk activations on every rank and 2P of the first chunk on rank 0") {
  // PyTorch's ScheduleDualPipeV order (planner/schedule.cpp; tests/planner max_in_flight): rank r holds
  // 2P - r forwards of its first chunk and r + 1 of its second at its peak, in units of half its layers.
  for (int P : {2, 4, 8}) {
    for (int st = 0; st < P; ++st) CHECK(microbatches_in_flight(ScheduleKind::DualPipeV, P, 2, 4 * P, st) == Approx(P + 0.5));
    CHECK(first_chunk_in_flight(ScheduleKind::DualPipeV, P, 2, 4 * P) == 2 * P);
  }
  CHECK(first_chunk_in_flight(ScheduleKind::OneFOneB, 4, 1, 16) == 4);  // elsewhere rank 0's count
}
