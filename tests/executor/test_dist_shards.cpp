// ZeRO shard arithmetic: per-block pieces, padding, packed offsets, optimizer segments.
#include <catch2/catch.hpp>

#include "executor/parallel/shard_layout.h"

using namespace meshplan;
using namespace meshplan::exec;

static ParamLayout tiny_layout(int tp_rank = 0, int tp = 1) {
  ModelSpec m;
  m.hidden_size = 8;
  m.num_layers = 2;
  m.num_heads = 2;
  m.num_kv_heads = 1;
  m.intermediate_size = 12;
  m.vocab_size = 10;
  return make_param_layout(m, 0, 2, true, true, tp_rank, tp);
}

TEST_CASE("dist: shard layout worked example (10 elements over 4 ranks)") {
  ParamLayout l;
  l.blocks.push_back(ParamBlock{"b", 0, 0, 10});
  l.total = 10;
  int64_t owned = 0;
  for (int d = 0; d < 4; ++d) {
    ShardLayout s = make_shard_layout(l, d, 4);
    REQUIRE(s.blocks.size() == 1);
    CHECK(s.blocks[0].shard_size == 3);
    CHECK(s.blocks[0].padded() == 12);
    CHECK(s.blocks[0].own_begin == std::min<int64_t>(10, 3 * d));
    CHECK(s.total == 3);
    owned += s.blocks[0].own_count;
  }
  CHECK(owned == 10);
  CHECK(make_shard_layout(l, 3, 4).blocks[0].own_count == 1);
}

TEST_CASE("dist: shards of every block tile the flat buffer exactly once") {
  ParamLayout l = tiny_layout();
  for (int dp : {1, 2, 3, 8}) {
    std::vector<int> covered(static_cast<size_t>(l.total), 0);
    for (int d = 0; d < dp; ++d) {
      ShardLayout s = make_shard_layout(l, d, dp);
      REQUIRE(s.blocks.size() == l.blocks.size());
      int64_t packed = 0;
      for (const BlockShard& b : s.blocks) {
        CHECK(b.shard_offset == packed);
        packed += b.shard_size;
        for (int64_t i = 0; i < b.own_count; ++i) covered[static_cast<size_t>(b.offset + b.own_begin + i)] += 1;
      }
      CHECK(s.total == packed);
    }
    for (int c : covered) CHECK(c == 1);
  }
}

TEST_CASE("dist: shard segments cover the packed buffer and keep the decay flags") {
  ParamLayout l = tiny_layout();
  for (int dp : {1, 3}) {
    for (int d = 0; d < dp; ++d) {
      ShardLayout s = make_shard_layout(l, d, dp);
      std::vector<FlatSegment> seg = shard_segments(l, s);
      int64_t at = 0;
      for (const FlatSegment& f : seg) {
        CHECK(f.begin == at);
        CHECK(f.end > f.begin);
        at = f.end;
      }
      CHECK(at == s.total);
      // Each owned element has the decay flag of its parameter (norm gains: no decay).
      for (const BlockShard& b : s.blocks) {
        for (int64_t i = 0; i < b.own_count; ++i) {
          const int64_t flat = b.offset + b.own_begin + i, packed = b.shard_offset + i;
          bool decay = true;
          for (const ParamView& v : l.views)
            if (flat >= v.offset && flat < v.offset + v.numel()) decay = v.weight_decay;
          for (const FlatSegment& f : seg)
            if (packed >= f.begin && packed < f.end) CHECK(f.weight_decay == decay);
        }
      }
    }
  }
}
