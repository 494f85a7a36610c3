// Backend factory and CUDA entry points without a device: what every build must do (these cases
// run everywhere; the GPU cases in the other test_cuda*.cpp skip instead).
#include <catch2/catch.hpp>

#include "executor/backend_factory.h"
#include "executor/comm_local.h"
#include "executor/cuda/cuda_calibrate.h"

using namespace meshplan;
using namespace meshplan::exec;

TEST_CASE("make_backend picks the CPU backend by name", "[cuda][factory]") {
  auto cpu = make_backend("cpu");
  REQUIRE(cpu.ok());
  CHECK(std::string(cpu.value()->name()) == "cpu");
}

TEST_CASE("make_backend rejects an unknown name with a one-line error", "[cuda][factory]") {
  auto bad = make_backend("tpu");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "--backend");
  CHECK(bad.error().value == "tpu");
  CHECK(bad.error().one_line().find('\n') == std::string::npos);
}

TEST_CASE("the cuda backend exists exactly when the build and the machine have CUDA", "[cuda][factory]") {
  auto cuda = make_backend("cuda");
  const bool usable = cuda_compiled() && cuda_device_count() > 0;
  CHECK(cuda.ok() == usable);
  CHECK(cuda_unavailable_reason().empty() == usable);
  if (cuda.ok()) {
    CHECK(std::string(cuda.value()->name()) == "cuda");
  } else {
    CHECK(cuda.error().field == "--backend");
    CHECK(cuda.error().message == cuda_unavailable_reason());
  }
}

TEST_CASE("device memory report is empty for the CPU backend", "[cuda][factory]") {
  auto cpu = make_cpu_backend();
  const DeviceMemoryReport r = device_memory_report(*cpu);
  CHECK_FALSE(r.is_device);
  CHECK(r.device_peak_used_bytes == 0);
}

TEST_CASE("NCCL communicators need the CUDA backend", "[cuda][factory]") {
  auto cpu = make_cpu_backend();
  auto made = make_nccl_communicator(*cpu, make_self_communicator(), "tp", false);
  REQUIRE_FALSE(made.ok());
  CHECK(made.error().one_line().find('\n') == std::string::npos);
}

TEST_CASE("cuda calibration at one rank needs a base profile", "[cuda][factory][calibrate]") {
  auto world = make_self_communicator();
  CudaCalibrationOptions o;
  auto r = calibrate_cuda(*world, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "ranks");
}

TEST_CASE("cuda calibration without a device or CUDA build is a one-line error", "[cuda][factory][calibrate]") {
  if (cuda_compiled() && cuda_device_count() > 0) SUCCEED("a device is present: covered by the GPU cases");
  else {
    auto world = make_self_communicator();
    HardwareProfile base;
    base.name = "base";
    CudaCalibrationOptions o;
    o.base = &base;
    auto r = calibrate_cuda(*world, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "--backend");
    CHECK(r.error().message == cuda_unavailable_reason());
  }
}

TEST_CASE("default CUDA GEMM shapes cover squares and model-like shapes", "[cuda][factory][calibrate]") {
  const auto shapes = default_cuda_gemm_shapes(4096);
  REQUIRE(shapes.size() == 5 + 6);  // 256..4096 squares; h = 1024, 2048, 4096 twice each
  CHECK(shapes.front().M == 256);
  CHECK(shapes[4].N == 4096);
  CHECK(shapes[5].M == 4096);
  CHECK(shapes[5].N == 4 * 1024);
  CHECK(shapes[5].K == 1024);
}

TEST_CASE("cuda calibrated profile copies links from the base at one rank", "[cuda][factory][calibrate]") {
  CudaCalibrationResult r;
  r.common.ranks = 1;
  r.common.host = "h";
  r.device_name = "GPU";
  r.device_memory_bytes = 80e9;
  r.compute_capability = 100;  // sm_100 (B200)
  r.peak_flops["bf16"] = 7e14;
  r.common.memory.bytes_per_s = 3e12;
  HardwareProfile base;
  base.name = "h100";
  base.gpus_per_node = 8;
  base.intra_node.bandwidth_bytes_per_s = 450e9;
  base.inter_node.bandwidth_bytes_per_s = 50e9;
  base.reserved_memory_bytes = 2.5e9;
  base.other_memory_bytes = 2e9;
  CudaCalibrationOptions o;
  o.base = &base;
  const HardwareProfile hw = cuda_calibrated_profile(r, o, "calibrated", "2025-01-01", "test");
  CHECK(hw.provenance.kind == "calibrated");
  CHECK(hw.gpus_per_node == 8);
  CHECK(hw.intra_node.bandwidth_bytes_per_s == 450e9);
  CHECK(hw.inter_node.bandwidth_bytes_per_s == 50e9);
  CHECK(hw.peak_flops.at("bf16") == 7e14);
  CHECK(hw.memory_bytes == 80e9);
  CHECK(hw.hbm_bytes_per_s == 3e12);
  CHECK(hw.compute_capability == 10.0);  // carried into the profile: no FP8 transposes there
}
