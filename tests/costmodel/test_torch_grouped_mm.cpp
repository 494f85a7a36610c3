// torchtitan's routed experts as torch._grouped_mm at the profile's measured rate, and torchao's MXFP8 grouped GEMM
// at its measured speedup with its casts inside (costmodel/moe_cost.h, "Grouped GEMMs of torch").
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/io.h"
#include "costmodel/compute_time.h"
#include "costmodel/fp8.h"
#include "costmodel/mlp_gemm_elements.h"
#include "costmodel/moe_cost.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
HardwareProfile b200(double eff, double speedup) {
  auto hw = load_hardware("b200", std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles");
  REQUIRE(hw.ok());
  HardwareProfile h = hw.value();
  h.torch_grouped_mm_relative_efficiency = eff;
  h.torch_grouped_mm_mxfp8_speedup = speedup;
  return h;
}

// Mixtral 8x7B on 8 B200 under torchtitan: EP 8, one local expert, 2 sequences of 4096 per micro-batch.
Problem torchtitan(double eff, double speedup, Fp8Recipe fp8 = Fp8Recipe::None) {
  Problem p = meshplan_test::problem(meshplan_test::mixtral_8x7b(), 8, 16, 4096);
  p.hardware = b200(eff, speedup);
  p.job.knobs = framework_knobs(framework_spec(Framework::Torchtitan));
  p.job.fp8 = fp8;
  return p;
}

ParallelConfig ep8() {
  ParallelConfig c = meshplan_test::config(1, 1, 8, 2, 1);
  c.ep = 8;
  c.etp = 1;
  c.zero_stage = 3;
  return c;
}
}  // namespace

TEST_CASE("torchtitan's experts take the dense curve's time over the measured grouped-GEMM efficiency") {
  const ParallelConfig c = ep8();
  const Problem at1 = torchtitan(1.0, 0.0);
  const LayerCompute one = layer_compute(at1, c), half = layer_compute(torchtitan(0.5, 0.0), c),
                     quarter = layer_compute(torchtitan(0.25, 0.0), c);
  // The routed GEMMs by hand: 1 local expert sees k T ep / E = 2 x 8192 x 8 / 8 tokens; fc1 (gate + up) and
  // fc2 on the B200 curve at the bf16 peak, forward once, backward twice (dgrad, wgrad).
  const double peak = job_peak_flops(at1), tokens = 2.0 * 8192, h = 4096, f = 14336;
  const double gemms = gemm_time_s(at1.hardware, peak, 2.0 * 2.0 * tokens * h * f) +
                       gemm_time_s(at1.hardware, peak, 2.0 * tokens * f * h);
  CHECK(half.expert_forward_s - one.expert_forward_s == Approx(gemms).epsilon(1e-9));
  CHECK(quarter.expert_forward_s - half.expert_forward_s == Approx(2 * gemms).epsilon(1e-9));
  CHECK(half.backward_weight_s - one.backward_weight_s == Approx(gemms).epsilon(1e-9));
  CHECK(half.backward_input_s - one.backward_input_s == Approx(gemms).epsilon(1e-9));
  // Not measured (0): the dense curve's, as relative efficiency 1.
  CHECK(layer_compute(torchtitan(0.0, 0.0), c).expert_forward_s == Approx(one.expert_forward_s).epsilon(1e-12));
}

TEST_CASE("Megatron's per-expert GEMMs ignore the torch grouped-GEMM measurement") {
  const ParallelConfig c = ep8();
  Problem te = torchtitan(0.5, 1.5);
  te.job.knobs = framework_knobs(framework_spec(Framework::Megatron));
  Problem plain = te;
  plain.hardware.torch_grouped_mm_relative_efficiency = 0.0;
  plain.hardware.torch_grouped_mm_mxfp8_speedup = 0.0;
  CHECK(layer_compute(te, c).forward_s == layer_compute(plain, c).forward_s);
  CHECK(layer_compute(te, c).backward_weight_s == layer_compute(plain, c).backward_weight_s);
}

TEST_CASE("torchao's MXFP8 grouped GEMM: the bf16 grouped time over the measured speedup, its casts inside") {
  const ParallelConfig c = ep8();
  const double bf16_one = layer_compute(torchtitan(1.0, 0.0), c).expert_forward_s;
  const double bf16_half = layer_compute(torchtitan(0.5, 0.0), c).expert_forward_s;
  const double G = bf16_half - bf16_one;  // the bf16 routed GEMMs at the dense curve (eff 1)
  const Problem mx = torchtitan(0.5, 1.6, Fp8Recipe::Mxfp8);
  REQUIRE(torch_grouped_mm_mxfp8_measured(mx));
  const double mx_forward = layer_compute(mx, c).expert_forward_s;
  CHECK(mx_forward - bf16_one == Approx(G / (0.5 * 1.6) - G).epsilon(1e-9));
  // Without a measured speedup the experts stay on the FP8-peak path with separate casts.
  const Problem unmeasured = torchtitan(0.5, 0.0, Fp8Recipe::Mxfp8);
  CHECK_FALSE(torch_grouped_mm_mxfp8_measured(unmeasured));
  // The routed rows leave the cast elements: R (h + f) inputs, R (2 f + h) outputs, R = k x tokens = 2 x 8192.
  const double tokens = 8192.0, R = 2.0 * tokens, h = 4096, f = 14336;
  const GemmElements with = mlp_gemm_elements(unmeasured, c, tokens), without = mlp_gemm_elements(mx, c, tokens);
  CHECK(with.inputs - without.inputs == Approx(R * (h + f)).epsilon(1e-12));
  CHECK(with.outputs - without.outputs == Approx(R * (2 * f + h)).epsilon(1e-12));
  // Megatron under MXFP8 keeps casting them (Transformer Engine's GroupedLinear quantizes each expert's input).
  Problem te = mx;
  te.job.knobs = framework_knobs(framework_spec(Framework::Megatron));
  CHECK_FALSE(torch_grouped_mm_mxfp8_measured(te));
}
