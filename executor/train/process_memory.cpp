// Reads VmRSS / VmHWM ("kB" units) from /proc/self/status.
#include "executor/train/process_memory.h"

#include <fstream>
#include <string>

namespace meshplan::exec {

static uint64_t status_kb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string name;
  uint64_t kb = 0;
  while (in >> name) {
    if (name == key + ":") {
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, name);
  }
  return 0;
}

uint64_t current_rss_bytes() { return status_kb("VmRSS"); }
uint64_t peak_rss_bytes() { return status_kb("VmHWM"); }

}  // namespace meshplan::exec
