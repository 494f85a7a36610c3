// A checkpoint writer SIGKILLed at random moments (several kills, seeded delays) never leaves the
// latest complete checkpoint unreadable: after each kill the newest MANIFEST's shards load, pass
// their checksums and hold exactly the contents written for that step.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "executor/checkpoint/checkpoint_dir.h"

using namespace meshplan::exec;
namespace fs = std::filesystem;

namespace {

constexpr int kWorld = 2;
constexpr uint64_t kFingerprint = 0x5eed;

// Rank r's shard of step s: 2 MiB whose every byte is derived from (s, r), so a mix-up shows.
std::vector<Section> shard_of(int64_t step, int rank) {
  std::vector<uint8_t> bytes(2u << 20);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(step * 31 + rank * 7 + i);
  return {Section{"step", std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&step),
                                               reinterpret_cast<uint8_t*>(&step) + 8)},
          Section{"weights", std::move(bytes)}};
}

// The child: writes checkpoints for steps first, first+1, ... until it is killed.
[[noreturn]] void write_forever(const std::string& root, int64_t first) {
  for (int64_t step = first;; ++step) {
    CheckpointMeta meta;
    meta.step = step;
    meta.world_size = kWorld;
    meta.fingerprint = kFingerprint;
    for (int r = 0; r < kWorld; ++r) {
      auto w = write_checkpoint_shard(root, step, r, shard_of(step, r));
      if (!w) _exit(3);
      meta.shard_bytes.push_back(*w);
    }
    if (!publish_checkpoint(root, meta)) _exit(3);
    prune_checkpoints(root, 2);
  }
}

}  // namespace

TEST_CASE("checkpoint: random SIGKILLs of a writer keep the latest complete checkpoint loadable",
          "[executor][checkpoint]") {
  const std::string root = (fs::temp_directory_path() / ("meshplan-ckpt-kill-" + std::to_string(::getpid()))).string();
  fs::remove_all(root);
  fs::create_directories(root);
  // Delays are drawn in units of one measured checkpoint write (2 x 2 MiB, MANIFEST, prune), from
  // 1/20 to 3 writes: kills land before, inside and after writes however slow this machine is (a
  // sanitizer build on loaded cores writes many times slower than an idle release build).
  const auto t0 = std::chrono::steady_clock::now();
  {
    const std::string probe = root + "-probe";
    fs::create_directories(probe);
    CheckpointMeta meta;
    meta.step = 1;
    meta.world_size = kWorld;
    meta.fingerprint = kFingerprint;
    for (int r = 0; r < kWorld; ++r) {
      auto w = write_checkpoint_shard(probe, 1, r, shard_of(1, r));
      REQUIRE(w.ok());
      meta.shard_bytes.push_back(*w);
    }
    REQUIRE(publish_checkpoint(probe, meta).ok());
    prune_checkpoints(probe, 2);
    fs::remove_all(probe);
  }
  const double write_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::mt19937 rng(20261124);
  std::uniform_real_distribution<double> delay_writes(0.05, 3.0);
  int64_t next_step = 1, loaded = 0;
  for (int kill = 0; kill < 8; ++kill) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) write_forever(root, next_step);
    if (kill == 7) {
      // The last writer is killed only after it has completed a checkpoint of its own (polled, at
      // most 120 s), then at a random point of a later write: on a machine loaded so unevenly that
      // the probe above under-measured every write, the random delays alone could all land before
      // the first complete checkpoint, and the check below would fail for the machine, not the code.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while (std::chrono::steady_clock::now() < deadline) {
        auto done = find_latest_checkpoint(root);
        if (done && done->step >= next_step) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delay_writes(rng) * write_us)));
    ::kill(pid, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));  // killed mid-way, not a write error (exit 3)
    auto latest = find_latest_checkpoint(root);
    if (!latest) continue;  // killed before the first checkpoint completed
    INFO("kill " << kill << ": latest step " << latest->step);
    CHECK(latest->step >= loaded);
    for (int r = 0; r < kWorld; ++r) {
      auto shard = read_checkpoint_shard(root, *latest, r, kWorld, kFingerprint);
      REQUIRE(shard.ok());
      const std::vector<Section> want = shard_of(latest->step, r);
      REQUIRE(shard->size() == want.size());
      CHECK((*shard)[1].bytes == want[1].bytes);
    }
    loaded = latest->step;
    next_step = latest->step + 1;  // the next writer continues after the last complete step
  }
  CHECK(loaded >= 1);  // at least one kill came after a complete checkpoint
  fs::remove_all(root);
}
