// --help that explains: allowed values, defaults, required flags and units, the same way for every
// command (options added later by any cmd_*.cpp get the same treatment through finish_help).
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace meshplan::cli {

/// Appends the allowed values as " {a|b|c}" to the option's help (the bash completion script
/// scripts/meshplan-completion.bash offers the values in braces). Returns `o` for chaining.
CLI::Option* allowed_values(CLI::Option* o, const std::vector<std::string>& values);

/// Marks a flag required in the help: " (required)" or " (required unless <unless>)". The command
/// checks it itself (so that it can also come from a plan file).
CLI::Option* required_flag(CLI::Option* o, const std::string& unless = "");

/// Call once on the root app after every subcommand is registered (main.cpp sets
/// option_defaults()->always_capture_default() first): every option whose help does not state its
/// default already and is not required gets " (default X)" from its bound variable's starting value.
void finish_help(CLI::App& app);

}  // namespace meshplan::cli
