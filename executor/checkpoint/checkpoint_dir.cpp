// Step folders, MANIFEST text (commit point of a checkpoint), discovery of the latest complete one.
#include "executor/checkpoint/checkpoint_dir.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/io.h"

namespace meshplan::exec {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestHeader = "meshplan-checkpoint 1";
constexpr int kMaxManifestShards = 1 << 24;  // ranks of one job (limits::kMaxGpus)

std::string manifest_path(const std::string& root, int64_t step) {
  return checkpoint_step_dir(root, step) + "/MANIFEST";
}

Error manifest_error(const std::string& path, const std::string& what) {
  return make_error(path, "checkpoint", "", "corrupted checkpoint manifest: " + what,
                    "restore the checkpoint folder or start without --resume");
}

// Step numbers of the folders named step-XXXXXXXX under root, ascending.
std::vector<int64_t> step_folders(const std::string& root) {
  std::vector<int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    long long step = -1;
    char tail = 0;
    if (entry.is_directory() && std::sscanf(name.c_str(), "step-%lld%c", &step, &tail) == 1 && step >= 0)
      steps.push_back(step);
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Result<CheckpointMeta> parse_manifest(const std::string& path) {
  auto text = read_text_file(path);  // regular files only, size-capped
  if (!text) return manifest_error(path, "cannot open");
  return parse_manifest_text(text.value(), path);
}

}  // namespace

Result<CheckpointMeta> parse_manifest_text(const std::string& text, const std::string& path) {
  std::istringstream in(text);
  std::string header;
  std::getline(in, header);
  if (header != kManifestHeader) return manifest_error(path, "bad header");
  CheckpointMeta meta;
  std::string key;
  int fields = 0;
  while (in >> key) {
    if (key == "step") in >> meta.step, fields |= 1;
    else if (key == "world_size") in >> meta.world_size, fields |= 2;
    else if (key == "fingerprint") in >> std::hex >> meta.fingerprint >> std::dec, fields |= 4;
    else if (key == "shard") {
      int rank = -1;
      uint64_t bytes = 0;
      in >> rank >> bytes;
      if (rank != static_cast<int>(meta.shard_bytes.size()) || rank >= kMaxManifestShards)
        return manifest_error(path, "shards out of order");
      meta.shard_bytes.push_back(bytes);
    } else if (key == "end") {
      fields |= 8;
      break;
    } else {
      return manifest_error(path, "unknown key '" + key + "'");
    }
    if (!in) return manifest_error(path, "bad value of '" + key + "'");
  }
  if (fields != 15 || meta.world_size < 1 ||
      static_cast<int>(meta.shard_bytes.size()) != meta.world_size)
    return manifest_error(path, "incomplete");
  return meta;
}

std::string checkpoint_step_dir(const std::string& root, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08lld", static_cast<long long>(step));
  return root + "/" + name;
}

std::string checkpoint_shard_path(const std::string& root, int64_t step, int rank) {
  char name[32];
  std::snprintf(name, sizeof(name), "/rank-%05d.bin", rank);
  return checkpoint_step_dir(root, step) + name;
}

Result<uint64_t> write_checkpoint_shard(const std::string& root, int64_t step, int rank,
                                        const std::vector<Section>& sections,
                                        int64_t crash_after_bytes) {
  std::error_code ec;
  fs::create_directories(checkpoint_step_dir(root, step), ec);
  if (ec) {
    return make_error(root, "--checkpoint-dir", root, "cannot create " + checkpoint_step_dir(root, step) +
                      ": " + ec.message(), "choose a writable directory");
  }
  const std::string path = checkpoint_shard_path(root, step, rank);
  auto written = write_shard_file(path, sections, crash_after_bytes);
  if (!written) return written.error();
  return static_cast<uint64_t>(fs::file_size(path, ec));
}

Result<bool> publish_checkpoint(const std::string& root, const CheckpointMeta& meta) {
  std::ostringstream out;
  out << kManifestHeader << "\n"
      << "step " << meta.step << "\n"
      << "world_size " << meta.world_size << "\n"
      << "fingerprint " << std::hex << meta.fingerprint << std::dec << "\n";
  for (size_t r = 0; r < meta.shard_bytes.size(); ++r) out << "shard " << r << " " << meta.shard_bytes[r] << "\n";
  out << "end\n";
  return write_file_atomic(manifest_path(root, meta.step), out.str());
}

Result<CheckpointMeta> find_latest_checkpoint(const std::string& root) {
  std::vector<int64_t> steps = step_folders(root);
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (!exists(manifest_path(root, *it))) continue;  // incomplete: a write was interrupted
    auto meta = parse_manifest(manifest_path(root, *it));
    if (meta && meta->step != *it) return manifest_error(manifest_path(root, *it), "step does not match its folder");
    return meta;
  }
  return make_error(root, "--resume", "", "no complete checkpoint in this directory",
                    "run once with --checkpoint-dir first, or drop --resume");
}

Result<std::vector<Section>> read_checkpoint_shard(const std::string& root, const CheckpointMeta& meta,
                                                   int rank, int world_size, uint64_t fingerprint) {
  const std::string manifest = manifest_path(root, meta.step);
  if (meta.world_size != world_size) {
    return make_error(manifest, "world_size", std::to_string(meta.world_size),
                      "checkpoint was written by " + std::to_string(meta.world_size) +
                          " ranks, this run has " + std::to_string(world_size),
                      "resume with the same plan and mpirun -np");
  }
  if (meta.fingerprint != fingerprint) {
    return make_error(manifest, "fingerprint", "", "checkpoint belongs to another model or configuration",
                      "resume with the plan and candidate that wrote it");
  }
  const std::string path = checkpoint_shard_path(root, meta.step, rank);
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) return make_error(path, "checkpoint", "", "missing checkpoint shard", "restore the file or start without --resume");
  if (size != meta.shard_bytes[rank]) {
    return make_error(path, "checkpoint", std::to_string(size) + " bytes",
                      "corrupted checkpoint shard: MANIFEST says " + std::to_string(meta.shard_bytes[rank]) + " bytes",
                      "restore the file or start without --resume");
  }
  return read_shard_file(path);
}

void prune_checkpoints(const std::string& root, int keep) {
  std::vector<int64_t> steps = step_folders(root);
  int complete_seen = 0;
  bool newer_complete = false;
  std::error_code ec;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const bool complete = exists(manifest_path(root, *it));
    const bool drop = complete ? ++complete_seen > keep : newer_complete;
    newer_complete = newer_complete || complete;
    if (!drop) continue;
    // The MANIFEST goes first: a kill during the removal leaves an incomplete folder, never a
    // "complete" one with shards missing.
    fs::remove(manifest_path(root, *it), ec);
    fs::remove_all(checkpoint_step_dir(root, *it), ec);
  }
}

}  // namespace meshplan::exec
