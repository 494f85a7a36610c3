// libFuzzer target: hardware profiles through parse_hardware, and the round trip of what it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto hw = meshplan::parse_hardware(text, "fuzz.yaml");
  if (hw.ok()) {
    (void)meshplan::hardware_to_yaml(hw.value());
    (void)meshplan::hardware_to_json(hw.value());
  } else {
    (void)hw.error().one_line();
  }
  return 0;
}
