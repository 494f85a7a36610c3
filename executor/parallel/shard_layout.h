// ZeRO shard layout: each parameter block (embedding, layer, head) of a chunk's flat buffer is cut
// into dp equal pieces (the last padded), and this DP rank's pieces are packed into one buffer.
#pragma once
#include <cstdint>
#include <vector>

#include "executor/model/param_layout.h"

namespace meshplan::exec {

/// One block's share. Block elements [offset, offset + count) of the flat buffer; padded to
/// dp * shard_size; DP rank d owns [d * shard_size, (d + 1) * shard_size) of the padded block, of
/// which own_count (possibly 0) are real elements starting at own_begin (block-relative).
struct BlockShard {
  int64_t offset = 0;        // flat-buffer offset of the block
  int64_t count = 0;         // elements of the block
  int64_t shard_size = 0;    // ceil(count / dp)
  int64_t shard_offset = 0;  // where this rank's piece starts in the packed shard buffer
  int64_t own_begin = 0;     // block-relative first element this rank owns
  int64_t own_count = 0;     // real (unpadded) elements this rank owns
  int64_t padded() const { return shard_size * dp_size; }
  int dp_size = 1;
  int block = 0;             // index into ParamLayout::blocks (several pieces may share one)
  bool expert = false;       // expert piece: sharded over the expert-data-parallel group
};

/// Worked example: a block of 10 elements, dp 4 -> shard_size 3, padded 12; ranks own
/// [0,3) [3,6) [6,9) [9,10) (own_count 3, 3, 3, 1).
struct ShardLayout {
  std::vector<BlockShard> blocks;  // same order as ParamLayout::blocks
  int64_t total = 0;               // packed shard buffer length (sum of shard_size)
  int dp_rank = 0;
  int dp_size = 1;
};

ShardLayout make_shard_layout(const ParamLayout& layout, int dp_rank, int dp_size);

/// Expert parallelism: each block holding expert-parallel views (a MoE layer: its experts are the
/// block's last views) becomes two pieces, the dense part cut over the DP group (dp_rank of
/// dp_size) and the experts over the expert-data-parallel group (edp_rank of edp_size: the ranks
/// holding the same experts). Other blocks stay one piece. `blocks` then lists pieces in flat order.
ShardLayout make_shard_layout(const ParamLayout& layout, int dp_rank, int dp_size, int edp_rank,
                              int edp_size);

/// Segments covering the packed shard buffer [0, total): the owned elements carry their
/// parameters' weight-decay and TP-replication flags; padding is neither decayed nor counted.
std::vector<FlatSegment> shard_segments(const ParamLayout& layout, const ShardLayout& shards);

}  // namespace meshplan::exec
