// libFuzzer target: plan files (meshplan.plan/1 JSON) through parse_plan_file and plan_candidate.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/plan_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto plan = meshplan::cli::parse_plan_file(text, "fuzz.json");
  if (plan.ok()) {
    auto c = meshplan::cli::plan_candidate(plan.value(), 0, "fuzz.json");
    if (!c.ok()) (void)c.error().one_line();
  } else {
    (void)plan.error().one_line();
  }
  return 0;
}
