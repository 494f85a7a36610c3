// Picks a profile's attention-speed curves by library release (core/attention_library.h).
#include "core/attention_library.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>

namespace meshplan {

namespace {
// The dot-separated parts of a valid version, padded to 4 ("9.17" -> 9, 17, 0, 0).
std::vector<long> parts(const std::string& v) {
  std::vector<long> out;
  size_t i = 0;
  while (i <= v.size()) {
    const size_t dot = v.find('.', i);
    const size_t end = dot == std::string::npos ? v.size() : dot;
    out.push_back(std::strtol(v.substr(i, end - i).c_str(), nullptr, 10));
    if (dot == std::string::npos) break;
    i = dot + 1;
  }
  out.resize(4, 0);
  return out;
}

// Older first; unversioned curves before versioned ones.
bool older(const AttentionKernelSpeed& a, const AttentionKernelSpeed& b) {
  if (a.version.empty() || b.version.empty()) return a.version.empty() && !b.version.empty();
  return compare_library_versions(a.version, b.version) < 0;
}
}  // namespace

bool valid_library_version(const std::string& v) {
  if (v.empty() || v.size() > 23) return false;
  int fields = 1, digits = 0;
  for (char c : v) {
    if (c == '.') {
      if (digits == 0 || ++fields > 4) return false;
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      if (++digits > 5) return false;
    } else {
      return false;
    }
  }
  return digits > 0;
}

int compare_library_versions(const std::string& a, const std::string& b) {
  const std::vector<long> x = parts(a), y = parts(b);
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

void select_attention_library(HardwareProfile& hw, const std::string& kernel, const std::string& version) {
  std::map<int64_t, std::vector<size_t>> by_head_dim;  // this kernel's curves, by head dimension
  for (size_t i = 0; i < hw.attention_kernel_speeds.size(); ++i)
    if (hw.attention_kernel_speeds[i].kernel == kernel) by_head_dim[hw.attention_kernel_speeds[i].head_dim].push_back(i);
  std::vector<bool> drop(hw.attention_kernel_speeds.size(), false);
  for (auto& [head_dim, idx] : by_head_dim) {
    if (idx.size() < 2) continue;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return older(hw.attention_kernel_speeds[a], hw.attention_kernel_speeds[b]);
    });
    size_t keep = idx.back();  // newest
    if (!version.empty()) {
      keep = idx.front();  // every curve newer: the oldest
      for (size_t i : idx) {
        const std::string& v = hw.attention_kernel_speeds[i].version;
        if (v.empty() || compare_library_versions(v, version) <= 0) keep = i;
      }
    }
    for (size_t i : idx) drop[i] = i != keep;
  }
  std::vector<AttentionKernelSpeed> kept;
  for (size_t i = 0; i < hw.attention_kernel_speeds.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(hw.attention_kernel_speeds[i]));
  hw.attention_kernel_speeds = std::move(kept);
}

}  // namespace meshplan
