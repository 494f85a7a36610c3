// Per-block ZeRO shard arithmetic and the optimizer segments of the packed shard buffer.
#include "executor/parallel/shard_layout.h"

#include <algorithm>
#include <cassert>

namespace meshplan::exec {

namespace {

// Appends the piece [offset, offset + count) of block `block`, cut into `size` parts (this is `rank`).
void add_piece(ShardLayout& s, int block, int64_t offset, int64_t count, int rank, int size, bool expert) {
  assert(size >= 1 && rank >= 0 && rank < size);
  BlockShard bs;
  bs.offset = offset;
  bs.count = count;
  bs.dp_size = size;
  bs.block = block;
  bs.expert = expert;
  bs.shard_size = (count + size - 1) / size;
  bs.shard_offset = s.total;
  bs.own_begin = std::min(count, bs.shard_size * rank);
  bs.own_count = std::min(count, bs.own_begin + bs.shard_size) - bs.own_begin;
  s.total += bs.shard_size;
  s.blocks.push_back(bs);
}

// First flat element of the block's expert-parallel views (block end when it has none); asserts
// they are the block's last views, as make_param_layout puts them.
int64_t expert_begin(const ParamLayout& layout, int block) {
  const ParamBlock& b = layout.blocks[static_cast<size_t>(block)];
  int64_t begin = b.offset + b.count;
  for (const ParamView& v : layout.views) {
    if (v.block != block || !v.expert_parallel) continue;
    begin = std::min(begin, v.offset);
  }
  for (const ParamView& v : layout.views) {
    assert(v.block != block || v.expert_parallel == (v.offset >= begin));
    (void)v;
  }
  return begin;
}

}  // namespace

ShardLayout make_shard_layout(const ParamLayout& layout, int dp_rank, int dp_size) {
  ShardLayout s;
  s.dp_rank = dp_rank;
  s.dp_size = dp_size;
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const ParamBlock& b = layout.blocks[i];
    add_piece(s, static_cast<int>(i), b.offset, b.count, dp_rank, dp_size, false);
  }
  return s;
}

ShardLayout make_shard_layout(const ParamLayout& layout, int dp_rank, int dp_size, int edp_rank,
                              int edp_size) {
  ShardLayout s;
  s.dp_rank = dp_rank;
  s.dp_size = dp_size;
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const ParamBlock& b = layout.blocks[i];
    const int block = static_cast<int>(i);
    const int64_t e = expert_begin(layout, block), end = b.offset + b.count;
    if (e > b.offset || e == end) add_piece(s, block, b.offset, e - b.offset, dp_rank, dp_size, false);
    if (e < end) add_piece(s, block, e, end - e, edp_rank, edp_size, true);
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
