// The planner at the edges users reach: 1,000,000 GPUs and a 10T-parameter model, 1M-token
// sequences, 10M-token global batches; every reported count is an exact integer identity.
#include <catch2/catch.hpp>

#include <cmath>

#include "costmodel/estimate.h"
#include "planner/search.h"
#include "../costmodel/fixtures.h"

using namespace meshplan;

TEST_CASE("edges: 1,000,000 GPUs plan a 10T-parameter model with exact counts") {
  ModelSpec m = meshplan_test::gpt(65536, 200, 512);  // 12h^2 L ~ 1.03e13 parameters
  m.learned_positions = false;
  Problem p = meshplan_test::problem(m, 1'000'000, 1250, 8192);  // 10,240,000 tokens per step
  SearchOptions opt;
  opt.space.zero = {3};
  opt.space.recompute = {Recompute::Full};
  opt.top_k = 3;
  const SearchResult r = search(p, opt);
  REQUIRE_FALSE(r.top.empty());
  for (const StepEstimate& e : r.top) {
    const ParallelConfig& c = e.config;
    CHECK(int64_t{c.tp} * c.pp * c.dp == 1'000'000);
    CHECK(c.micro_batch_size * c.num_micro_batches * c.dp == 1250);
    CHECK(e.fits);
    CHECK(std::isfinite(e.time.step_s));
    CHECK(e.time.step_s > 0);
    // tokens/s * step time gives back the batch's 10,240,000 tokens.
    CHECK(e.throughput.tokens_per_s * e.time.step_s == Approx(10'240'000.0).epsilon(1e-12));
    CHECK(e.throughput.mfu > 0);
    CHECK(e.throughput.mfu < 1);
  }
  CHECK(r.space > 0);
}

TEST_CASE("edges: 1M-token sequences in a 10M-token batch give finite, consistent estimates") {
  // 10 sequences of 1,048,576 tokens = 10,485,760 tokens per step on tp 8 x pp 8 x dp 10 = 640 GPUs.
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 640, 10, 1 << 20);
  ParallelConfig c;
  c.tp = 8; c.pp = 8; c.dp = 10; c.zero_stage = 1;
  c.micro_batch_size = 1; c.num_micro_batches = 1;
  c.recompute = Recompute::Full; c.sequence_parallel = true;
  REQUIRE(validate_config(p, c, "t").empty());
  const StepEstimate e = estimate_step(p, c);
  CHECK(std::isfinite(e.time.step_s));
  CHECK(e.time.step_s > 0);
  CHECK(std::isfinite(e.memory.peak_bytes));
  CHECK(e.memory.activations_bytes > 0);
  CHECK(e.throughput.tokens_per_s * e.time.step_s == Approx(10.0 * (1 << 20)).epsilon(1e-12));
  c.dp = 16;  // 8 * 8 * 16 = 1024 != 640 GPUs: refused exactly
  CHECK_FALSE(validate_config(p, c, "t").empty());
}
