// `meshplan calibrate --backend cpu|cuda --output profile.yaml`: measures GEMM, memory bandwidth and
// collectives (MPI on the CPU, cuBLASLt/HBM/NCCL on GPUs) on the ranks it is launched with, fits the
// cost model's parameters and writes a hardware profile (with provenance and raw curves) that
// plan/estimate/simulate accept as is.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>

#include "cli/calibrate_report.h"
#include "cli/commands.h"
#include "cli/device_guard.h"
#include "cli/selftest_gate.h"
#include "cli/help_text.h"
#include "cli/options.h"
#include "cli/report.h"
#include "core/io.h"
#include "executor/backend_factory.h"
#include "executor/calibrate/calibration.h"
#include "executor/cuda/cuda_calibrate.h"
#include "executor/mpi/mpi_comm.h"
#include "meshplan_version.h"

namespace meshplan::cli {

namespace {

struct CalibrateArgs {
  std::string backend = "cpu";
  std::string name;                 // default cpu-<host> / cuda-<host>
  std::string base;                 // cuda: datasheet profile (name or path) for what one GPU cannot measure
  std::string profiles_dir;         // empty = default_profiles_dir()
  int64_t gemm_max_n = 0;           // 0 = the backend's default (cpu 768, cuda 8192)
  OutputOptions output;
  exec::CalibrationOptions probe;
  bool quick = false;
  bool no_selftest = false;  // cuda: skip the device selftest before calibrating
  double comm_timeout_s = 300;
  double soak_s = -1;        // < 0: the backend's default (cpu 0, cuda 30)
};

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

// "[#########...........]  45 %  all_gather 2048 B" redrawn in place on a terminal.
exec::ProgressFn progress_bar() {
  if (!isatty(STDERR_FILENO)) return nullptr;
  return [](double f, const std::string& what) {
    const int width = 30, done = static_cast<int>(f * width + 0.5);
    std::fprintf(stderr, "\r[%s%s] %3.0f %%  %-40.40s", std::string(done, '#').c_str(),
                 std::string(width - done, '.').c_str(), f * 100.0, what.c_str());
    if (f >= 1.0) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

Result<bool> check_args(const CalibrateArgs& a, int world) {
  if (a.backend != "cpu" && a.backend != "cuda")
    return make_error("command line", "--backend", a.backend, "unknown backend", "use --backend cpu or --backend cuda");
  if (a.output.output.empty())
    return make_error("command line", "--output", "", "is required",
                      "e.g. --output hardware-profiles/calibrated/" + a.backend + ".yaml");
  if (auto w = check_writable(a.output.output); !w) return w.error();  // before minutes of probes
  // CUDA: one rank is fine with --base (calibrate_cuda says so otherwise).
  if (a.backend == "cpu" && world < 2) {
    return make_error("command line", "ranks", std::to_string(world),
                      "the collective sweeps need at least 2 ranks",
                      "launch with mpirun -np 2 (or more) meshplan calibrate ...");
  }
  return check_format(a.output);
}

std::string tool_version() { return std::string(MESHPLAN_VERSION) + " (" + MESHPLAN_GIT_SHA + ")"; }

// Writes the profile, prints the summary; exit 1 when a probe's result failed its check.
int write_and_report(const CalibrateArgs& a, const HardwareProfile& hw, const exec::CalibrationResult& r) {
  const std::string text = calibrated_profile_yaml(hw, r);
  // A profile plan cannot read is worse than none: measurements outside the reader's ranges (core/limits.h)
  // stop here with the reader's own message, and nothing is written.
  if (auto back = parse_hardware(text, a.output.output); !back) return report_error(back.error());
  if (auto w = write_text_file(a.output.output, text); !w) return report_error(w.error());
  if (a.output.format == "json") std::cout << calibration_json(hw, r);
  else if (a.output.format == "yaml") std::cout << json_text_to_yaml(calibration_json(hw, r));
  else std::cout << calibration_table(hw, r, a.output.output);
  return r.all_verified ? kExitOk : kExitFailure;
}

int run_cuda(CalibrateArgs& a, exec::MpiRuntime& mpi) {
  const bool root = mpi.world_rank() == 0;
  exec::CudaCalibrationOptions o;
  HardwareProfile base;
  if (!a.base.empty()) {
    auto hw = load_hardware(a.base, a.profiles_dir.empty() ? default_profiles_dir() : a.profiles_dir);
    if (!hw) return root ? report_error(hw.error()) : kExitBadInput;
    base = std::move(hw).value();
    o.base = &base;
  }
  o.sweep = a.probe.sweep;
  if (a.gemm_max_n > 0) o.gemm_max_n = a.gemm_max_n;
  if (a.quick) {
    o.gemm_max_n = std::min<int64_t>(o.gemm_max_n, 2048);
    o.gemm_target_s = 0.02;
    o.hbm_bytes = 256ll << 20;
    o.soak_s = 5;
  }
  if (a.soak_s >= 0) o.soak_s = a.soak_s;
  if (root) o.progress = progress_bar();
  // A device that computes wrong results must not be calibrated (after the argument checks
  // calibrate_cuda makes first: one rank needs --base).
  if (!a.no_selftest && (mpi.world_size() >= 2 || o.base != nullptr)) {
    auto made = exec::make_backend("cuda");
    if (!made) return root ? report_error(made.error()) : kExitBadInput;
    if (!device_selftest_passes(**made)) return end_on_failed_selftest(mpi.world_size());
  }
  auto r = exec::calibrate_cuda(mpi.world(), o);
  if (!r) return root ? report_error(r.error()) : kExitBadInput;
  if (!root) return kExitOk;
  const exec::CudaCalibrationResult& cr = r.value();
  const std::string name = a.name.empty() ? "cuda-" + cr.common.host : a.name;
  const HardwareProfile hw = exec::cuda_calibrated_profile(cr, o, name, today_utc(), tool_version());
  return write_and_report(a, hw, cr.common);
}

int run_calibrate(CalibrateArgs& a) {
  exec::MpiRuntime mpi(a.comm_timeout_s);
  const bool root = mpi.world_rank() == 0;
  if (auto ok = check_args(a, mpi.world_size()); !ok) return root ? report_error(ok.error()) : kExitBadInput;
  if (a.quick) {
    a.probe.sweep.max_bytes = std::min(a.probe.sweep.max_bytes, 4e6);
    a.probe.sweep.target_s = 0.01;
  }
  if (a.backend == "cuda") {
    try {
      return run_cuda(a, mpi);
    } catch (const exec::DeviceError& e) {  // one line, exit 1 (the whole job with peers)
      return end_on_device_error(e, mpi.world_size());
    }
  }
  if (a.gemm_max_n > 0) a.probe.gemm_max_n = a.gemm_max_n;
  if (a.quick) {
    a.probe.gemm_max_n = 256;
    a.probe.gemm_target_s = 0.02;
    a.probe.memory_bytes = 16 << 20;
  }
  if (a.soak_s >= 0) a.probe.soak_s = a.soak_s;
  if (root) a.probe.progress = progress_bar();
  std::unique_ptr<exec::Backend> backend = exec::make_cpu_backend();
  exec::CalibrationResult r = exec::run_calibration(*backend, mpi.world(), a.probe);
  if (!root) return kExitOk;
  const std::string name = a.name.empty() ? "cpu-" + r.host : a.name;
  return write_and_report(a, exec::calibrated_profile(r, name, today_utc(), tool_version()), r);
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand("calibrate", "Measure GEMM, memory and MPI collectives; write a hardware profile");
  allowed_values(sub->add_option("--backend", args->backend, "Backend to calibrate (default cpu)"), {"cpu", "cuda"});
  required_flag(sub->add_option("--output", args->output.output, "Profile YAML to write"));
  allowed_values(sub->add_option("--format", args->output.format, "Summary on stdout (default table)"),
                 {"table", "json", "yaml"});
  sub->add_option("--name", args->name, "Profile name (default cpu-<host> or cuda-<host>)");
  sub->add_option("--base", args->base,
                  "cuda: datasheet profile (name or path) whose node/network sections replace what one GPU "
                  "cannot measure (needed with one rank)");
  sub->add_option("--profiles-dir", args->profiles_dir, "Directory of the shipped hardware profiles (for --base)");
  sub->add_option("--gemm-max-n", args->gemm_max_n, "Largest square GEMM side of the sweep (default cpu 768, cuda 8192)");
  sub->add_option("--max-bytes", args->probe.sweep.max_bytes, "Largest collective size in bytes (default 256e6)");
  sub->add_option("--time-budget-s", args->probe.sweep.budget_s,
                  "Collective sweeps stop growing sizes after this long (default 60)");
  sub->add_flag("--quick", args->quick,
                "Small sweeps for CI and small machines (GEMM <= 256 on cpu, <= 2048 on cuda; collectives <= 4 MB)");
  sub->add_option("--comm-timeout-s", args->comm_timeout_s, "End the job when one communication blocks longer (default 300)");
  sub->add_option("--soak-s", args->soak_s,
                  "Seconds to run one GEMM (cpu: the largest of the sweep, cuda: the fastest bf16) back to "
                  "back on every rank after the sweep, to measure the clock held at the power limit (the "
                  "profile's sustained_clock_fraction; default cpu 0 = not measured, cuda 30, --quick 5)")
      ->check(CLI::Range(0.0, 3600.0));
  sub->add_flag("--no-selftest", args->no_selftest, "cuda: skip the device selftest before calibrating");
  sub->footer("Launch on the ranks to calibrate: mpirun -np 4 meshplan calibrate --output cpu.yaml\n"
              "(as root: --allow-run-as-root; more ranks than cores: --oversubscribe). Then plan on it:\n"
              "meshplan plan --hardware cpu.yaml --dtype fp32 ...\n"
              "GPUs: mpirun -np 8 meshplan calibrate --backend cuda --output gpu.yaml (one rank per GPU);\n"
              "one GPU: meshplan calibrate --backend cuda --base h100-80gb-sxm --output gpu.yaml");
  sub->callback([args, &exit_code] { exit_code = run_calibrate(*args); });
}

}  // namespace meshplan::cli
