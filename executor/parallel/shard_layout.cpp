// Per-block ZeRO shard arithmetic and the optimizer segments of the packed shard buffer.
#include "executor/parallel/shard_layout.h"

#include <algorithm>
#include <cassert>

namespace meshplan::exec {

ShardLayout make_shard_layout(const ParamLayout& layout, int dp_rank, int dp_size) {
  assert(dp_size >= 1 && dp_rank >= 0 && dp_rank < dp_size);
  ShardLayout s;
  s.dp_rank = dp_rank;
  s.dp_size = dp_size;
  for (const ParamBlock& b : layout.blocks) {
    BlockShard bs;
    bs.offset = b.offset;
    bs.count = b.count;
    bs.dp_size = dp_size;
    bs.shard_size = (b.count + dp_size - 1) / dp_size;
    bs.shard_offset = s.total;
    bs.own_begin = std::min(b.count, bs.shard_size * dp_rank);
    bs.own_count = std::min(b.count, bs.own_begin + bs.shard_size) - bs.own_begin;
    s.total += bs.shard_size;
    s.blocks.push_back(bs);
  }
  return s;
}

std::vector<FlatSegment> shard_segments(const ParamLayout& layout, const ShardLayout& shards) {
  std::vector<FlatSegment> out;
  for (const BlockShard& b : shards.blocks) {
    const int64_t flat_begin = b.offset + b.own_begin;
    const int64_t shift = b.shard_offset - flat_begin;  // flat position -> shard position
    if (b.own_count > 0) {
      for (FlatSegment seg : flat_segments(layout, flat_begin, flat_begin + b.own_count)) {
        seg.begin += shift;
        seg.end += shift;
        out.push_back(seg);
      }
    }
    if (b.own_count < b.shard_size) {
      FlatSegment pad;
      pad.begin = b.shard_offset + b.own_count;
      pad.end = b.shard_offset + b.shard_size;
      pad.weight_decay = false;
      pad.tp_replicated = true;  // zero anyway; never counted twice
      out.push_back(pad);
    }
  }
  return out;
}

}  // namespace meshplan::exec
