// Chunk placement of pipeline schedules (looped and V-shaped) and DualPipeV's layout rules.
#include <catch2/catch.hpp>

#include "core/pipeline_placement.h"

using namespace meshplan;

TEST_CASE("placement: looped chunk k of rank r is model chunk k*pp + r and the V puts r and 2pp-1-r on rank r") {
  for (int pp = 1; pp <= 8; ++pp)
    for (int r = 0; r < pp; ++r) {
      CHECK(placed_chunk(ScheduleKind::Interleaved, pp, r, 1) == pp + r);
      CHECK(placed_chunk(ScheduleKind::OneFOneB, pp, r, 0) == r);
      CHECK(placed_chunk(ScheduleKind::DualPipeV, pp, r, 0) == r);
      CHECK(placed_chunk(ScheduleKind::DualPipeV, pp, r, 1) == 2 * pp - 1 - r);
    }
}

TEST_CASE("placement: chunk_rank and chunk_local_index invert placed_chunk for every model chunk") {
  for (auto k : {ScheduleKind::Interleaved, ScheduleKind::DualPipeV})
    for (int pp = 1; pp <= 8; ++pp)
      for (int g = 0; g < 2 * pp; ++g) {
        INFO(to_string(k) << " pp=" << pp << " chunk " << g);
        CHECK(placed_chunk(k, pp, chunk_rank(k, pp, g), chunk_local_index(k, pp, g)) == g);
      }
  CHECK(v_shaped(ScheduleKind::DualPipeV));
  CHECK_FALSE(v_shaped(ScheduleKind::ZeroBubbleH1));
}

TEST_CASE("placement: the V's last model chunk (LM head and loss) lives on rank 0") {
  ParallelConfig c;
  c.pp = 4;
  c.schedule = ScheduleKind::DualPipeV;
  CHECK(last_chunk_rank(c) == 0);
  c.schedule = ScheduleKind::OneFOneB;
  CHECK(last_chunk_rank(c) == 3);
  CHECK(parse_schedule("dualpipev") == ScheduleKind::DualPipeV);
  CHECK(std::string(to_string(ScheduleKind::DualPipeV)) == "dualpipev");
}

TEST_CASE("validate_config: dualpipev needs two chunks per rank and pp >= 2 and 2pp micro-batches") {
  Problem p;
  p.model.hidden_size = 4096; p.model.num_layers = 32; p.model.num_heads = 32;
  p.model.num_kv_heads = 32; p.model.intermediate_size = 11008; p.model.vocab_size = 32000;
  p.hardware.name = "test"; p.hardware.gpus_per_node = 8;
  p.job.gpus = 16; p.job.global_batch = 64; p.job.seq_len = 4096;
  ParallelConfig c;
  c.pp = 4; c.dp = 4; c.micro_batch_size = 2; c.num_micro_batches = 8;
  c.schedule = ScheduleKind::DualPipeV;
  c.virtual_stages = 2;
  CHECK(validate_config(p, c, "t").empty());
  c.virtual_stages = 1;
  ErrorList e = validate_config(p, c, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].field == "--virtual-stages");
  c.virtual_stages = 2;
  c.micro_batch_size = 4; c.num_micro_batches = 4;  // 4 < 2pp = 8
  e = validate_config(p, c, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].field == "--micro-batch");
  CHECK(e[0].message.find("at least 2pp=8") != std::string::npos);
}
