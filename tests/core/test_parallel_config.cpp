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

TEST_CASE("a custom split may leave the first and the last chunk without layers, no other") {
  // Megatron's account_for_embedding/loss_in_pipeline_split: 32 layers + embedding + loss over 2 x 17 slots
  // is not this, but the rule is: 0 only where the chunk still holds the embedding or the LM head.
  CHECK(layer_split_ok({0, 16, 16, 0}, 4, 32));
  CHECK(layer_split_ok({0, 32}, 2, 32));
  CHECK(layer_split_ok({32, 0}, 2, 32));
  CHECK(layer_split_ok({8, 8, 8, 8}, 4, 32));
  CHECK_FALSE(layer_split_ok({16, 0, 16, 0}, 4, 32));   // an empty middle chunk holds nothing
  CHECK_FALSE(layer_split_ok({0, 16, 15, 0}, 4, 32));   // sum
  CHECK_FALSE(layer_split_ok({0, 16, 16}, 4, 32));      // count
  CHECK_FALSE(layer_split_ok({-1, 17, 16, 0}, 4, 32));  // negative
  CHECK_FALSE(layer_split_ok({0}, 1, 0));               // a model needs layers

  Problem p = llama7b_on(16);
  ParallelConfig c; c.tp = 2; c.pp = 4; c.dp = 2; c.micro_batch_size = 1; c.num_micro_batches = 32;
  c.schedule = ScheduleKind::Interleaved; c.virtual_stages = 2;
  c.layers_per_stage = {0, 5, 5, 5, 5, 5, 7, 0};
  CHECK(validate_config(p, c, "test").empty());
  CHECK(layers_per_chunk(p.model, c) == c.layers_per_stage);
  c.layers_per_stage = {5, 0, 5, 5, 5, 5, 7, 0};
  ErrorList e = validate_config(p, c, "test");
  REQUIRE(e.size() == 1);
  CHECK(e.front().field == "layers_per_stage");
  CHECK(e.front().one_line().find("positive except the first and the last chunk") != std::string::npos);
  // Without a custom split, 34 chunks of 32 layers cannot be even: still refused by --pp.
  c.layers_per_stage.clear(); c.pp = 17; c.virtual_stages = 2;
  bool pp_error = false;
  for (const Error& err : validate_config(p, c, "test")) pp_error = pp_error || err.field == "--pp";
  CHECK(pp_error);
}
