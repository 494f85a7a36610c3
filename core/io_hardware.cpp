// Hardware profiles: YAML (hardware-profiles/README.md schema, GB = 1e9) <-> HardwareProfile in SI units.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "core/io.h"
#include "core/limits.h"
#include "core/io_detail.h"
#include "core/io_attention_speed.h"
#include "core/io_fp8_attention.h"
#include "core/io_fp8_speedup.h"
#include "core/io_hardware_base.h"
#include "core/io_number.h"

namespace meshplan {

using io_detail::Reader;
using io_detail::scaled_json;
namespace fs = std::filesystem;

namespace {

constexpr double kGBs = 1e9;     // GB and GB/s
constexpr double kUs = 1e-6;     // microseconds
constexpr double kTflops = 1e12;
constexpr double kGflop = 1e9;

void read_gpu(Reader& r, const YAML::Node& root, HardwareProfile& hw) {
  const YAML::Node gpu = r.map(root, "gpu", "gpu", false, "see hardware-profiles/README.md");
  hw.gpu = r.text(gpu, "name", "gpu.name", std::string(), "marketing name");
  hw.memory_bytes = kGBs * r.number(gpu, "memory_gb", "gpu.memory_gb", std::nullopt, "HBM capacity in GB, e.g. 80");
  hw.reserved_memory_bytes = kGBs * r.number(gpu, "reserved_memory_gb", "gpu.reserved_memory_gb", 0.0,
                                             "CUDA context + fragmentation in GB");
  hw.other_memory_bytes = kGBs * r.number(gpu, "other_memory_gb", "gpu.other_memory_gb", 0.0,
                                          "workspace + communication buffers in GB");
  hw.hbm_bytes_per_s = kGBs * r.number(gpu, "hbm_bandwidth_gb_per_s", "gpu.hbm_bandwidth_gb_per_s",
                                       std::nullopt, "e.g. 2039 for A100 80GB");
  hw.hbm_efficiency = r.number(gpu, "hbm_efficiency", "gpu.hbm_efficiency", 0.8, "fraction in (0, 1]");
  const YAML::Node peak = r.map(gpu, "peak_tflops", "gpu.peak_tflops", false, "e.g. {bf16: 312}");
  for (const auto& kv : peak) {
    const std::string dtype = kv.first.Scalar();
    hw.peak_flops[dtype] = kTflops * r.number(peak, dtype, "gpu.peak_tflops." + dtype, std::nullopt,
                                              "dense TFLOP/s from the datasheet");
  }
  // A const Node's operator[] on a missing key yields an invalid node that throws on use: look first.
  const bool has_curve = Reader::has(gpu, "gemm_efficiency");
  if (r.ok() && !has_curve)
    r.fail("gpu.gemm_efficiency", "", "missing required key", "- {gflop: 1, efficiency: 0.45}");
  const YAML::Node curve = has_curve ? gpu["gemm_efficiency"] : YAML::Node(YAML::NodeType::Sequence);
  if (r.ok() && !curve.IsSequence())
    r.fail("gpu.gemm_efficiency", io_detail::node_text(curve), "must be a list",
           "- {gflop: 1, efficiency: 0.45}");
  if (r.ok() && curve.IsSequence()) {
    for (size_t i = 0; i < curve.size(); ++i) {
      const std::string at = "gpu.gemm_efficiency[" + std::to_string(i) + "]";
      if (!curve[i].IsMap()) {
        r.fail(at, io_detail::node_text(curve[i]), "must be {gflop: ..., efficiency: ...}", "");
        break;
      }
      EfficiencyPoint p;
      p.flops = kGflop * r.number(curve[i], "gflop", at + ".gflop", std::nullopt, "GFLOP of one GEMM call");
      p.efficiency = r.number(curve[i], "efficiency", at + ".efficiency", std::nullopt, "achieved/peak");
      if (r.ok() && !(p.flops > 0.0))
        r.fail(at + ".gflop", io_detail::scaled_text(p.flops, kGflop), "must be positive", "GFLOP of one GEMM call");
      if (r.ok() && !(p.efficiency > 0.0 && p.efficiency <= 1.0))
        r.fail(at + ".efficiency", io_detail::scaled_text(p.efficiency, 1.0), "must be in (0, 1]",
               "achieved/peak for a GEMM of that size, e.g. 0.8");
      hw.gemm_efficiency.push_back(p);
    }
  }
  hw.sustained_clock_fraction = r.number(gpu, "sustained_clock_fraction", "gpu.sustained_clock_fraction", 1.0,
                                        "sustained / burst tensor throughput at the power limit, e.g. 0.888");
  hw.compute_capability = r.number(gpu, "compute_capability", "gpu.compute_capability", 0.0,
                                   "CUDA compute capability, e.g. 9.0 (H100) or 10.0 (B200)");
  hw.fp8_gemm_relative_efficiency =
      r.number(gpu, "fp8_gemm_relative_efficiency", "gpu.fp8_gemm_relative_efficiency", 1.0,
               "(FP8 GEMM TFLOP/s / FP8 peak) / (BF16 GEMM TFLOP/s / BF16 peak), e.g. 0.833 for H100 SXM");
  // torch._grouped_mm's measured rate (costmodel/README.md "Grouped GEMMs of torch"), optional.
  if (Reader::has(gpu, "torch_grouped_mm")) {
    const YAML::Node g = r.map(gpu, "torch_grouped_mm", "gpu.torch_grouped_mm", false,
                               "{relative_efficiency: 0.446, mxfp8_speedup: 1.547}");
    hw.torch_grouped_mm_relative_efficiency =
        r.number(g, "relative_efficiency", "gpu.torch_grouped_mm.relative_efficiency", std::nullopt,
                 "bf16 grouped GEMM rate / the dense curve's at that GEMM size, e.g. 0.446");
    hw.torch_grouped_mm_mxfp8_speedup = r.number(g, "mxfp8_speedup", "gpu.torch_grouped_mm.mxfp8_speedup", 0.0,
                                                 "MXFP8 grouped GEMM speedup over bf16, e.g. 1.547");
    if (r.ok() && !(hw.torch_grouped_mm_relative_efficiency > 0.0))
      r.fail("gpu.torch_grouped_mm.relative_efficiency", io_detail::scaled_text(hw.torch_grouped_mm_relative_efficiency, 1.0),
             "must be positive", "bf16 grouped GEMM rate / the dense curve's at that GEMM size, e.g. 0.446");
    if (r.ok() && Reader::has(g, "mxfp8_speedup") && !(hw.torch_grouped_mm_mxfp8_speedup > 0.0))
      r.fail("gpu.torch_grouped_mm.mxfp8_speedup", io_detail::scaled_text(hw.torch_grouped_mm_mxfp8_speedup, 1.0),
             "must be positive", "MXFP8 grouped GEMM speedup over bf16, e.g. 1.547");
  }
  // Attention kernel efficiencies: {forward, backward} fractions of the dense peak, each optional.
  auto read_attention = [&](const char* key, double& fwd, double& bwd) {
    if (!Reader::has(gpu, key)) return;
    const std::string at = std::string("gpu.") + key;
    const YAML::Node fa = r.map(gpu, key, at, false, "{forward: 0.35, backward: 0.35}");
    fwd = r.number(fa, "forward", at + ".forward", std::nullopt, "fraction of peak");
    bwd = r.number(fa, "backward", at + ".backward", std::nullopt, "fraction of peak");
    for (double v : {fwd, bwd})
      if (r.ok() && !(v > 0.0 && v <= 1.0))
        r.fail(at, io_detail::scaled_text(v, 1.0), "must be in (0, 1]", "fraction of the dense peak, e.g. 0.35");
  };
  read_attention("fused_attention_efficiency", hw.fused_attention_forward_efficiency,
                 hw.fused_attention_backward_efficiency);
  read_attention("cudnn_attention_efficiency", hw.cudnn_attention_forward_efficiency,
                 hw.cudnn_attention_backward_efficiency);
  io_detail::read_attention_speeds(r, gpu, hw);
  io_detail::read_fp8_rowwise_speedup(r, gpu, hw);
  io_detail::read_fp8_attention_speedups(r, gpu, hw);
  std::stable_sort(hw.gemm_efficiency.begin(), hw.gemm_efficiency.end(),
                   [](const EfficiencyPoint& a, const EfficiencyPoint& b) { return a.flops < b.flops; });
}

LinkSpec read_link(Reader& r, const YAML::Node& parent, const std::string& key, const std::string& path) {
  const YAML::Node n = r.map(parent, key, path, false, "{bandwidth_gb_per_s: ..., latency_us: ...}");
  LinkSpec l;
  l.bandwidth_bytes_per_s = kGBs * r.number(n, "bandwidth_gb_per_s", path + ".bandwidth_gb_per_s",
                                            std::nullopt, "per GPU, one direction, GB/s");
  l.latency_s = kUs * r.number(n, "latency_us", path + ".latency_us", std::nullopt,
                               "per-message latency in microseconds");
  l.efficiency = r.number(n, "efficiency", path + ".efficiency", 1.0, "achievable fraction in (0, 1]");
  if (r.ok() && !(l.efficiency > 0.0 && l.efficiency <= 1.0))
    r.fail(path + ".efficiency", io_detail::scaled_text(l.efficiency, 1.0), "must be in (0, 1]",
           "NCCL bus bandwidth / link bandwidth, e.g. 0.8");
  if (r.ok() && l.latency_s < 0.0)
    r.fail(path + ".latency_us", io_detail::scaled_text(l.latency_s, kUs), "must not be negative", "e.g. 5");
  return l;
}

// node.host_link: GPU <-> host memory, one direction, per GPU; no latency term (bulk copies).
LinkSpec read_host_link(Reader& r, const YAML::Node& node) {
  const YAML::Node n = r.map(node, "host_link", "node.host_link", false, "{bandwidth_gb_per_s: 63, efficiency: 0.87}");
  LinkSpec l;
  l.bandwidth_bytes_per_s = kGBs * r.number(n, "bandwidth_gb_per_s", "node.host_link.bandwidth_gb_per_s",
                                            std::nullopt, "per GPU, one direction, GB/s, e.g. 63 for PCIe 5 x16");
  l.efficiency = r.number(n, "efficiency", "node.host_link.efficiency", 1.0, "achievable fraction in (0, 1]");
  return l;
}

void read_node_network(Reader& r, const YAML::Node& root, HardwareProfile& hw) {
  const YAML::Node node = r.map(root, "node", "node", false, "{gpus_per_node: 8, intra_node: {...}}");
  const int64_t per_node = r.integer(node, "gpus_per_node", "node.gpus_per_node", std::nullopt, "e.g. 8");
  if (r.ok() && (per_node < 1 || per_node > limits::kMaxGpusPerNode))
    r.fail("node.gpus_per_node", std::to_string(per_node),
           "must be in " + limits::range_text(int64_t{1}, limits::kMaxGpusPerNode), "e.g. 8");
  hw.gpus_per_node = static_cast<int>(std::clamp<int64_t>(per_node, 0, limits::kMaxGpusPerNode));
  // GPUs joined by NVLink/NVSwitch, when it spans several nodes (GB200 NVL72: 18 trays of 4 = 72).
  const int64_t domain = r.integer(node, "nvlink_domain_gpus", "node.nvlink_domain_gpus", int64_t{0},
                                   "GPUs in one NVLink domain, e.g. 72 for GB200 NVL72");
  if (r.ok() && domain != 0 &&
      (domain < per_node || domain > limits::kMaxGpusPerNode || domain % per_node != 0))
    r.fail("node.nvlink_domain_gpus", std::to_string(domain),
           "must be a multiple of gpus_per_node=" + std::to_string(per_node) + " in " +
               limits::range_text(per_node, limits::kMaxGpusPerNode),
           "e.g. 72 for GB200 NVL72 (18 trays of 4 GPUs); omit it when NVLink ends at the node");
  hw.nvlink_domain_gpus = static_cast<int>(std::clamp<int64_t>(domain, 0, limits::kMaxGpusPerNode));
  hw.intra_node = read_link(r, node, "intra_node", "node.intra_node");
  if (Reader::has(node, "host_link")) hw.host_link = read_host_link(r, node);
  const YAML::Node net = r.map(root, "network", "network", false, "{inter_node: {...}}");
  hw.inter_node = read_link(r, net, "inter_node", "network.inter_node");
  const YAML::Node cost = r.map(root, "cost", "cost", true, "{dollars_per_gpu_hour: 2.0}");
  hw.dollars_per_gpu_hour = r.number(cost, "dollars_per_gpu_hour", "cost.dollars_per_gpu_hour", 0.0,
                                     "rental price per GPU-hour");
}

// Range checks in the file's own units (core/limits.h, DESIGN.md "Accepted ranges"); validate_hardware
// repeats the sign checks in SI units for profiles built in code.
void check_in(Reader& r, const std::string& field, double v, double scale, double lo, double hi,
              const std::string& hint) {
  const double x = v / scale;
  if (r.ok() && !(x >= lo && x <= hi))
    r.fail(field, io_detail::scaled_text(v, scale), "must be in " + limits::range_text(lo, hi), hint);
}

void check_fraction(Reader& r, const std::string& field, double v, const std::string& hint) {
  check_in(r, field, v, 1.0, limits::kMinEfficiency, 1.0, hint);
}

void check_values(Reader& r, const HardwareProfile& hw) {
  using namespace limits;
  check_in(r, "gpu.memory_gb", hw.memory_bytes, kGBs, kMinMemoryGb, kMaxMemoryGb, "HBM capacity in GB, e.g. 80");
  check_in(r, "gpu.hbm_bandwidth_gb_per_s", hw.hbm_bytes_per_s, kGBs, kMinHbmGbPerS, kMaxHbmGbPerS,
           "e.g. 2039 for A100 80GB");
  for (const auto& [dtype, v] : hw.peak_flops)
    check_in(r, "gpu.peak_tflops." + dtype, v, kTflops, kMinPeakTflops, kMaxPeakTflops,
             "dense TFLOP/s from the datasheet");
  for (size_t i = 0; i < hw.gemm_efficiency.size(); ++i)
    check_in(r, "gpu.gemm_efficiency[" + std::to_string(i) + "].gflop", hw.gemm_efficiency[i].flops, kGflop,
             kMinGemmGflop, kMaxGemmGflop, "GFLOP of one GEMM call");
  for (size_t i = 0; i < hw.gemm_efficiency.size(); ++i)
    check_fraction(r, "gpu.gemm_efficiency[" + std::to_string(i) + "].efficiency", hw.gemm_efficiency[i].efficiency,
                   "achieved/peak for a GEMM of that size");
  check_in(r, "node.gpus_per_node", hw.gpus_per_node, 1.0, 1, static_cast<double>(kMaxGpusPerNode), "e.g. 8");
  if (hw.host_link.bandwidth_bytes_per_s != 0.0) {  // listed: 0 means absent
    check_in(r, "node.host_link.bandwidth_gb_per_s", hw.host_link.bandwidth_bytes_per_s, kGBs, kMinLinkGbPerS,
             kMaxLinkGbPerS, "per-GPU bandwidth to host memory, one direction, GB/s");
    check_fraction(r, "node.host_link.efficiency", hw.host_link.efficiency, "measured copy rate / link bandwidth");
  }
  for (const auto& [path, link] : {std::pair<const char*, const LinkSpec*>{"node.intra_node", &hw.intra_node},
                                   {"network.inter_node", &hw.inter_node}}) {
    check_in(r, std::string(path) + ".bandwidth_gb_per_s", link->bandwidth_bytes_per_s, kGBs, kMinLinkGbPerS,
             kMaxLinkGbPerS, "per-GPU bandwidth, one direction, GB/s");
    check_in(r, std::string(path) + ".latency_us", link->latency_s, kUs, 0, kMaxLatencyUs, "e.g. 5");
    check_fraction(r, std::string(path) + ".efficiency", link->efficiency, "NCCL bus bandwidth / link bandwidth");
  }
  check_in(r, "cost.dollars_per_gpu_hour", hw.dollars_per_gpu_hour, 1.0, 0, kMaxDollarsPerGpuHour,
           "rental price per GPU-hour, 0 = unknown");
}

void check_fractions(Reader& r, const HardwareProfile& hw) {
  check_values(r, hw);
  check_fraction(r, "gpu.hbm_efficiency", hw.hbm_efficiency, "achievable fraction of HBM bandwidth, e.g. 0.8");
  check_fraction(r, "gpu.sustained_clock_fraction", hw.sustained_clock_fraction,
                 "sustained / burst tensor throughput at the power limit, e.g. 0.888 for H100 at 700 W");
  check_in(r, "gpu.compute_capability", hw.compute_capability, 1.0, 0.0, limits::kMaxComputeCapability,
           "CUDA compute capability, e.g. 9.0 (H100) or 10.0 (B200); 0 = not given");
  check_in(r, "gpu.fp8_gemm_relative_efficiency", hw.fp8_gemm_relative_efficiency, 1.0, limits::kMinFp8RelativeEfficiency,
           limits::kMaxFp8RelativeEfficiency,
           "(FP8 GEMM TFLOP/s / FP8 peak) / (BF16 GEMM TFLOP/s / BF16 peak), e.g. 0.833 for H100 SXM");
  check_in(r, "gpu.torch_grouped_mm.relative_efficiency", hw.torch_grouped_mm_relative_efficiency, 1.0, 0.0,
           limits::kMaxGroupedMmRelativeEfficiency, "bf16 grouped GEMM rate / the dense curve's, e.g. 0.446; 0 = not measured");
  check_in(r, "gpu.torch_grouped_mm.mxfp8_speedup", hw.torch_grouped_mm_mxfp8_speedup, 1.0, 0.0,
           limits::kMaxGroupedMmMxfp8Speedup, "MXFP8 grouped GEMM speedup over bf16, e.g. 1.547; 0 = not measured");
  check_in(r, "gpu.reserved_memory_gb", hw.reserved_memory_bytes, kGBs, 0, hw.memory_bytes / kGBs,
           "CUDA context + fragmentation, a few GB");
  check_in(r, "gpu.other_memory_gb", hw.other_memory_bytes, kGBs, 0, hw.memory_bytes / kGBs,
           "workspace + communication buffers, a few GB");
}

}  // namespace

static Result<HardwareProfile> parse_hardware_root(const YAML::Node& root, const std::string& file) {
  if (!root.IsMap())
    return make_error(file, "", io_detail::node_text(root), "a hardware profile must be a mapping",
                      "see hardware-profiles/README.md");
  Reader r(file);
  HardwareProfile hw;
  hw.file = file;
  hw.name = r.text(root, "name", "name", io_detail::file_stem(file), "profile name");
  hw.source = r.text(root, "source", "source", std::string(), "datasheet citations");
  const YAML::Node prov = r.map(root, "provenance", "provenance", true, "{kind: datasheet, date: ...}");
  hw.provenance.kind = r.text(prov, "kind", "provenance.kind", std::string("datasheet"), "datasheet or calibrated");
  hw.provenance.date = r.text(prov, "date", "provenance.date", std::string(), "ISO date");
  hw.provenance.host = r.text(prov, "host", "provenance.host", std::string(), "hostname");
  hw.provenance.tool_version = r.text(prov, "tool_version", "provenance.tool_version", std::string(), "");
  read_gpu(r, root, hw);
  read_node_network(r, root, hw);
  check_fractions(r, hw);
  if (r.error) return *r.error;
  ErrorList errors = validate_hardware(hw);
  if (!errors.empty()) return errors.front();
  return hw;
}

static Result<HardwareProfile> parse_hardware_unguarded(const std::string& text, const std::string& file) {
  auto doc = io_detail::parse_yaml(text, file);
  if (!doc) return doc.error();
  // A profile's text alone (a plan file's copy, calibrate's output) carries every value: a base is looked up
  // only where there is a file and a profiles directory to look in (load_hardware).
  if (Reader::has(doc.value(), "base"))
    return make_error(file, "base", io_detail::node_text(doc.value()["base"]),
                      "is resolved only when a profile file is loaded (--hardware NAME or PATH)",
                      "write the base's keys out, or load the file with --hardware");
  return parse_hardware_root(doc.value(), file);
}

Result<HardwareProfile> parse_hardware(const std::string& text, const std::string& file) {
  return io_detail::guarded<HardwareProfile>(file, [&] { return parse_hardware_unguarded(text, file); });
}

std::vector<std::string> list_profiles(const std::string& profiles_dir) {
  std::vector<std::string> stems;
  for (const std::string& f : list_yaml_files(profiles_dir)) stems.push_back(fs::path(f).stem().string());
  return stems;
}

Result<HardwareProfile> load_hardware(const std::string& name_or_path, const std::string& profiles_dir) {
  std::error_code ec;
  std::string path = name_or_path;
  if (!fs::is_regular_file(path, ec) && !io_detail::names_a_profile_path(name_or_path)) {
    path = (fs::path(profiles_dir) / (name_or_path + ".yaml")).string();
    if (!fs::is_regular_file(path, ec)) {
      std::string names;
      for (const auto& s : list_profiles(profiles_dir)) names += (names.empty() ? "" : ", ") + s;
      return make_error("command line", "--hardware", name_or_path,
                        "unknown hardware profile (not a file, not in " + profiles_dir + ")",
                        "available: " + (names.empty() ? std::string("none") : names) +
                            "; or pass a path to a profile YAML");
    }
  }
  auto text = read_text_file(path);
  if (!text) return text.error();
  return io_detail::guarded<HardwareProfile>(path, [&]() -> Result<HardwareProfile> {
    auto root = io_detail::resolve_hardware_base(text.value(), path, profiles_dir);
    if (!root) return root.error();
    return parse_hardware_root(root.value(), path);
  });
}

namespace {

nlohmann::ordered_json link_json(const LinkSpec& l) {
  return {{"bandwidth_gb_per_s", scaled_json(l.bandwidth_bytes_per_s, kGBs)},
          {"latency_us", scaled_json(l.latency_s, kUs)},
          {"efficiency", scaled_json(l.efficiency, 1.0)}};
}

nlohmann::ordered_json hardware_object(const HardwareProfile& hw) {
  nlohmann::ordered_json j;
  j["name"] = hw.name;
  j["source"] = hw.source;
  nlohmann::ordered_json prov = {{"kind", hw.provenance.kind}, {"date", hw.provenance.date}};
  if (!hw.provenance.host.empty()) prov["host"] = hw.provenance.host;
  if (!hw.provenance.tool_version.empty()) prov["tool_version"] = hw.provenance.tool_version;
  j["provenance"] = prov;
  nlohmann::ordered_json gpu;
  gpu["name"] = hw.gpu;
  gpu["memory_gb"] = scaled_json(hw.memory_bytes, kGBs);
  gpu["reserved_memory_gb"] = scaled_json(hw.reserved_memory_bytes, kGBs);
  gpu["other_memory_gb"] = scaled_json(hw.other_memory_bytes, kGBs);
  gpu["hbm_bandwidth_gb_per_s"] = scaled_json(hw.hbm_bytes_per_s, kGBs);
  gpu["hbm_efficiency"] = scaled_json(hw.hbm_efficiency, 1.0);
  nlohmann::ordered_json peak = nlohmann::ordered_json::object();
  for (const auto& [dtype, flops] : hw.peak_flops) peak[dtype] = scaled_json(flops, kTflops);
  gpu["peak_tflops"] = peak;
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (const auto& p : hw.gemm_efficiency)
    curve.push_back({{"gflop", scaled_json(p.flops, kGflop)}, {"efficiency", scaled_json(p.efficiency, 1.0)}});
  gpu["gemm_efficiency"] = curve;
  if (hw.sustained_clock_fraction != 1.0)
    gpu["sustained_clock_fraction"] = scaled_json(hw.sustained_clock_fraction, 1.0);
  if (hw.compute_capability > 0.0) gpu["compute_capability"] = scaled_json(hw.compute_capability, 1.0);
  if (hw.fp8_gemm_relative_efficiency != 1.0)
    gpu["fp8_gemm_relative_efficiency"] = scaled_json(hw.fp8_gemm_relative_efficiency, 1.0);
  if (hw.torch_grouped_mm_relative_efficiency > 0.0) {
    nlohmann::ordered_json g = {{"relative_efficiency", scaled_json(hw.torch_grouped_mm_relative_efficiency, 1.0)}};
    if (hw.torch_grouped_mm_mxfp8_speedup > 0.0) g["mxfp8_speedup"] = scaled_json(hw.torch_grouped_mm_mxfp8_speedup, 1.0);
    gpu["torch_grouped_mm"] = g;
  }
  if (hw.fused_attention_forward_efficiency > 0.0)
    gpu["fused_attention_efficiency"] = {{"forward", scaled_json(hw.fused_attention_forward_efficiency, 1.0)},
                                         {"backward", scaled_json(hw.fused_attention_backward_efficiency, 1.0)}};
  if (hw.cudnn_attention_forward_efficiency > 0.0)
    gpu["cudnn_attention_efficiency"] = {{"forward", scaled_json(hw.cudnn_attention_forward_efficiency, 1.0)},
                                         {"backward", scaled_json(hw.cudnn_attention_backward_efficiency, 1.0)}};
  if (!hw.attention_kernel_speeds.empty()) gpu["attention_kernel_speed"] = io_detail::attention_speeds_json(hw);
  if (!hw.fp8_rowwise_speedup.empty()) gpu["fp8_rowwise_speedup"] = io_detail::fp8_rowwise_speedup_json(hw);
  if (!hw.fp8_attention_speedups.empty())
    gpu["fp8_attention_speedup"] = io_detail::fp8_attention_speedups_json(hw);
  j["gpu"] = gpu;
  j["node"] = {{"gpus_per_node", hw.gpus_per_node}};
  if (hw.nvlink_domain_gpus > 0) j["node"]["nvlink_domain_gpus"] = hw.nvlink_domain_gpus;
  j["node"]["intra_node"] = link_json(hw.intra_node);
  if (hw.host_link.bandwidth_bytes_per_s > 0.0)
    j["node"]["host_link"] = {{"bandwidth_gb_per_s", scaled_json(hw.host_link.bandwidth_bytes_per_s, kGBs)},
                              {"efficiency", scaled_json(hw.host_link.efficiency, 1.0)}};
  j["network"] = {{"inter_node", link_json(hw.inter_node)}};
  j["cost"] = {{"dollars_per_gpu_hour", scaled_json(hw.dollars_per_gpu_hour, 1.0)}};
  return j;
}

}  // namespace

std::string hardware_to_json(const HardwareProfile& hw) { return format_json(hardware_object(hw).dump()); }

std::string hardware_to_yaml(const HardwareProfile& hw) {
  return json_to_yaml(hardware_object(hw).dump());
}

}  // namespace meshplan
