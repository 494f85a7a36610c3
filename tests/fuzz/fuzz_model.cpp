// libFuzzer target: model files (YAML/JSON text) through parse_model; any crash, hang or sanitizer report fails.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto m = meshplan::parse_model(text, "fuzz.yaml");
  if (m.ok()) {
    (void)meshplan::model_to_json(m.value());  // accepted input must also be writable as JSON
    (void)m.value().exact_parameters();
  } else {
    (void)m.error().one_line();
  }
  return 0;
}
