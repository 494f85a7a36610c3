// Tests of ParallelConfig validation and layer splitting.
#include <catch2/catch.hpp>

#include "core/parallel_config.h"

using namespace meshplan;

static Problem llama7b_on(int64_t gpus) {
  Problem p;
  p.model.hidden_size = 4096; p.model.num_layers = 32; p.model.num_heads = 32;
  p.model.num_kv_heads = 32; p.model.intermediate_size = 11008; p.model.vocab_size = 32000;
  p.hardware.name = "test"; p.hardware.gpus_per_node = 8;
  p.job.gpus = gpus; p.job.global_batch = 64; p.job.seq_len = 4096;
  return p;
}

TEST_CASE("a consistent config validates") {
  Problem p = llama7b_on(16);
  ParallelConfig c; c.tp = 2; c.pp = 2; c.dp = 4; c.micro_batch_size = 2; c.num_micro_batches = 8;
  CHECK(validate_config(p, c, "test").empty());
}

TEST_CASE("every reason is reported") {
  Problem p = llama7b_on(16);
  ParallelConfig c; c.tp = 16; c.pp = 1; c.dp = 1; c.micro_batch_size = 3; c.num_micro_batches = 1;
  ErrorList e = validate_config(p, c, "test");
  REQUIRE(e.size() >= 2);  // tp beyond node, batch arithmetic
  for (const auto& err : e) CHECK(err.one_line().find('\n') == std::string::npos);
}

TEST_CASE("layers are split evenly, extras in the middle") {
  Problem p = llama7b_on(8);
  p.model.num_layers = 30;
  ParallelConfig c; c.pp = 4;
  auto l = layers_per_chunk(p.model, c);
  REQUIRE(l == std::vector<int>{7, 8, 8, 7});
}
