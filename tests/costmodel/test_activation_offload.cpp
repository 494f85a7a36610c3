// Activation offloading (costmodel/activation_offload.h, core/offload_config.h): resident layers, the
// exposed copy time, and what they do to memory and step time, in the closed form and step_costs alike.
#include <catch2/catch.hpp>

#include "core/offload_config.h"
#include "costmodel/activation_offload.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/memory.h"
#include "costmodel/moe_cost.h"
#include "costmodel/step.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;
using meshplan_test::config;

namespace {
Problem offload_problem(int n) {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 4096);  // 32 layers
  p.job.knobs.attention = AttentionKind::Fused;
  p.hardware.host_link = {50e9, 0.0, 1.0};  // 50 GB/s per direction
  p.job.knobs.activation_offload_layers = n;
  return p;
}
}  // namespace

TEST_CASE("offload: L - n + 1 layers stay resident (the never-offloaded ones and the first reload)") {
  Problem p = offload_problem(0);
  CHECK(offload_resident_layers(p, 32) == 32.0);
  p.job.knobs.activation_offload_layers = 16;
  CHECK(offload_resident_layers(p, 32) == 17.0);
  p.job.knobs.activation_offload_layers = 31;  // Megatron-Core's most: num_layers - 1
  CHECK(offload_resident_layers(p, 32) == 2.0);
  p.job.knobs.activation_offload_layers = 1;
  CHECK(offload_resident_layers(p, 32) == 32.0);
}

TEST_CASE("offload: each group's copy is exposed beyond its window of L/n layers of compute") {
  Problem p = offload_problem(5);
  // 1 GB per layer over 50 GB/s = 20 ms; 10 layers / 5 groups = windows of 2 layers.
  const OffloadTime t = offload_exposed(p, 1e9, 10, 0.004, 0.02);
  CHECK(t.forward_s == Approx(5 * (0.02 - 2 * 0.004)));
  CHECK(t.backward_s == 0.0);  // 2 x 20 ms of backward hide each 20 ms reload
  p.hardware.host_link.efficiency = 0.5;  // 40 ms per copy
  CHECK(offload_exposed(p, 1e9, 10, 0.004, 0.02).backward_s == Approx(5 * (0.04 - 2 * 0.02)));
  p.job.knobs.activation_offload_layers = 0;
  CHECK(offload_exposed(p, 1e9, 10, 0.004, 0.02).forward_s == 0.0);
}

TEST_CASE("offload: memory keeps (L - n + 1) layers' activations, closed form and per stage alike") {
  const ParallelConfig c = config(1, 1, 8, 1, 8);
  Problem off = offload_problem(0), on = offload_problem(16);
  const double layer = layer_activation_bytes_for(off, c);
  REQUIRE(layer > 0);
  const MemoryBreakdown a = estimate_memory(off, c), b = estimate_memory(on, c);
  CHECK(a.activations_bytes - b.activations_bytes == Approx(15 * layer));
  CHECK(stage_memory(on, c, 0).activations_bytes == Approx(b.activations_bytes));
  CHECK(step_costs(on, c).chunks[0].activation_bytes == Approx(step_costs(off, c).chunks[0].activation_bytes - 15 * layer));
}

TEST_CASE("offload: a slow host link adds its exposed copies to every micro-batch") {
  const ParallelConfig c = config(1, 1, 8, 1, 8);
  Problem off = offload_problem(0), on = offload_problem(16);
  on.hardware.host_link = {1e9, 0.0, 1.0};  // 1 GB/s: the copies cannot hide
  const LayerCompute lc = layer_compute(on, c);
  const OffloadTime t = offload_exposed(on, layer_activation_bytes_for(on, c), 32, lc.forward_s,
                                        lc.backward_input_s + lc.backward_weight_s);
  REQUIRE(t.forward_s > 0);
  REQUIRE(t.backward_s > 0);
  const double extra = estimate_step(on, c).time.step_s - estimate_step(off, c).time.step_s;
  CHECK(extra == Approx(8 * (t.forward_s + t.backward_s)).epsilon(1e-6));
  on.hardware.host_link = {450e9, 0.0, 0.87};  // NVLink-C2C: hidden
  CHECK(estimate_step(on, c).time.step_s == Approx(estimate_step(off, c).time.step_s));
}

TEST_CASE("offload: refused where Megatron-Core refuses it, and without a host link") {
  Problem p = offload_problem(16);
  ParallelConfig c = config(1, 1, 8, 1, 8);
  CHECK(validate_offload_config(p, c, "t").empty());
  c.recompute = Recompute::Selective;
  CHECK(validate_offload_config(p, c, "t").size() == 1);
  c.recompute = Recompute::None;
  c.pp = 2;
  c.dp = 4;
  CHECK(validate_offload_config(p, c, "t").size() == 1);
  c.pp = 1;
  c.dp = 8;
  p.job.knobs.activation_offload_layers = 32;
  REQUIRE(validate_offload_config(p, c, "t").size() == 1);
  CHECK(validate_offload_config(p, c, "t").front().message.find("less than") != std::string::npos);
  p.job.knobs.activation_offload_layers = 16;
  p.hardware.host_link = {};
  p.hardware.host_link.bandwidth_bytes_per_s = 0.0;
  CHECK(validate_offload_config(p, c, "t").size() == 1);
}
