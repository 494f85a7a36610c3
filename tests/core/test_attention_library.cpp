// Attention-speed curves by library release: parsing, ordering, and which curve a job takes.
#include <catch2/catch.hpp>

#include "core/attention_library.h"

using namespace meshplan;

namespace {
AttentionKernelSpeed curve(const std::string& kernel, int64_t head_dim, const std::string& version, double tflops) {
  AttentionKernelSpeed c;
  c.kernel = kernel;
  c.head_dim = head_dim;
  c.version = version;
  c.seq = {4096};
  c.flops_per_s = {tflops * 1e12};
  return c;
}

// The one cudnn curve at head_dim 128 left after selecting `version`, by its speed.
double picked(const std::string& version) {
  HardwareProfile hw;
  hw.attention_kernel_speeds = {curve("cudnn", 128, "9.19.1", 1183), curve("flash2", 128, "", 329),
                                curve("cudnn", 128, "9.13.0", 775), curve("cudnn", 128, "9.17.0", 1131),
                                curve("cudnn", 64, "", 400)};
  select_attention_library(hw, "cudnn", version);
  REQUIRE(hw.attention_kernel_speeds.size() == 3);  // one cudnn at 128, flash2, cudnn at 64
  double at128 = 0;
  int cudnn128 = 0;
  for (const AttentionKernelSpeed& c : hw.attention_kernel_speeds)
    if (c.kernel == "cudnn" && c.head_dim == 128) {
      at128 = c.flops_per_s[0] / 1e12;
      ++cudnn128;
    }
  CHECK(cudnn128 == 1);
  return at128;
}
}  // namespace

TEST_CASE("library versions: dot-separated integers, compared part by part") {
  CHECK(valid_library_version("9"));
  CHECK(valid_library_version("9.17.0"));
  CHECK(valid_library_version("9.21.1.3"));
  CHECK_FALSE(valid_library_version(""));
  CHECK_FALSE(valid_library_version("9..1"));
  CHECK_FALSE(valid_library_version("9.17."));
  CHECK_FALSE(valid_library_version("v9.17"));
  CHECK_FALSE(valid_library_version("9.1.2.3.4"));
  CHECK(compare_library_versions("9.17", "9.17.0") == 0);
  CHECK(compare_library_versions("9.9.0", "9.13.0") < 0);  // numerically, not as text
  CHECK(compare_library_versions("9.21.1.3", "9.21.1") > 0);
}

TEST_CASE("a job takes its release's curve, else the newest measured before it, else the oldest") {
  CHECK(picked("") == 1183);        // no version: the newest
  CHECK(picked("9.19.1") == 1183);  // its own
  CHECK(picked("9.20.0") == 1183);  // NeMo 26.04's 9.20.0: the 9.19.1 measurement
  CHECK(picked("9.18.0") == 1131);  // NeMo 26.02's 9.18.0: the 9.17.0 one
  CHECK(picked("9.13.1") == 775);
  CHECK(picked("9.11.0") == 775);   // older than every curve: the oldest
}

TEST_CASE("curves without a version count as older, other kernels and a single curve are left alone") {
  HardwareProfile hw;
  hw.attention_kernel_speeds = {curve("cudnn", 128, "", 500), curve("cudnn", 128, "9.22.0", 1212),
                                curve("flash2", 128, "2.4", 300), curve("flash2", 128, "2.7", 330)};
  HardwareProfile old = hw;
  select_attention_library(old, "cudnn", "9.13.0");
  REQUIRE(old.attention_kernel_speeds.size() == 3);
  CHECK(old.attention_kernel_speeds[0].flops_per_s[0] == 500e12);
  select_attention_library(hw, "cudnn", "");
  REQUIRE(hw.attention_kernel_speeds.size() == 3);
  CHECK(hw.attention_kernel_speeds[0].version == "9.22.0");
  CHECK(hw.attention_kernel_speeds[1].kernel == "flash2");  // both flash2 curves kept: not the kernel asked for
  HardwareProfile one;
  one.attention_kernel_speeds = {curve("cudnn", 128, "9.13.0", 775)};
  select_attention_library(one, "cudnn", "9.22.0");
  CHECK(one.attention_kernel_speeds.size() == 1);
}
