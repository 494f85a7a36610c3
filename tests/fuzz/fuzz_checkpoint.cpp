// libFuzzer target: checkpoint MANIFEST text and shard bytes (the first input byte picks which).
#include <cstddef>
#include <cstdint>
#include <string>

#include "executor/checkpoint/checkpoint_dir.h"
#include "executor/checkpoint/shard_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    auto m = meshplan::exec::parse_manifest_text(text, "MANIFEST");
    if (!m.ok()) (void)m.error().one_line();
  } else {
    auto s = meshplan::exec::parse_shard(text, "rank-00000.bin");
    if (!s.ok()) (void)s.error().one_line();
  }
  return 0;
}
