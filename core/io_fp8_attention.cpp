// Reads and writes gpu.fp8_attention_speedup of hardware profiles (hardware-profiles/README.md).
#include "core/io_fp8_attention.h"

#include <yaml-cpp/yaml.h>

#include "core/attention_library.h"
#include "core/io_number.h"

namespace meshplan::io_detail {

namespace {

const char* const kExample =
    "- {dtype: mxfp8, head_dim: 128, window: 0, seq: [2048, 4096], forward: [1.3, 1.4], backward: [1.1, 1.2]}";

void check_lengths(Reader& r, const std::vector<double>& values, size_t n, const std::string& at) {
  if (r.ok() && values.size() != n)
    r.fail(at, std::to_string(values.size()) + " values for " + std::to_string(n) + " sequence lengths",
           "needs one ratio per sequence length", kExample);
}

Fp8AttentionSpeedup read_entry(Reader& r, const YAML::Node& entry, const std::string& at) {
  Fp8AttentionSpeedup k;
  k.dtype = r.text(entry, "dtype", at + ".dtype", std::nullopt, "fp8 or mxfp8");
  if (r.ok() && k.dtype != "fp8" && k.dtype != "mxfp8")
    r.fail(at + ".dtype", k.dtype, "unknown FP8 attention format",
           "fp8 (per-tensor scaled: delayed, current) or mxfp8");
  k.head_dim = r.integer(entry, "head_dim", at + ".head_dim", int64_t{128}, "the benchmark's head dimension");
  if (r.ok() && k.head_dim <= 0) r.fail(at + ".head_dim", std::to_string(k.head_dim), "must be positive", "e.g. 128");
  k.window = r.integer(entry, "window", at + ".window", int64_t{0}, "sliding window in tokens, 0 = full causal");
  if (r.ok() && k.window < 0) r.fail(at + ".window", std::to_string(k.window), "must not be negative", "e.g. 128");
  if (r.ok()) k.seq = ascending_number_list(r, entry, "seq", at + ".seq", kExample, true, "sequence lengths ascending");
  if (r.ok()) k.forward = positive_number_list(r, entry, "forward", at + ".forward", kExample, true);
  check_lengths(r, k.forward, k.seq.size(), at + ".forward");
  if (r.ok()) k.backward = positive_number_list(r, entry, "backward", at + ".backward", kExample, true);
  check_lengths(r, k.backward, k.seq.size(), at + ".backward");
  k.version = r.text(entry, "version", at + ".version", std::string(), "the library release measured, e.g. 9.22.0");
  if (r.ok() && !k.version.empty() && !valid_library_version(k.version))
    r.fail(at + ".version", k.version, "not a release number", "dot-separated integers, e.g. 9.22.0");
  return k;
}

}  // namespace

void read_fp8_attention_speedups(Reader& r, const YAML::Node& gpu, HardwareProfile& hw) {
  if (!Reader::has(gpu, "fp8_attention_speedup")) return;
  const YAML::Node list = gpu["fp8_attention_speedup"];
  if (!list.IsSequence()) {
    r.fail("gpu.fp8_attention_speedup", node_text(list), "must be a list", kExample);
    return;
  }
  for (size_t i = 0; i < list.size() && r.ok(); ++i) {
    const std::string at = "gpu.fp8_attention_speedup[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) {
      r.fail(at, node_text(list[i]), "must be a map", kExample);
      return;
    }
    Fp8AttentionSpeedup k = read_entry(r, list[i], at);
    // One measurement per shape: a second would leave which one applies unstated.
    for (const Fp8AttentionSpeedup& o : hw.fp8_attention_speedups)
      if (r.ok() && o.dtype == k.dtype && o.head_dim == k.head_dim && o.window == k.window)
        r.fail(at, k.dtype + " head_dim " + std::to_string(k.head_dim) + " window " + std::to_string(k.window),
               "a second entry for the same shape", "keep one measurement per dtype, head_dim and window");
    if (r.ok()) hw.fp8_attention_speedups.push_back(std::move(k));
  }
}

nlohmann::ordered_json fp8_attention_speedups_json(const HardwareProfile& hw) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Fp8AttentionSpeedup& k : hw.fp8_attention_speedups) {
    nlohmann::ordered_json seq = nlohmann::ordered_json::array(), fwd = nlohmann::ordered_json::array(),
                           bwd = nlohmann::ordered_json::array();
    for (double s : k.seq) seq.push_back(scaled_json(s, 1.0));
    for (double f : k.forward) fwd.push_back(scaled_json(f, 1.0));
    for (double b : k.backward) bwd.push_back(scaled_json(b, 1.0));
    nlohmann::ordered_json e = {{"dtype", k.dtype}, {"head_dim", k.head_dim}, {"window", k.window},
                                {"seq", seq}, {"forward", fwd}, {"backward", bwd}};
    if (!k.version.empty()) e["version"] = k.version;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace meshplan::io_detail
