// Sliding-window attention in the fused kernels' time: pair and block fractions by hand, the layers'
// mean, no change when the window covers the sequence, none for materialized kernels.
#include <catch2/catch.hpp>

#include "costmodel/attention.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("window fractions: pairs and 128-blocks inside a causal sliding window") {
  // s = 8, w = 3: rows 0..2 see 1, 2, 3 keys, rows 3..7 see 3 each: 6 + 15 = 21 of 64.
  CHECK(window_pair_fraction(8, 3) == Approx(21.0 / 64.0));
  CHECK(window_pair_fraction(8, 8) == Approx(36.0 / 64.0));  // plain causal s (s + 1) / 2
  CHECK(window_pair_fraction(8, 0) == Approx(36.0 / 64.0));
  // s = 1024 (n = 8 blocks), w = 128: band = 2 blocks per row block; 1 + 2 + 6 x 2 = 15 of 64.
  CHECK(window_block_fraction(1024, 128) == Approx(15.0 / 64.0));
  CHECK(window_block_fraction(1024, 4096) == Approx(causal_block_fraction(1024)));
  CHECK(window_block_fraction(1024, 0) == Approx(causal_block_fraction(1024)));
}

TEST_CASE("a sliding window shortens the fused attention core by the layers' mean, a materialized one not at all") {
  HardwareProfile hw = meshplan_test::a100();  // no speed curve: the block-fraction path
  ModelSpec m = meshplan_test::llama3_8b();
  const double s = 8192;
  const AttentionCoreTime full = attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0);
  m.sliding_window = 1024;
  m.sliding_window_layers = m.num_layers;  // every layer windowed
  const AttentionCoreTime all = attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0);
  CHECK(all.forward_s < 0.3 * full.forward_s);  // ~ (9 blocks of 64) / (65 of 128) of the causal work
  m.sliding_window_layers = m.num_layers / 2;
  const AttentionCoreTime half = attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0);
  CHECK(half.forward_s == Approx(0.5 * (all.forward_s + full.forward_s)));
  CHECK(half.backward_s == Approx(0.5 * (all.backward_s + full.backward_s)));
  // apply_window false (context-parallel steps) and a window covering the sequence: unchanged.
  CHECK(attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0, FusedAttentionKernel::FlashAttention2,
                            false).forward_s == Approx(full.forward_s));
  m.sliding_window = 8192;
  CHECK(attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0).forward_s == Approx(full.forward_s));
  // A materialized softmax masks the window but computes the whole square.
  ModelSpec plain = meshplan_test::llama3_8b();
  m.sliding_window = 1024;
  CHECK(attention_core_time(hw, 312e12, m, AttentionKind::Materialized, 1, s, 1, 2.0).forward_s ==
        Approx(attention_core_time(hw, 312e12, plain, AttentionKind::Materialized, 1, s, 1, 2.0).forward_s));
}

TEST_CASE("chunked attention (Llama 4): pairs and 128-blocks inside each chunk, the layers' mean") {
  // s = 10, C = 4: chunks of 4, 4 and 2 tokens: 10 + 10 + 3 = 23 of 100 pairs.
  CHECK(chunk_pair_fraction(10, 4) == Approx(23.0 / 100.0));
  CHECK(chunk_pair_fraction(8, 8) == Approx(36.0 / 64.0));  // one chunk: plain causal
  CHECK(chunk_pair_fraction(8, 0) == Approx(36.0 / 64.0));
  // s = 1024 (8 blocks), C = 256 (2 blocks): 4 chunks of 3 blocks = 12 of 64.
  CHECK(chunk_block_fraction(1024, 256) == Approx(12.0 / 64.0));
  CHECK(chunk_block_fraction(1024, 4096) == Approx(causal_block_fraction(1024)));
  HardwareProfile hw = meshplan_test::a100();  // no speed curve: the block-fraction path
  ModelSpec m = meshplan_test::llama3_8b();
  const double s = 32768;
  const AttentionCoreTime full = attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0);
  m.attention_chunk = 8192;
  m.chunked_layers = m.num_layers;
  const AttentionCoreTime all = attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0);
  // 4 causal kernels of 8192 instead of one of 32768: ~1/4 of the work.
  CHECK(all.forward_s == Approx(full.forward_s * chunk_block_fraction(s, 8192) / causal_block_fraction(s)).epsilon(0.02));
  m.chunked_layers = m.num_layers * 3 / 4;
  const AttentionCoreTime mix = attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, s, 1, 2.0);
  CHECK(mix.forward_s == Approx(0.75 * all.forward_s + 0.25 * full.forward_s));
  // A sequence within one chunk: unchanged.
  CHECK(attention_core_time(hw, 312e12, m, AttentionKind::Fused, 1, 8192, 1, 2.0).forward_s ==
        Approx(attention_core_time(hw, 312e12, meshplan_test::llama3_8b(), AttentionKind::Fused, 1, 8192, 1, 2.0).forward_s));
}
