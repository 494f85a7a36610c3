// The CPU profile `meshplan run` predicts with: the plan's when it was measured, else this host's,
// measured once with quick calibration sweeps and cached (see run_profile.h).
#include "cli/run_profile.h"

#include <unistd.h>

#include <ctime>
#include <iostream>

#include "cli/cache_files.h"
#include "cli/calibrate_report.h"
#include "core/io.h"
#include "executor/backend.h"
#include "executor/calibrate/calibration.h"
#include "executor/comm_local.h"
#include "meshplan_version.h"

namespace meshplan::cli {

namespace {

std::string host() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

// Rank 0's text reaches every rank: 8-byte length, then the bytes.
std::string broadcast_text(exec::Communicator& world, std::string text) {
  uint64_t n = text.size();
  world.broadcast_bytes(&n, sizeof n, 0);
  text.resize(n);
  if (n > 0) world.broadcast_bytes(text.data(), n, 0);
  return text;
}

// `calibrate --quick` sweeps: GEMM <= 256, 16 MiB arrays, collectives <= 4 MB (about 10 s on 2 cores).
exec::CalibrationOptions quick_options() {
  exec::CalibrationOptions o;
  o.gemm_max_n = 256;
  o.gemm_target_s = 0.02;
  o.memory_bytes = 16 << 20;
  o.sweep.max_bytes = std::min(o.sweep.max_bytes, 4e6);
  o.sweep.target_s = 0.01;
  return o;
}

// Measures on `world`'s ranks (one rank: two threads of this process); rank 0 gets the YAML.
std::string measure(exec::Communicator& world, const std::string& name) {
  exec::CalibrationResult r;
  const exec::CalibrationOptions o = quick_options();
  if (world.size() >= 2) {
    std::unique_ptr<exec::Backend> backend = exec::make_cpu_backend();
    r = exec::run_calibration(*backend, world, o);
  } else {
    exec::run_local_ranks(2, [&](int rank, exec::Communicator& comm) {
      std::unique_ptr<exec::Backend> backend = exec::make_cpu_backend();
      exec::CalibrationResult mine = exec::run_calibration(*backend, comm, o);
      if (rank == 0) r = std::move(mine);
    });
  }
  if (world.rank() != 0) return "";
  const std::string version = std::string(MESHPLAN_VERSION) + " (" + MESHPLAN_GIT_SHA + ")";
  return calibrated_profile_yaml(exec::calibrated_profile(r, name, today_utc(), version), r);
}

}  // namespace

Result<PredictionProfile> cpu_prediction_profile(const HardwareProfile& plan_hw, exec::Communicator& world,
                                                 bool announce) {
  if (plan_hw.provenance.kind != "datasheet") return PredictionProfile{plan_hw, "plan", ""};
  const std::string name = "cpu-" + host() + "-" + std::to_string(world.size()) + "ranks";
  const std::string path = cache_dir() + "/" + name + ".yaml";
  const bool root = world.rank() == 0;
  std::string text = broadcast_text(world, root ? read_cache_file(path) : "");
  std::string source = "cache";
  if (text.empty() || !parse_hardware(text, path)) {
    if (root && announce)
      std::cerr << "meshplan: measuring this host once for the run's prediction (" << plan_hw.name
                << " is a GPU datasheet); cached at " << path << "\n";
    const std::string measured = measure(world, name);
    if (root) write_cache_file(path, measured);
    text = broadcast_text(world, measured);
    source = "measured";
  }
  auto hw = parse_hardware(text, path);
  if (!hw) return hw.error();
  return PredictionProfile{std::move(hw).value(), source, path};
}

}  // namespace meshplan::cli
