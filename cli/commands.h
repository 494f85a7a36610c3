// The subcommand table: each cli/cmd_*.cpp adds one subcommand and sets the exit code when it runs.
#pragma once
#include <string>

namespace CLI {
class App;
}

namespace meshplan::cli {

/// Exit codes (DESIGN.md): 0 ok, 2 bad input, 1 other failure.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

/// Each registers one subcommand on `app`; when it runs, its callback stores the exit code in
/// `exit_code` (CLI11 callbacks return nothing).
void add_estimate_command(CLI::App& app, int& exit_code);
void add_plan_command(CLI::App& app, int& exit_code);
void add_simulate_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_calibrate_command(CLI::App& app, int& exit_code);
void add_scale_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
void add_selftest_command(CLI::App& app, int& exit_code);

}  // namespace meshplan::cli
