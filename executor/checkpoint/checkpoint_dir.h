// Checkpoint directories: one folder per step holding one shard per rank and a MANIFEST written
// last. A step folder without a MANIFEST is incomplete and ignored, so a kill at any moment of a
// write leaves the previous checkpoint as the latest readable one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/checkpoint/shard_file.h"

namespace meshplan::exec {

/// What a MANIFEST records.
struct CheckpointMeta {
  int64_t step = 0;          // optimizer steps completed
  int world_size = 1;
  uint64_t fingerprint = 0;  // hash of the model and configuration the shards belong to
  std::vector<uint64_t> shard_bytes;  // per rank
};

/// Parses MANIFEST text; every defect is an Error naming `path` (fuzzed).
Result<CheckpointMeta> parse_manifest_text(const std::string& text, const std::string& path);

/// <root>/step-00000012
std::string checkpoint_step_dir(const std::string& root, int64_t step);
/// <root>/step-00000012/rank-00003.bin
std::string checkpoint_shard_path(const std::string& root, int64_t step, int rank);

/// Every rank: creates the folders and writes its shard atomically. crash_after_bytes: test hook
/// of write_shard_file. Returns the bytes written.
Result<uint64_t> write_checkpoint_shard(const std::string& root, int64_t step, int rank,
                                        const std::vector<Section>& sections,
                                        int64_t crash_after_bytes = -1);

/// One rank, after every shard is on disk (a barrier): writes the MANIFEST atomically.
Result<bool> publish_checkpoint(const std::string& root, const CheckpointMeta& meta);

/// The newest step folder with a MANIFEST, its MANIFEST parsed. Error when there is none or the
/// MANIFEST is unreadable.
Result<CheckpointMeta> find_latest_checkpoint(const std::string& root);

/// Reads this rank's shard of `meta`, checking its size against the MANIFEST and every checksum,
/// and that world size and fingerprint match the run resuming it.
Result<std::vector<Section>> read_checkpoint_shard(const std::string& root, const CheckpointMeta& meta,
                                                   int rank, int world_size, uint64_t fingerprint);

/// Deletes complete checkpoints older than the newest `keep`, and incomplete folders older than
/// the newest complete one.
void prune_checkpoints(const std::string& root, int keep);

}  // namespace meshplan::exec
