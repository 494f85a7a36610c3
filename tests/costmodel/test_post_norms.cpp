// Norms beyond the two pre-norms (Gemma 2 / 3's post-attention and post-feedforward RMSNorms): each keeps its
// input for backward and adds a read and a write of T h elements per pass, by hand.
#include <catch2/catch.hpp>

#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("post-norms: e s b h more saved per extra norm, SP splits it, full recompute keeps the input only") {
  ModelSpec two = meshplan_test::llama3_8b();
  ModelSpec four = two;
  four.norms_per_layer = 4;
  const double b = 2, s = 4096, h = 4096, e = 2;
  for (Recompute r : {Recompute::None, Recompute::Selective}) {
    CHECK(layer_activation_bytes(four, b, s, 1, false, r, e, AttentionKind::Fused) -
              layer_activation_bytes(two, b, s, 1, false, r, e, AttentionKind::Fused) ==
          2.0 * e * s * b * h);
    // Sequence parallel splits the replicated part over tp ranks; without it every rank holds it.
    CHECK(layer_activation_bytes(four, b, s, 4, true, r, e, AttentionKind::Fused) -
              layer_activation_bytes(two, b, s, 4, true, r, e, AttentionKind::Fused) ==
          2.0 * e * s * b * h / 4.0);
    CHECK(layer_activation_bytes(four, b, s, 4, false, r, e, AttentionKind::Fused) -
              layer_activation_bytes(two, b, s, 4, false, r, e, AttentionKind::Fused) ==
          2.0 * e * s * b * h);
  }
  CHECK(layer_activation_bytes(four, b, s, 1, false, Recompute::Full, e, AttentionKind::Fused) ==
        layer_activation_bytes(two, b, s, 1, false, Recompute::Full, e, AttentionKind::Fused));
  // Falcon's single norm keeps the two-norm count (its layout is costed as before).
  ModelSpec one = two;
  one.norms_per_layer = 1;
  CHECK(layer_activation_bytes(one, b, s, 1, false, Recompute::None, e, AttentionKind::Fused) ==
        layer_activation_bytes(two, b, s, 1, false, Recompute::None, e, AttentionKind::Fused));
}

TEST_CASE("post-norms: 8 T h bytes more forward (16 backward) per layer at HBM speed") {
  ModelSpec two = meshplan_test::llama3_8b();
  ModelSpec four = two;
  four.norms_per_layer = 4;
  Problem p2 = meshplan_test::problem(two, 8, 16, 8192);
  Problem p4 = meshplan_test::problem(four, 8, 16, 8192);
  p2.job.knobs.attention = p4.job.knobs.attention = AttentionKind::Fused;
  ParallelConfig c;
  c.micro_batch_size = 2;
  const LayerCompute a = layer_compute(p2, c);
  const LayerCompute g = layer_compute(p4, c);
  // Two more norms, each reading and writing T h bf16 elements (4 T h bytes): 8 T h forward; the element-wise
  // backward is costed at twice the forward.
  const double T = 2.0 * 8192, h = 4096;
  CHECK(g.forward_s - a.forward_s == Approx(memory_bound_time_s(p2.hardware, 8.0 * T * h)));
  CHECK(g.backward_input_s - a.backward_input_s == Approx(memory_bound_time_s(p2.hardware, 16.0 * T * h)));
  CHECK(g.backward_weight_s == a.backward_weight_s);
}
