// Checkpoint files: round trip, every corruption detected, and a SIGKILL in the middle of a write
// (forked child) leaving the previous checkpoint the latest readable one.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "executor/checkpoint/checkpoint_dir.h"

using namespace meshplan::exec;
namespace fs = std::filesystem;

static std::string fresh_dir(const char* name) {
  std::string dir = fs::temp_directory_path().string() + "/meshplan-test-" + name + "-" +
                    std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

static std::vector<Section> sample_sections(float base, size_t n) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = base + static_cast<float>(i);
  int64_t step = static_cast<int64_t>(base);
  return {make_section("params", values.data(), values.size() * 4), make_section("step", &step, 8)};
}

// Writes a complete checkpoint of `ranks` shards at `step`.
static void write_complete(const std::string& root, int64_t step, int ranks) {
  CheckpointMeta meta;
  meta.step = step;
  meta.world_size = ranks;
  meta.fingerprint = 0xabcdef;
  for (int r = 0; r < ranks; ++r) {
    auto bytes = write_checkpoint_shard(root, step, r, sample_sections(static_cast<float>(step), 1000 + r));
    REQUIRE(bytes.ok());
    meta.shard_bytes.push_back(*bytes);
  }
  REQUIRE(publish_checkpoint(root, meta).ok());
}

TEST_CASE("checkpoint: shard round trip and latest discovery") {
  std::string root = fresh_dir("roundtrip");
  write_complete(root, 3, 2);
  write_complete(root, 7, 2);
  auto meta = find_latest_checkpoint(root);
  REQUIRE(meta.ok());
  CHECK(meta->step == 7);
  auto shard = read_checkpoint_shard(root, *meta, 1, 2, 0xabcdef);
  REQUIRE(shard.ok());
  const Section* params = find_section(*shard, "params");
  REQUIRE(params);
  REQUIRE(params->bytes.size() == 1001 * 4);
  float f;
  std::memcpy(&f, params->bytes.data() + 4 * 10, 4);
  CHECK(f == 17.0f);
  CHECK(find_section(*shard, "nope") == nullptr);
  // Wrong world size / fingerprint are errors naming the field.
  auto wrong = read_checkpoint_shard(root, *meta, 0, 4, 0xabcdef);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().field == "world_size");
  CHECK_FALSE(read_checkpoint_shard(root, *meta, 0, 2, 0x1234).ok());
  prune_checkpoints(root, 1);
  CHECK_FALSE(fs::exists(checkpoint_step_dir(root, 3)));
  CHECK(fs::exists(checkpoint_step_dir(root, 7)));
  fs::remove_all(root);
}

TEST_CASE("checkpoint: flipped byte, truncation and a bad manifest are one-line errors") {
  std::string root = fresh_dir("corrupt");
  write_complete(root, 5, 1);
  auto meta = find_latest_checkpoint(root);
  REQUIRE(meta.ok());
  const std::string shard = checkpoint_shard_path(root, 5, 0);
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  auto flipped = read_checkpoint_shard(root, *meta, 0, 1, 0xabcdef);
  REQUIRE_FALSE(flipped.ok());
  CHECK(flipped.error().message.find("checksum") != std::string::npos);
  CHECK(flipped.error().one_line().find('\n') == std::string::npos);

  fs::resize_file(shard, fs::file_size(shard) - 10);
  auto truncated = read_checkpoint_shard(root, *meta, 0, 1, 0xabcdef);
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.error().message.find("corrupted") != std::string::npos);

  std::ofstream(checkpoint_step_dir(root, 5) + "/MANIFEST") << "garbage\n";
  auto bad = find_latest_checkpoint(root);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("manifest") != std::string::npos);
  fs::remove_all(root);
}

TEST_CASE("checkpoint: SIGKILL in the middle of a write keeps the previous checkpoint") {
  std::string root = fresh_dir("crash");
  write_complete(root, 4, 2);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Rank 0's shard of step 8 completes; rank 1 dies half-way through its temp file.
    write_checkpoint_shard(root, 8, 0, sample_sections(8, 1000));
    write_checkpoint_shard(root, 8, 1, sample_sections(8, 1001), 2000);
    std::_Exit(0);  // not reached
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(fs::exists(checkpoint_shard_path(root, 8, 1) + ".tmp"));
  auto meta = find_latest_checkpoint(root);
  REQUIRE(meta.ok());
  CHECK(meta->step == 4);
  for (int r = 0; r < 2; ++r) CHECK(read_checkpoint_shard(root, *meta, r, 2, 0xabcdef).ok());
  // The next complete checkpoint replaces the incomplete folder and becomes the latest.
  write_complete(root, 8, 2);
  prune_checkpoints(root, 1);
  auto after = find_latest_checkpoint(root);
  REQUIRE(after.ok());
  CHECK(after->step == 8);
  CHECK_FALSE(fs::exists(checkpoint_step_dir(root, 4)));
  fs::remove_all(root);
}

TEST_CASE("checkpoint: empty directory is an error with a hint") {
  std::string root = fresh_dir("empty");
  auto none = find_latest_checkpoint(root);
  REQUIRE_FALSE(none.ok());
  CHECK_FALSE(none.error().hint.empty());
  fs::remove_all(root);
}
