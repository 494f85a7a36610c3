// Profile YAML with raw calibration curves, and the calibrate summary table.
#include "cli/calibrate_report.h"

#include <cstdio>
#include <sstream>

#include "cli/report.h"
#include "cli/report_json.h"
#include "core/io.h"

namespace meshplan::cli {

namespace {

ojson link_object(const LinkFit& f) {
  return {{"latency_us", report_number(f.link.latency_s * 1e6)},
          {"bandwidth_gb_per_s", report_number(f.link.bandwidth_bytes_per_s / 1e9)},
          {"rms_relative_error", report_number(f.rms_relative_error)},
          {"samples", f.samples},
          {"bandwidth_resolved", f.bandwidth_resolved}};
}

ojson raw_object(const exec::CalibrationResult& r) {
  ojson gemm = ojson::array();
  for (const auto& g : r.gemm) {
    gemm.push_back({{"m", g.shape.M}, {"n", g.shape.N}, {"k", g.shape.K},
                    {"gflop", report_number(g.shape.flops() / 1e9)}, {"time_s", report_number(g.time_s)},
                    {"gflops_per_s", report_number(g.shape.flops() / g.time_s / 1e9)},
                    {"max_rel_error", report_number(g.max_rel_error)}, {"verified", g.verified}});
  }
  ojson windows = ojson::array();
  for (double w : r.soak.window_s_per_call) windows.push_back(report_number(w));
  const ojson soak = {{"soak_s", report_number(r.soak.soak_s)},
                      {"burst_s_per_call", report_number(r.soak.burst_s_per_call)},
                      {"sustained_s_per_call", report_number(r.soak.sustained_s_per_call)},
                      {"window_s_per_call", windows},
                      {"sustained_clock_fraction", report_number(r.soak.fraction)}};
  ojson coll = ojson::array();
  for (const auto& c : r.collectives) {
    coll.push_back({{"op", to_string(c.op)}, {"ranks", c.ranks}, {"bytes", report_bytes(c.bytes)},
                    {"time_s", report_number(c.time_s)},
                    {"algbw_gb_per_s", report_number(c.algbw_bytes_per_s / 1e9)},
                    {"busbw_gb_per_s", report_number(c.busbw_bytes_per_s / 1e9)}, {"verified", c.verified}});
  }
  ojson per = ojson::object();
  for (const auto& [op, f] : r.per_collective) per[to_string(op)] = link_object(f);
  return {{"schema", "meshplan.calibration/1"},
          {"ranks", r.ranks},
          {"ranks_per_node", r.ranks_per_node},
          {"cpu", r.cpu_name},
          {"gemm", gemm},
          {"soak", soak},
          {"memory", {{"array_bytes", report_bytes(4.0 * r.memory.elements)},
                      {"bytes_per_call", report_bytes(r.memory.bytes_per_call)},
                      {"time_s", report_number(r.memory.time_s)},
                      {"gb_per_s", report_number(r.memory.bytes_per_s / 1e9)},
                      {"verified", r.memory.verified}}},
          {"elementwise", {{"rows", r.elementwise.rows},
                           {"cols", r.elementwise.cols},
                           {"bytes", report_bytes(r.elementwise.bytes)},
                           {"time_s", report_number(r.elementwise.time_s)},
                           {"gb_per_s", report_number(r.elementwise.bytes_per_s / 1e9)},
                           {"verified", r.elementwise.verified}}},
          {"collectives", coll},
          {"fits", {{"link", link_object(r.link)},
                    {"per_collective", per},
                    {"gemm", {{"overhead_us", report_number(r.gemm_fit.overhead_s * 1e6)},
                              {"rate_gflops_per_s", report_number(r.gemm_fit.rate_flops_per_s / 1e9)},
                              {"rms_relative_error", report_number(r.gemm_fit.rms_relative_error)}}}}},
          {"all_verified", r.all_verified}};
}

std::string line(const char* fmt, double a, double b, double c, double d) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c, d);
  return buf;
}

}  // namespace

std::string calibrated_profile_yaml(const HardwareProfile& hw, const exec::CalibrationResult& r) {
  ojson section;
  section["calibration"] = raw_object(r);
  return hardware_to_yaml(hw) + json_text_to_yaml(section.dump());
}

std::string calibration_json(const HardwareProfile& hw, const exec::CalibrationResult& r) {
  ojson j = raw_object(r);
  j["profile"] = ojson::parse(hardware_to_json(hw));
  return j.dump(2) + "\n";
}

