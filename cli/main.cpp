// meshplan entry point: the subcommand table and the mapping of errors to exit codes. Stays short.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/commands.h"
#include "executor/device_error.h"

int main(int argc, char** argv) {
  using namespace meshplan::cli;
  CLI::App app{"meshplan: plan, simulate and run distributed LLM training"};
  app.set_version_flag("--version", std::string(MESHPLAN_VERSION) + " (" + MESHPLAN_GIT_SHA + ")");
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_plan_command(app, exit_code);
  add_estimate_command(app, exit_code);
  add_simulate_command(app, exit_code);
  add_run_command(app, exit_code);
  add_calibrate_command(app, exit_code);
  add_scale_command(app, exit_code);
  add_validate_command(app, exit_code);
  add_selftest_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const meshplan::exec::DeviceError& e) {
    // A failed CUDA/cuBLAS/cuDNN/NCCL call that no command turned into a value: its one line, exit 1.
    std::cerr << e.what() << "\n";
    return kExitFailure;
  } catch (const CLI::ParseError& e) {
    // Flag errors are bad input: one line, exit 2 (help and --version exit 0).
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "meshplan: command line: " << e.what() << " (hint: meshplan "
              << "<command> --help)\n";
    return kExitBadInput;
  }
  return exit_code;
}
