// Reads and writes gpu.fp8_rowwise_speedup of hardware profiles (hardware-profiles/README.md).
#include "core/io_fp8_speedup.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "core/io_number.h"

namespace meshplan::io_detail {

namespace {

const char* const kExample = "{m: [32768], k: [1024, 4096], n: [1024, 4096], speedup: [0.51, 0.77, 0.59, 1.04]}";

// An axis: positive numbers, strictly ascending.
std::vector<double> axis(Reader& r, const YAML::Node& table, const char* key, const std::string& at) {
  return ascending_number_list(r, table, key, at, kExample, true, "each axis ascending");
}

}  // namespace

void read_fp8_rowwise_speedup(Reader& r, const YAML::Node& gpu, HardwareProfile& hw) {
  if (!Reader::has(gpu, "fp8_rowwise_speedup")) return;
  const std::string at = "gpu.fp8_rowwise_speedup";
  const YAML::Node t = r.map(gpu, "fp8_rowwise_speedup", at, false, kExample);
  if (!r.ok()) return;
  Fp8LinearSpeedup s;
  s.m = axis(r, t, "m", at + ".m");
  if (r.ok()) s.k = axis(r, t, "k", at + ".k");
  if (r.ok()) s.n = axis(r, t, "n", at + ".n");
  if (r.ok()) s.speedup = positive_number_list(r, t, "speedup", at + ".speedup", kExample, true);
  const size_t cells = s.m.size() * s.k.size() * s.n.size();
  if (r.ok() && s.speedup.size() != cells)
    r.fail(at + ".speedup", std::to_string(s.speedup.size()) + " values",
           "needs m x k x n = " + std::to_string(cells) + " values", "n varying fastest, then k, then m");
  if (r.ok()) hw.fp8_rowwise_speedup = s;
}

nlohmann::ordered_json fp8_rowwise_speedup_json(const HardwareProfile& hw) {
  const Fp8LinearSpeedup& s = hw.fp8_rowwise_speedup;
  if (s.empty()) return nullptr;
  auto list = [](const std::vector<double>& v) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (double x : v) a.push_back(scaled_json(x, 1.0));
    return a;
  };
  return {{"m", list(s.m)}, {"k", list(s.k)}, {"n", list(s.n)}, {"speedup", list(s.speedup)}};
}

}  // namespace meshplan::io_detail
