// Reads and writes gpu.fp8_rowwise_speedup of hardware profiles (hardware-profiles/README.md).
#include "core/io_fp8_speedup.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "core/io_number.h"

namespace meshplan::io_detail {

namespace {

const char* const kExample = "{m: [32768], k: [1024, 4096], n: [1024, 4096], speedup: [0.51, 0.77, 0.59, 1.04]}";

std::vector<double> positive_numbers(Reader& r, const YAML::Node& table, const char* key, const std::string& at,
                                     bool ascending) {
  std::vector<double> out;
  if (!Reader::has(table, key)) {
    r.fail(at, "", "missing required key", kExample);
    return out;
  }
  const YAML::Node list = table[key];
  if (!list.IsSequence() || list.size() == 0) {
    r.fail(at, node_text(list), "must be a non-empty list of numbers", kExample);
    return out;
  }
  for (size_t i = 0; i < list.size() && r.ok(); ++i) {
    const std::string where = at + "[" + std::to_string(i) + "]";
    double v = 0.0;
    try {
      v = list[i].as<double>();
    } catch (const YAML::Exception&) {
      r.fail(where, node_text(list[i]), "must be a number", kExample);
      break;
    }
    if (!(v > 0.0) || !std::isfinite(v)) r.fail(where, node_text(list[i]), "must be positive", kExample);
    else if (ascending && !out.empty() && !(v > out.back()))
      r.fail(where, node_text(list[i]), "must be larger than the one before", "each axis ascending");
    out.push_back(v);
  }
  return out;
}

}  // namespace

void read_fp8_rowwise_speedup(Reader& r, const YAML::Node& gpu, HardwareProfile& hw) {
  if (!Reader::has(gpu, "fp8_rowwise_speedup")) return;
  const std::string at = "gpu.fp8_rowwise_speedup";
  const YAML::Node t = r.map(gpu, "fp8_rowwise_speedup", at, false, kExample);
  if (!r.ok()) return;
  Fp8LinearSpeedup s;
  s.m = positive_numbers(r, t, "m", at + ".m", true);
  if (r.ok()) s.k = positive_numbers(r, t, "k", at + ".k", true);
  if (r.ok()) s.n = positive_numbers(r, t, "n", at + ".n", true);
  if (r.ok()) s.speedup = positive_numbers(r, t, "speedup", at + ".speedup", false);
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
