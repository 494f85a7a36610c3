// Saving and restoring a run's state as a sharded checkpoint: each rank's chunks (fp32 master
// weights, AdamW m, v and step count) plus the step and data position; collective over the world.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/error.h"
#include "executor/mpi/process_groups.h"
#include "executor/parallel/data_parallel.h"
#include "executor/train/trainer.h"

namespace meshplan::exec {

/// Every rank writes its shard atomically; after a barrier rank 0 writes the MANIFEST (the commit
/// point) and prunes all but the two newest checkpoints. `completed` = optimizer steps done.
Result<bool> save_checkpoint(std::vector<std::unique_ptr<DataParallelChunk>>& chunks,
                             ProcessGroups& groups, const TrainOptions& options, int64_t completed,
                             uint64_t fingerprint);

/// Loads the latest complete checkpoint of options.checkpoint_dir into the chunks (collective:
/// ZeRO-1/2 re-gather their working parameters). Returns the completed step count. A missing,
/// corrupted or foreign checkpoint on any rank is the same Error on every rank.
Result<int64_t> restore_checkpoint(std::vector<std::unique_ptr<DataParallelChunk>>& chunks,
                                   ProcessGroups& groups, const TrainOptions& options,
                                   uint64_t fingerprint);

}  // namespace meshplan::exec
