// Checkpoint save/restore of the training state over all ranks (see train_checkpoint.h).
#include "executor/train/train_checkpoint.h"

#include <cstring>
#include <string>

#include "executor/checkpoint/checkpoint_dir.h"
#include "executor/train/rank_agreement.h"

namespace meshplan::exec {

namespace {

std::string chunk_prefix(size_t c) { return "chunk" + std::to_string(c) + "."; }

std::vector<Section> rank_sections(std::vector<std::unique_ptr<DataParallelChunk>>& chunks,
                                   const TrainOptions& o, int64_t completed) {
  std::vector<Section> out;
  // Data position: the next step's windows follow from the step index alone (batches.h), and
  // there is no other random state (no dropout; initialisation and synthetic data are seeded).
  const int64_t data_step = completed;
  out.push_back(make_section("train.step", &completed, sizeof(completed)));
  out.push_back(make_section("train.data_step", &data_step, sizeof(data_step)));
  out.push_back(make_section("train.seed", &o.seed, sizeof(o.seed)));
  for (size_t c = 0; c < chunks.size(); ++c)
    for (Section& s : chunks[c]->state_sections(chunk_prefix(c))) out.push_back(std::move(s));
  return out;
}

uint64_t serialized_bytes(const std::vector<Section>& sections) {
  uint64_t bytes = 8 + 4 + 4 + 8;  // magic, version, count, trailer
  for (const Section& s : sections) bytes += 4 + s.name.size() + 8 + 8 + s.bytes.size();
  return bytes;
}

Result<int64_t> read_i64(const std::vector<Section>& sections, const std::string& name,
                         const std::string& file) {
  const Section* s = find_section(sections, name);
  if (!s || s->bytes.size() != sizeof(int64_t))
    return make_error(file, "checkpoint", name, "section missing", "restore the checkpoint or start without --resume");
  int64_t v = 0;
  std::memcpy(&v, s->bytes.data(), sizeof(v));
  return v;
}

}  // namespace

Result<bool> save_checkpoint(std::vector<std::unique_ptr<DataParallelChunk>>& chunks,
                             ProcessGroups& groups, const TrainOptions& options, int64_t completed,
                             uint64_t fingerprint) {
  Communicator& world = *groups.world;
  const std::vector<Section> sections = rank_sections(chunks, options, completed);
  int64_t crash_after = -1;
  if (completed == options.test_crash_in_checkpoint && world.rank() == world.size() - 1)
    crash_after = static_cast<int64_t>(serialized_bytes(sections) / 2);
  auto written = write_checkpoint_shard(options.checkpoint_dir, completed, world.rank(), sections, crash_after);
  auto ok = agree(world, written ? Result<bool>(true) : Result<bool>(written.error()));
  if (!ok) return ok.error();
  CheckpointMeta meta;
  meta.step = completed;
  meta.world_size = world.size();
  meta.fingerprint = fingerprint;
  meta.shard_bytes = all_gather_u64(world, *written);  // also the barrier before the MANIFEST
  Result<bool> published = true;
  if (world.rank() == 0) {
    published = publish_checkpoint(options.checkpoint_dir, meta);
    if (published) prune_checkpoints(options.checkpoint_dir, 2);
  }
  return agree(world, published);
}

Result<int64_t> restore_checkpoint(std::vector<std::unique_ptr<DataParallelChunk>>& chunks,
                                   ProcessGroups& groups, const TrainOptions& options,
                                   uint64_t fingerprint) {
  Communicator& world = *groups.world;
  const std::string& root = options.checkpoint_dir;
  auto meta = find_latest_checkpoint(root);
  Result<std::vector<Section>> shard = meta ? read_checkpoint_shard(root, *meta, world.rank(), world.size(), fingerprint)
                                            : Result<std::vector<Section>>(meta.error());
  auto ok = agree(world, shard ? Result<bool>(true) : Result<bool>(shard.error()));
  if (!ok) return ok.error();
  const std::string file = checkpoint_shard_path(root, meta->step, world.rank());
  auto step = read_i64(*shard, "train.step", file);
  Result<bool> loaded = step ? Result<bool>(true) : Result<bool>(step.error());
  if (loaded && *step != meta->step)
    loaded = make_error(file, "train.step", std::to_string(*step), "does not match the MANIFEST step " + std::to_string(meta->step), "");
  // Every check comes before the first collective inside load_state (ZeRO-1/2 all-gather).
  for (size_t c = 0; loaded && c < chunks.size(); ++c) loaded = chunks[c]->check_state(*shard, chunk_prefix(c), file);
  ok = agree(world, loaded);
  if (!ok) return ok.error();
  for (size_t c = 0; c < chunks.size(); ++c) chunks[c]->load_state(*shard, chunk_prefix(c));
  return meta->step;
}

}  // namespace meshplan::exec