std::string calibration_table(const HardwareProfile& hw, const exec::CalibrationResult& r,
                              const std::string& output_path) {
  std::ostringstream out;
  out << "calibrated " << r.ranks << " ranks on " << r.host << " (" << r.cpu_name << "), "
      << r.ranks_per_node << " per node\n\n";
  const bool cuda = r.backend == "cuda";
  out << (cuda ? "GEMM (cuBLASLt, bf16 inputs, fp32 accumulate): peak " : "GEMM (fp32, CPU backend): peak ")
      << format_number(r.peak_flops / 1e9) << " GFLOP/s per rank\n";
  out << "        GFLOP      time (ms)   GFLOP/s   efficiency\n";
  for (size_t i = 0; i < r.gemm_curve.size(); ++i) {
    const auto& p = r.gemm_curve[i];
    out << line("  %11.4g  %13.4f  %8.2f  %11.3f\n", p.flops / 1e9, p.flops / (p.efficiency * r.peak_flops) * 1e3,
                p.efficiency * r.peak_flops / 1e9, p.efficiency);
  }
  if (r.soak.soak_s > 0.0)
    out << "sustained clock: " << (cuda ? "the fastest bf16 GEMM" : "the largest GEMM") << " run back to back for "
        << format_number(r.soak.soak_s) << " s on every rank: " << format_number(r.soak.burst_s_per_call * 1e3)
        << " ms per call burst, "
        << format_number(r.soak.sustained_s_per_call * 1e3) << " ms settled -> sustained_clock_fraction "
        << format_number(r.soak.fraction) << "\n";
  else
    out << "sustained clock: not measured (--soak-s 0): sustained_clock_fraction 1, so the curve above is taken as "
           "the rate a training step holds\n";
  if (cuda) {
    out << "\nHBM bandwidth (device copy kernel, read + write, " << (r.memory.verified ? "verified" : "NOT verified")
        << "): " << format_number(r.memory.bytes_per_s / 1e9) << " GB/s per GPU\n";
    out << "element-wise kernels: not probed on CUDA; hbm_efficiency " << format_number(hw.hbm_efficiency)
        << " means the profile's HBM bandwidth is the copy kernel's achieved rate\n\n";
  } else {
    out << "\nmemory bandwidth (axpy, all ranks streaming): " << format_number(r.memory.bytes_per_s / 1e9)
        << " GB/s per rank\n";
    out << "element-wise kernels (RMSNorm, SwiGLU, rotary; fwd+bwd): " << format_number(r.elementwise.bytes_per_s / 1e9)
        << " GB/s -> hbm_efficiency " << format_number(hw.hbm_efficiency) << "\n\n";
  }
  out << "collectives (nccl-tests algbw/busbw):\n  op               ranks        bytes   time (us)  algbw GB/s  busbw GB/s  ok\n";
  for (const auto& c : r.collectives) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "  %-16s %5d %12.0f %11.2f %11.3f %11.3f  %s\n", to_string(c.op), c.ranks,
                  c.bytes, c.time_s * 1e6, c.algbw_bytes_per_s / 1e9, c.busbw_bytes_per_s / 1e9,
                  c.verified ? "yes" : "NO");
    out << buf;
  }
  out << "\nalpha-beta fit (all collectives): latency " << format_number(r.link.link.latency_s * 1e6)
      << " us, bandwidth " << format_number(r.link.link.bandwidth_bytes_per_s / 1e9) << " GB/s, rms error "
      << format_number(r.link.rms_relative_error * 100) << " %\n";
  if (!r.link.bandwidth_resolved)
    out << "  the collectives' time did not grow with message size, so no bandwidth was measured: the profile "
           "holds the largest the format accepts; sweep larger messages (drop --quick, raise --max-bytes)\n";
  for (const auto& [op, f] : r.per_collective) {
    out << "  " << to_string(op) << ": latency " << format_number(f.link.latency_s * 1e6) << " us, bandwidth "
        << format_number(f.link.bandwidth_bytes_per_s / 1e9) << " GB/s, rms error "
        << format_number(f.rms_relative_error * 100) << " %\n";
  }
  out << "\nevery result verified: " << (r.all_verified ? "yes" : "NO") << "\n";
  if (!output_path.empty()) out << "profile written to " << output_path << " (name " << hw.name << ")\n";
  return out.str();
}

}  // namespace meshplan::cli
