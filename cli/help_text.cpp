// Help text helpers: allowed values, required marks and captured defaults (see help_text.h).
#include "cli/help_text.h"

#include <CLI/CLI.hpp>

namespace meshplan::cli {

CLI::Option* allowed_values(CLI::Option* o, const std::vector<std::string>& values) {
  std::string list;
  for (const auto& v : values) list += (list.empty() ? "" : "|") + v;
  o->description(o->get_description() + " {" + list + "}");
  return o;
}

CLI::Option* required_flag(CLI::Option* o, const std::string& unless) {
  o->description(o->get_description() + (unless.empty() ? " (required)" : " (required unless " + unless + ")"));
  return o;
}

static void finish_options(CLI::App* app) {
  for (CLI::Option* o : app->get_options()) {
    const std::string d = o->get_description();
    const std::string def = o->get_default_str();
    o->default_str("");  // shown in the description, not as CLI11's "=X" after the type
    if (o->get_type_size() == 0 || def.empty() || o->get_group().empty()) continue;  // flags, hidden
    if (d.find("default") != std::string::npos || d.find("(required") != std::string::npos) continue;
    o->description(d + " (default " + def + ")");
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) finish_options(sub);
}

void finish_help(CLI::App& app) { finish_options(&app); }

}  // namespace meshplan::cli
