// Tests of derived hardware profiles (`base:`): the overlay rules, the lookup, the errors, and the shipped
// derived profiles against their bases.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io.h"
#include "core/io_hardware_files.h"

using namespace meshplan;
namespace fs = std::filesystem;

static const std::string kProfiles = std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles";

namespace {

// A fixed base (the shipped profiles get tuned; the overlay tests must not depend on their numbers).
const char* const kBase =
    "name: test-base\n"
    "source: the base's datasheet\n"
    "provenance: {kind: calibrated, date: \"2021-06-01\", host: base-host}\n"
    "gpu:\n"
    "  name: A100\n"
    "  memory_gb: 80\n"
    "  hbm_bandwidth_gb_per_s: 2039\n"
    "  peak_tflops: {bf16: 312, fp16: 312}\n"
    "  gemm_efficiency:\n"
    "    - {gflop: 1, efficiency: 0.45}\n"
    "    - {gflop: 100, efficiency: 0.80}\n"
    "node:\n"
    "  gpus_per_node: 8\n"
    "  intra_node: {bandwidth_gb_per_s: 300, latency_us: 5, efficiency: 0.8}\n"
    "network:\n"
    "  inter_node: {bandwidth_gb_per_s: 25, latency_us: 10, efficiency: 0.8}\n"
    "cost: {dollars_per_gpu_hour: 2.0}\n";

// A fresh directory under the system's temporary one, removed with the object.
struct Scratch {
  fs::path dir;
  Scratch() {
    dir = fs::temp_directory_path() / ("meshplan-hwbase-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

HardwareProfile load_ok(const std::string& path, const std::string& profiles_dir) {
  auto hw = load_hardware(path, profiles_dir);
  INFO(path << ": " << (hw ? "" : hw.error().one_line()));
  REQUIRE(hw.ok());
  return hw.value();
}

}  // namespace

TEST_CASE("derived profile: its own keys override and the rest is the base's") {
  Scratch s;
  s.write("test-base.yaml", kBase);
  const std::string derived = s.write("slow-net.yaml",
                                      "name: slow-net\n"
                                      "source: the base with a slower network\n"
                                      "provenance: {kind: datasheet, date: \"2024-01-01\"}\n"
                                      "base: test-base\n"
                                      "gpu:\n"
                                      "  peak_tflops: {bf16: 300}\n"
                                      "  gemm_efficiency:\n"
                                      "    - {gflop: 10, efficiency: 0.5}\n"
                                      "network:\n"
                                      "  inter_node: {bandwidth_gb_per_s: 6.25}\n");
  const HardwareProfile base = load_ok(s.dir / "test-base.yaml", kProfiles);
  const HardwareProfile hw = load_ok(derived, kProfiles);
  // Mappings merge key by key: inter_node keeps the base's latency and efficiency.
  CHECK(hw.inter_node.bandwidth_bytes_per_s == 6.25e9);
  CHECK(hw.inter_node.latency_s == base.inter_node.latency_s);
  CHECK(hw.inter_node.efficiency == base.inter_node.efficiency);
  // ... peak_tflops too: bf16 replaced, fp16 inherited.
  CHECK(hw.peak_flops.at("bf16") == 300e12);
  CHECK(hw.peak_flops.at("fp16") == 312e12);
  // A list replaces the base's whole.
  REQUIRE(hw.gemm_efficiency.size() == 1);
  CHECK(hw.gemm_efficiency[0].flops == 10e9);
  // Everything else is the base's.
  CHECK(hw.gpu == base.gpu);
  CHECK(hw.memory_bytes == base.memory_bytes);
  CHECK(hw.intra_node.bandwidth_bytes_per_s == base.intra_node.bandwidth_bytes_per_s);
  CHECK(hw.dollars_per_gpu_hour == base.dollars_per_gpu_hour);
  // Name, source and provenance are each file's own, never inherited.
  CHECK(hw.name == "slow-net");
  CHECK(hw.source == "the base with a slower network");
  CHECK(hw.provenance.kind == "datasheet");
  CHECK(hw.provenance.host.empty());
}

TEST_CASE("derived profile: a derived file without a name takes its own stem, not the base's") {
  Scratch s;
  s.write("test-base.yaml", kBase);
  const std::string derived = s.write("my-cluster.yaml", "base: test-base\n");
  const HardwareProfile hw = load_ok(derived, kProfiles);
  CHECK(hw.name == "my-cluster");
  CHECK(hw.source.empty());
}

TEST_CASE("derived profile: lookup next to the file, then in the profiles directory, or by relative path") {
  Scratch s;
  // A stem not next to the file is a shipped profile.
  const std::string shipped = s.write("mine.yaml", "base: h100-80gb-sxm\nnetwork:\n  inter_node: {bandwidth_gb_per_s: 12.5}\n");
  const HardwareProfile h100 = load_ok("h100-80gb-sxm", kProfiles);
  const HardwareProfile mine = load_ok(shipped, kProfiles);
  CHECK(mine.peak_flops == h100.peak_flops);
  CHECK(mine.inter_node.bandwidth_bytes_per_s == 12.5e9);
  // A file of that stem next to the derived one wins over the shipped profile.
  s.write("h100-80gb-sxm.yaml", kBase);
  CHECK(load_ok(shipped, kProfiles).peak_flops.at("bf16") == 312e12);
  // A path is relative to the derived file's directory.
  s.write("bases/test-base.yaml", kBase);
  const std::string by_path = s.write("by-path.yaml", "base: bases/test-base.yaml\n");
  CHECK(load_ok(by_path, kProfiles).memory_bytes == 80e9);
}

TEST_CASE("derived profile: chains apply the nearest base last") {
  Scratch s;
  s.write("test-base.yaml", kBase);
  s.write("mid.yaml", "base: test-base\ngpu:\n  memory_gb: 40\n  hbm_bandwidth_gb_per_s: 1555\n");
  const std::string top = s.write("top.yaml", "base: mid\ngpu:\n  memory_gb: 48\n");
  const HardwareProfile hw = load_ok(top, kProfiles);
  CHECK(hw.memory_bytes == 48e9);
  CHECK(hw.hbm_bytes_per_s == 1555e9);
  CHECK(hw.inter_node.bandwidth_bytes_per_s == 25e9);
}

TEST_CASE("derived profile: a missing base, a cycle, a deep chain and a bad value are one-line errors") {
  Scratch s;
  auto error_of = [&](const std::string& path) {
    auto hw = load_hardware(path, kProfiles);
    REQUIRE_FALSE(hw.ok());
    return hw.error();
  };
  const Error missing = error_of(s.write("a.yaml", "base: no-such-profile\n"));
  CHECK(missing.field == "base");
  CHECK(missing.value == "no-such-profile");
  CHECK(missing.message.find("no such profile") != std::string::npos);

  s.write("x.yaml", "base: y\n");
  s.write("y.yaml", "base: x\n");
  const Error cycle = error_of((s.dir / "x.yaml").string());
  CHECK(cycle.field == "base");
  CHECK(cycle.message.find("cycle") != std::string::npos);
  CHECK(error_of(s.write("self.yaml", "base: self\n")).message.find("cycle") != std::string::npos);

  s.write("c0.yaml", kBase);
  for (int i = 1; i <= 9; ++i)
    s.write("c" + std::to_string(i) + ".yaml", "base: c" + std::to_string(i - 1) + "\n");
  CHECK(error_of((s.dir / "c9.yaml").string()).message.find("deeper than") != std::string::npos);
  CHECK(load_ok((s.dir / "c7.yaml").string(), kProfiles).name == "c7");  // 7 bases: within the limit

  CHECK(error_of(s.write("list.yaml", "base: [a, b]\n")).field == "base");
  CHECK(error_of(s.write("empty.yaml", "base: \"\"\n")).field == "base");
  s.write("scalar.yaml", "just text\n");
  CHECK(error_of(s.write("not-map.yaml", "base: scalar.yaml\n")).message.find("not a mapping") != std::string::npos);
  // A base's own error is reported in the base's file.
  std::string broken = kBase;
  broken.replace(broken.find("memory_gb: 80"), 13, "memory_gb: -1");
  s.write("broken.yaml", broken);
  const Error deep = error_of(s.write("on-broken.yaml", "base: broken\n"));
  CHECK(deep.file.find("on-broken.yaml") != std::string::npos);
  CHECK(deep.field == "gpu.memory_gb");
}

TEST_CASE("derived profile: a profile's text alone refuses base (plan files and calibrate carry every value)") {
  auto hw = parse_hardware("base: h100-80gb-sxm\n", "plan.json");
  REQUIRE_FALSE(hw.ok());
  CHECK(hw.error().field == "base");
}

TEST_CASE("derived profile: the shipped derived profiles equal their base but for the keys they list") {
  struct Derived {
    const char* name;
    const char* base;
  };
  for (const Derived d : {Derived{"a100-40gb-4hdr", "a100-40gb-sxm"}, Derived{"a100-40gb-p4d", "a100-40gb-sxm"},
                          Derived{"a100-80gb-400g", "a100-80gb-sxm"}, Derived{"a100-80gb-jeanzay-opa", "a100-80gb-sxm"},
                          Derived{"h100-80gb-800g", "h100-80gb-sxm"}}) {
    INFO(d.name);
    HardwareProfile hw = load_ok(d.name, kProfiles);
    const HardwareProfile base = load_ok(d.base, kProfiles);
    CHECK(hw.inter_node.bandwidth_bytes_per_s < base.inter_node.bandwidth_bytes_per_s);
    // Only the network differs: with the base's network, name and provenance the two print alike.
    hw.inter_node = base.inter_node;
    hw.name = base.name;
    hw.source = base.source;
    hw.provenance = base.provenance;
    hw.file = base.file;
    CHECK(hardware_to_json(hw) == hardware_to_json(base));
  }
  // The H800: the H100's GPU, its own NVLink.
  HardwareProfile h800 = load_ok("h800-80gb-sxm", kProfiles);
  const HardwareProfile h100 = load_ok("h100-80gb-sxm", kProfiles);
  CHECK(h800.intra_node.bandwidth_bytes_per_s == 200e9);
  CHECK(h800.gemm_efficiency.size() == h100.gemm_efficiency.size());
  CHECK(h800.fp8_attention_speedups.size() == h100.fp8_attention_speedups.size());
  CHECK(h800.peak_flops == h100.peak_flops);
}

TEST_CASE("derived profile: the files a profile is read from, in order, for cache keys") {
  Scratch s;
  s.write("bases/test-base.yaml", kBase);
  s.write("mid.yaml", "base: bases/test-base.yaml\ngpu:\n  memory_gb: 40\n");
  const std::string top = s.write("top.yaml", "base: mid\n");
  const std::vector<std::string> chain = hardware_profile_files(top, kProfiles);
  REQUIRE(chain.size() == 3);
  CHECK(chain[0] == top);
  CHECK(fs::path(chain[1]).filename() == "mid.yaml");
  CHECK(fs::equivalent(chain[2], s.dir / "bases/test-base.yaml"));
  // A shipped stem resolves into the profiles directory; a profile without base is alone.
  const std::string shipped = s.write("mine.yaml", "base: h100-80gb-sxm\n");
  const std::vector<std::string> two = hardware_profile_files(shipped, kProfiles);
  REQUIRE(two.size() == 2);
  CHECK(fs::equivalent(two[1], fs::path(kProfiles) / "h100-80gb-sxm.yaml"));
  CHECK(hardware_profile_files(kProfiles + "/h100-80gb-sxm.yaml", kProfiles).size() == 1);
  // A missing base ends the list at the file naming it; a cycle ends it before repeating a file.
  CHECK(hardware_profile_files(s.write("lost.yaml", "base: no-such-profile\n"), kProfiles).size() == 1);
  s.write("x.yaml", "base: y\n");
  s.write("y.yaml", "base: x\n");
  CHECK(hardware_profile_files((s.dir / "x.yaml").string(), kProfiles).size() == 2);
}
