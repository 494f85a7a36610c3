// libFuzzer target: schedule files through parse_schedule_text and format_schedule of what it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/schedule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto s = meshplan::parse_schedule_text(text, "fuzz.txt");
  if (s.ok()) (void)meshplan::format_schedule(s.value());
  else (void)s.error().one_line();
  return 0;
}
