// FP8 primary weights (Megatron-Core --fp8-param-gather): the 16-bit copy they remove and the bytes of
// the distributed optimizer's all-gather, by hand; the fast memory path equals the reference.
#include <catch2/catch.hpp>

#include <algorithm>

#include "costmodel/fp8.h"
#include "costmodel/fp8_params.h"
#include "costmodel/memory.h"
#include "costmodel/pipeline.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
Problem with_fp8(Fp8Recipe r, bool param_gather) {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 16, 64, 4096);
  p.job.fp8 = r;
  p.job.knobs.fp8_param_gather = param_gather;
  return p;
}
// Llama 3 8B per layer, TP 2: q, k, v, o and the three MLP matrices halved; the two norms stay whole.
const double kLinear = (4096.0 * (4096 + 1024 + 1024 + 4096) + 3.0 * 4096 * 14336) / 2;
}  // namespace

TEST_CASE("FP8 primary weights: only under a Transformer Engine recipe with the knob on") {
  CHECK(fp8_primary_weights(with_fp8(Fp8Recipe::Current, true)));
  CHECK(fp8_primary_weights(with_fp8(Fp8Recipe::Mxfp8, true)));
  CHECK_FALSE(fp8_primary_weights(with_fp8(Fp8Recipe::Current, false)));
  CHECK_FALSE(fp8_primary_weights(with_fp8(Fp8Recipe::None, true)));
  CHECK_FALSE(fp8_primary_weights(with_fp8(Fp8Recipe::Rowwise, true)));  // torchao keeps 16-bit weights
}

TEST_CASE("FP8 primary weights: the linear layers' 16-bit copy goes, an FP8 shard under ZeRO-3") {
  ParallelConfig c = meshplan_test::config(2, 2, 4, 1, 8);
  c.zero_stage = 1;
  const Problem cs = with_fp8(Fp8Recipe::Current, true);
  CHECK(fp8_param_saved_bytes(cs, c, 16) == Approx(16 * 2.0 * kLinear));
  CHECK(fp8_param_saved_bytes(with_fp8(Fp8Recipe::Current, false), c, 16) == 0.0);
  c.zero_stage = 3;  // a shard of FP8 bytes q instead of 2: (2 - q) / 4 per parameter
  Problem blackwell = cs;
  blackwell.hardware.compute_capability = 10.0;  // no FP8 transposes: q = 1
  REQUIRE(fp8_weight_bytes_per_param(Fp8Recipe::Current, fp8_gemm_needs_transposes(blackwell.hardware)) == 1.0);
  CHECK(fp8_param_saved_bytes(blackwell, c, 16) == Approx(16 * (2.0 - 1.0) / 4 * kLinear));
  // Hopper's current scaling keeps an FP8 transpose too (q = 2), MXFP8 its row- and column-wise data
  // (q = 2 + 2/32): no 16-bit bytes saved there (never a negative saving).
  CHECK(fp8_param_saved_bytes(cs, c, 16) == 0.0);
  CHECK(fp8_param_saved_bytes(with_fp8(Fp8Recipe::Mxfp8, true), c, 16) == 0.0);

  // Through the memory model: the weights term drops by exactly that, stage by stage, and the fast
  // path equals the reference.
  c.zero_stage = 1;
  const Problem off = with_fp8(Fp8Recipe::Current, false);
  for (int stage = 0; stage < 2; ++stage) {
    const int layers = stage_layers(cs.model, c, stage);
    CHECK(stage_memory(off, c, stage).weights_bytes - stage_memory(cs, c, stage).weights_bytes ==
          Approx(layers * 2.0 * kLinear));
  }
  const double worst = std::max(stage_memory(cs, c, 0).peak_bytes, stage_memory(cs, c, 1).peak_bytes);
  CHECK(estimate_memory(cs, c).peak_bytes == Approx(worst));
}

TEST_CASE("FP8 primary weights: the optimizer's all-gather sends FP8 bytes, MXFP8 16-bit ones") {
  ParallelConfig c = meshplan_test::config(2, 2, 4, 1, 8);
  c.zero_stage = 1;
  const double params = 16 * (kLinear + 2 * 4096) + 1e8;  // 16 layers and some embedding
  CHECK(param_gather_bytes(with_fp8(Fp8Recipe::Current, true), c, params, 16) ==
        Approx((params - 16 * kLinear) * 2.0 + 16 * kLinear));
  CHECK(param_gather_bytes(with_fp8(Fp8Recipe::Mxfp8, true), c, params, 16) == Approx(2.0 * params));
  CHECK(param_gather_bytes(with_fp8(Fp8Recipe::Current, false), c, params, 16) == Approx(2.0 * params));
}
