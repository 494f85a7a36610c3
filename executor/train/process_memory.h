// Resident memory of this process from /proc (Linux): current and peak RSS in bytes.
#pragma once
#include <cstdint>

namespace meshplan::exec {

/// VmRSS and VmHWM of /proc/self/status in bytes (0 when unavailable).
uint64_t current_rss_bytes();
uint64_t peak_rss_bytes();

}  // namespace meshplan::exec
