// meshplan entry point: the subcommand table and the mapping of errors to exit codes. Stays short.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>

#include "cli/commands.h"
#include "executor/device_error.h"
#include "cli/help_text.h"
#include "meshplan_version.h"
#include "core/utf8.h"

int main(int argc, char** argv) {
  using namespace meshplan::cli;
  CLI::App app{"meshplan: plan, simulate and run distributed LLM training"};
  app.set_version_flag("--version", std::string(MESHPLAN_VERSION) + " (" + MESHPLAN_GIT_SHA + ")");
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // finish_help turns them into "(default X)"
  int exit_code = kExitOk;
  add_plan_command(app, exit_code);
  add_estimate_command(app, exit_code);
  add_simulate_command(app, exit_code);
  add_run_command(app, exit_code);
  add_calibrate_command(app, exit_code);
  add_scale_command(app, exit_code);
  add_validate_command(app, exit_code);
  add_selftest_command(app, exit_code);
  finish_help(app);
  // Flags end up in JSON reports (paths, names): bytes that are not UTF-8 are refused up front.
  for (int i = 1; i < argc; ++i)
    if (meshplan::invalid_utf8_offset(argv[i]) != std::string::npos) {
      std::cerr << "meshplan: command line: argument " << i << " is not UTF-8 text (hint: pass UTF-8 "
                << "paths and values)\n";
      return kExitBadInput;
    }
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
  } catch (const std::exception& e) {
    // Last resort: user errors are values reported where they are found (exit 2); reaching here
    // is a bug, still reported as one line rather than an abort.
    std::string what = e.what();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::cerr << "meshplan: internal error: " << what << " (hint: please report it with the command)\n";
    return 1;
  }
  return exit_code;
}
