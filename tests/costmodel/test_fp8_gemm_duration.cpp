// FP8 GEMMs read the BF16 efficiency curve at the size of equal duration (costmodel/compute_time.h
// gemm_time_s): by hand on a two-point curve, large GEMMs unchanged, BF16 and slower rates unchanged.
#include <catch2/catch.hpp>

#include <cmath>

#include "costmodel/compute_time.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("an FP8 GEMM's efficiency is the BF16 curve's at flops x bf16 peak / its peak") {
  HardwareProfile hw = meshplan_test::a100();  // curve 0.45 at 1 GFLOP, 0.8 at 100 GFLOP, log-linear between
  hw.peak_flops["fp8"] = 624e12;
  hw.sustained_clock_fraction = 1.0;
  // 20 GFLOP at 624 TFLOP/s lasts as long as 10 GFLOP at 312: efficiency 0.45 + 0.35 * log(10)/log(100) = 0.625.
  const double eff10 = 0.45 + 0.35 * std::log(10.0) / std::log(100.0);
  CHECK(gemm_time_s(hw, 624e12, 20e9) == Approx(20e9 / (624e12 * eff10)));
  // With a ratio below 1 (split accumulation) the rate in use is lower, and so is the shift.
  const double rate = 624e12 * 0.8, eff_at = 0.45 + 0.35 * std::log(20e9 * 312e12 / rate / 1e9) / std::log(100.0);
  CHECK(gemm_time_s(hw, rate, 20e9) == Approx(20e9 / (rate * eff_at)));
  // A GEMM past the curve's last point stays on it; BF16 itself and slower dtypes are not shifted.
  CHECK(gemm_time_s(hw, 624e12, 400e9) == Approx(400e9 / (624e12 * 0.8)));
  CHECK(gemm_time_s(hw, 312e12, 10e9) == Approx(10e9 / (312e12 * eff10)));
  CHECK(gemm_time_s(hw, 156e12, 10e9) == Approx(10e9 / (156e12 * eff10)));
}

TEST_CASE("a profile without a bf16 peak reads the curve at the GEMM's own flops") {
  HardwareProfile hw = meshplan_test::a100();
  hw.peak_flops = {{"fp16", 312e12}, {"fp8", 624e12}};
  hw.sustained_clock_fraction = 1.0;
  const double eff20 = 0.45 + 0.35 * std::log(20.0) / std::log(100.0);
  CHECK(gemm_time_s(hw, 624e12, 20e9) == Approx(20e9 / (624e12 * eff20)));
}
