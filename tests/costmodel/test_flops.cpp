// FLOP counts: Megatron's closed form, 6ND, recompute extras.
#include <catch2/catch.hpp>

#include "costmodel/flops.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("70B on 2T tokens is 8.4e23 FLOPs by 6ND (seed)") {
  CHECK(six_nd_flops(70e9, 2e12) == Approx(8.4e23));
}

TEST_CASE("GPT layer FLOPs equal Narayanan et al. 2021's 24Bsh^2 + 4Bs^2h per forward") {
  const ModelSpec m = meshplan_test::gpt(12288, 96, 96);
  const double B = 4, s = 2048, h = 12288, l = 96, V = 51200;
  CHECK(layer_forward_flops(m, B, s).total() == Approx(24 * B * s * h * h + 4 * B * s * s * h));
  // Full step with full recompute: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) (their eq. 3).
  const StepFlops f = step_flops(m, B, s, Recompute::Full);
  CHECK(f.hardware == Approx(96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))));
  // Without recompute: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
  CHECK(f.model == Approx(72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))));
  const StepFlops sel = step_flops(m, B, s, Recompute::Selective);
  CHECK(sel.hardware - sel.model == Approx(l * 4 * B * s * s * h));
  CHECK(step_flops(m, B, s, Recompute::None).hardware == Approx(f.model));
}

TEST_CASE("GQA and gated MLP shapes: Llama-2-70B layer") {
  const ModelSpec m = meshplan_test::llama2_70b();
  const double T = 4096, h = 8192, kv = 1024, f = 28672;
  const LayerFlops lf = layer_forward_flops(m, 1, 4096);
  CHECK(lf.qkv == Approx(2 * T * h * (h + 2 * kv)));
  CHECK(lf.mlp_up == Approx(2 * 2 * T * h * f));
  CHECK(lf.mlp_down == Approx(2 * T * f * h));
  // GEMM FLOPs are 2 x tokens x weight-matrix parameters.
  CHECK(lf.gemms() == Approx(2 * T * (m.layer_parameters() - 2 * h)));
}

TEST_CASE("attention width is heads x head_dim, not hidden, where head_dim is set apart (GPT-OSS, Qwen3)") {
  // GPT-OSS-120B: h 2880, 64 query heads x 64, 8 KV heads: Megatron-Core's query width is
  // kv_channels x num_attention_heads = 4096 (attention.py), 1.42x the hidden size.
  ModelSpec m = meshplan_test::llama2_70b();
  m.hidden_size = 2880;
  m.num_heads = 64;
  m.num_kv_heads = 8;
  m.head_dim_override = 64;
  m.intermediate_size = 2880;
  const double T = 4096, h = 2880, q = 4096, kv = 512;
  const LayerFlops lf = layer_forward_flops(m, 1, 4096);
  CHECK(lf.qkv == Approx(2 * T * h * (q + 2 * kv)));
  CHECK(lf.out_proj == Approx(2 * T * q * h));
  CHECK(lf.scores == Approx(2 * T * T * q));
  CHECK(lf.values == Approx(2 * T * T * q));
  // The projections are still 2 x tokens x their weights (the parameter count already used q).
  CHECK(lf.gemms() == Approx(2 * T * (m.layer_parameters() - 2 * h)));
  // Where head_dim is not given, q = h and nothing moves.
  m.head_dim_override = 0;
  CHECK(layer_forward_flops(m, 1, 4096).out_proj == Approx(2 * T * h * h));
}
