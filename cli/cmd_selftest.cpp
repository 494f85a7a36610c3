// `meshplan selftest --backend cuda|cpu`: every kernel and library call the executor uses, on small
// shapes on this machine's device, against the CPU reference; prints the table (name, shape, max abs
// and rel error, tolerance, ok). Exit 0 all ok; 1 a mismatch or a failing library call (one line
// naming it); 2 no such backend here (no device, a build without CUDA: one line, like `run`).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/selftest_gate.h"
#include "executor/selftest/device_selftest.h"

namespace meshplan::cli {

namespace {

struct SelftestArgs {
  std::string backend = "cuda";
};

int run_selftest_command(const SelftestArgs& a) {
  if (a.backend != "cpu" && a.backend != "cuda") {
    return report_error(make_error("command line", "--backend", a.backend, "unknown backend", "use --backend cuda or --backend cpu"));
  }
  auto result = exec::run_named_selftest(a.backend);
  if (!result) return report_error(result.error());
  const exec::DeviceSelftest& s = *result;
  std::cout << "selftest on " << s.device << ", GEMM math " << s.gemm_precision << ", attention "
            << s.attention_kernel << "\n"
            << exec::selftest_table(s.report);
  if (!s.ok()) {
    std::cout << std::flush;
    std::cerr << exec::selftest_failure_line(s) << "\n";
    return kExitFailure;
  }
  std::cout << "selftest: " << s.report.rows.size() << " checks ok\n";
  return kExitOk;
}

}  // namespace

void add_selftest_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SelftestArgs>();
  CLI::App* sub = app.add_subcommand(
      "selftest", "Check every executor kernel and library call on this machine's device against the CPU reference");
  sub->add_option("--backend", args->backend, "cuda (default): the GPU of this process | cpu: the fast CPU kernels");
  sub->footer("Exit 0: all checks within tolerance; 1: a mismatch or a failing CUDA/cuBLAS/NCCL call;\n"
              "2: the backend is not available here (no GPU, or a build without CUDA).");
  sub->callback([args, &exit_code] { exit_code = run_selftest_command(*args); });
}

}  // namespace meshplan::cli
