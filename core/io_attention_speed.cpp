// Reads and writes gpu.attention_kernel_speed of hardware profiles (hardware-profiles/README.md).
#include "core/io_attention_speed.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "core/attention_library.h"
#include "core/framework_knobs.h"
#include "core/io_number.h"

namespace meshplan::io_detail {

namespace {

constexpr double kTflops = 1e12;
const char* const kExample = "- {kernel: flash2, head_dim: 128, seq: [2048, 4096], tflops: [155, 173]}";

AttentionKernelSpeed read_entry(Reader& r, const YAML::Node& entry, const std::string& at) {
  AttentionKernelSpeed k;
  k.kernel = r.text(entry, "kernel", at + ".kernel", std::nullopt, "flash2, flash1, triton-ops or cudnn");
  if (r.ok() && !parse_fused_kernel(k.kernel))
    r.fail(at + ".kernel", k.kernel, "unknown attention kernel", "flash2, flash1, triton-ops or cudnn");
  // flash-attn's Triton kernel is costed with flash1's curve (costmodel/attention_speed.h): a curve of
  // its own would be silently unused, and the curve published as "Triton" is OpenAI Triton's kernel.
  if (r.ok() && k.kernel == to_string(FusedAttentionKernel::Triton))
    r.fail(at + ".kernel", k.kernel, "no curve is read for flash-attn's Triton kernel (it takes flash1's)",
           "OpenAI Triton's fused attention (Dao 2023 Fig. 4 'Triton') is triton-ops");
  k.head_dim = r.integer(entry, "head_dim", at + ".head_dim", int64_t{128}, "the benchmark's head dimension");
  if (r.ok() && k.head_dim <= 0) r.fail(at + ".head_dim", std::to_string(k.head_dim), "must be positive", "e.g. 128");
  if (r.ok()) k.seq = ascending_number_list(r, entry, "seq", at + ".seq", kExample, false, "sequence lengths ascending");
  if (r.ok()) k.flops_per_s = positive_number_list(r, entry, "tflops", at + ".tflops", kExample, false);
  if (r.ok() && (k.seq.empty() || k.seq.size() != k.flops_per_s.size()))
    r.fail(at + ".tflops", std::to_string(k.flops_per_s.size()) + " values for " + std::to_string(k.seq.size()) +
                               " sequence lengths",
           "needs one TFLOP/s per sequence length", kExample);
  for (double& v : k.flops_per_s) v *= kTflops;
  k.version = r.text(entry, "version", at + ".version", std::string(), "the library release measured, e.g. 9.17.0");
  if (r.ok() && !k.version.empty() && !valid_library_version(k.version))
    r.fail(at + ".version", k.version, "not a release number", "dot-separated integers, e.g. 9.17.0");
  return k;
}

}  // namespace

void read_attention_speeds(Reader& r, const YAML::Node& gpu, HardwareProfile& hw) {
  if (!Reader::has(gpu, "attention_kernel_speed")) return;
  const YAML::Node list = gpu["attention_kernel_speed"];
  if (!list.IsSequence()) {
    r.fail("gpu.attention_kernel_speed", node_text(list), "must be a list", kExample);
    return;
  }
  for (size_t i = 0; i < list.size() && r.ok(); ++i) {
    const std::string at = "gpu.attention_kernel_speed[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) {
      r.fail(at, node_text(list[i]), "must be a map", kExample);
      return;
    }
    AttentionKernelSpeed k = read_entry(r, list[i], at);
    // Several curves of one kernel at one head dimension are releases of it (core/attention_library.h):
    // each needs its own version.
    for (const AttentionKernelSpeed& o : hw.attention_kernel_speeds)
      if (r.ok() && o.kernel == k.kernel && o.head_dim == k.head_dim &&
          (o.version.empty() || k.version.empty() || compare_library_versions(o.version, k.version) == 0))
        r.fail(at + ".version", k.version.empty() ? "(none)" : k.version,
               "a second " + k.kernel + " curve at head_dim " + std::to_string(k.head_dim) + " needs a version of its own",
               "give each release's curve its version, e.g. version: 9.17.0");
    if (r.ok()) hw.attention_kernel_speeds.push_back(std::move(k));
  }
}

nlohmann::ordered_json attention_speeds_json(const HardwareProfile& hw) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const AttentionKernelSpeed& k : hw.attention_kernel_speeds) {
    nlohmann::ordered_json seq = nlohmann::ordered_json::array(), tflops = nlohmann::ordered_json::array();
    for (double s : k.seq) seq.push_back(scaled_json(s, 1.0));
    for (double f : k.flops_per_s) tflops.push_back(scaled_json(f, kTflops));
    nlohmann::ordered_json e = {{"kernel", k.kernel}, {"head_dim", k.head_dim}, {"seq", seq}, {"tflops", tflops}};
    if (!k.version.empty()) e["version"] = k.version;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace meshplan::io_detail
