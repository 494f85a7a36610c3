// Bubble fractions (seed numbers), layer split, p2p sizes.
#include <catch2/catch.hpp>

#include "costmodel/pipeline.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("1F1B bubble P=4: M=16 -> 15.8 %, M=32 -> 3/35 = 8.57 % (seed)") {
  CHECK(bubble_fraction(ScheduleKind::OneFOneB, 4, 1, 16) == Approx(3.0 / 19));
  CHECK(bubble_fraction(ScheduleKind::OneFOneB, 4, 1, 16) == Approx(0.158).epsilon(0.002));
  // Issue 2 quotes 8.8 % and the seeds "9 %" for M=32, but (P-1)/(M+P-1) = 3/35 = 8.57 %:
  // we assert the formula's value.
  CHECK(bubble_fraction(ScheduleKind::OneFOneB, 4, 1, 32) == Approx(3.0 / 35));
  CHECK(bubble_fraction(ScheduleKind::GPipe, 4, 1, 32) == Approx(3.0 / 35));
}

TEST_CASE("interleaved and relative bubble forms") {
  CHECK(bubble_relative(ScheduleKind::OneFOneB, 8, 1, 64) == Approx(7.0 / 64));
  CHECK(bubble_relative(ScheduleKind::Interleaved, 8, 3, 64) == Approx(7.0 / (3 * 64)));
  CHECK(bubble_fraction(ScheduleKind::Interleaved, 8, 3, 64) == Approx(7.0 / (3 * 64 + 7)));
  CHECK(bubble_relative(ScheduleKind::ZeroBubbleH1, 8, 1, 64) == Approx(7.0 / (3 * 64)));
}

TEST_CASE("allocation-free chunk_layers matches core layers_per_chunk (reference)") {
  ModelSpec m = meshplan_test::gpt(6144, 105, 64);
  for (int pp : {1, 2, 3, 5, 7, 35}) {
    for (int v : {1, 3}) {
      ParallelConfig c; c.pp = pp; c.virtual_stages = v;
      if (pp * v > 105) continue;
      const auto ref = layers_per_chunk(m, c);
      for (int i = 0; i < pp * v; ++i) CHECK(chunk_layers(m, c, i) == ref[i]);
      int total = 0;
      for (int s = 0; s < pp; ++s) total += stage_layers(m, c, s);
      CHECK(total == 105);
    }
  }
}

TEST_CASE("p2p activation: s*b*h*2/t bytes per GPU, plus an all-gather of s*b*h*2 without SP") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(12288, 96, 96), 64, 64, 2048);
  ParallelConfig c; c.tp = 8; c.pp = 8; c.micro_batch_size = 1;
  CHECK(p2p_activation_bytes(p, c) == Approx(2.0 * 2048 * 12288 / 8));
  CHECK(p2p_gather_bytes(p, c) == Approx(2.0 * 2048 * 12288));
  c.sequence_parallel = true;
  CHECK(p2p_activation_bytes(p, c) == Approx(2.0 * 2048 * 12288 / 8));
  CHECK(p2p_gather_bytes(p, c) == 0.0);
  c.tp = 1; c.sequence_parallel = false;
  CHECK(p2p_activation_bytes(p, c) == Approx(2.0 * 2048 * 12288));
  CHECK(p2p_gather_bytes(p, c) == 0.0);
}

TEST_CASE("DualPipeV: a sixth of 1F1B's relative bubble and its V-shaped stage layers") {
  // P-1 units against 6 per micro-batch (two chunks of F + B + W, each one unit).
  CHECK(bubble_relative(ScheduleKind::DualPipeV, 8, 2, 64) == Approx(7.0 / (6 * 64)));
  CHECK(bubble_fraction(ScheduleKind::DualPipeV, 4, 2, 16) == Approx(3.0 / (6 * 16 + 3)));
  // Rank r holds model chunks r and 2P-1-r: with chunks of 1..8 layers, rank 0 has 1 + 8.
  ModelSpec m = meshplan_test::gpt(1024, 36, 16);
  ParallelConfig c;
  c.pp = 4;
  c.virtual_stages = 2;
  c.schedule = ScheduleKind::DualPipeV;
  c.layers_per_stage = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(stage_layers(m, c, 0) == 1 + 8);
  CHECK(stage_layers(m, c, 1) == 2 + 7);
  CHECK(stage_layers(m, c, 3) == 4 + 5);
  c.schedule = ScheduleKind::Interleaved;
  CHECK(stage_layers(m, c, 0) == 1 + 5);
}
