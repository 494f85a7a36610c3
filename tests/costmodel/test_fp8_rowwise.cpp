// torchao row-wise FP8: the shipped H100 speedup table, its interpolation, each linear at bf16 time /
// its shape's speedup, and the recipe's refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/framework.h"
#include "core/io.h"
#include "core/job_features.h"
#include "costmodel/compute_time.h"
#include "costmodel/fp8.h"
#include "costmodel/fp8_rowwise.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
const std::string kProfiles = std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles";

HardwareProfile h100() {
  auto r = load_hardware("h100-80gb-sxm", kProfiles);
  REQUIRE(r.ok());
  return r.value();
}
}  // namespace

TEST_CASE("fp8 rowwise table: the shipped H100 one is pytorch/ao's 6 x 6 x 6, read value by value") {
  const Fp8LinearSpeedup& t = h100().fp8_rowwise_speedup;
  REQUIRE(t.speedup.size() == 216);
  CHECK(t.m.front() == 1024);
  CHECK(t.n.back() == 32768);
  CHECK(rowwise_speedup(t, 1024, 1024, 1024) == Approx(0.42));
  CHECK(rowwise_speedup(t, 32768, 4096, 4096) == Approx(1.04));
  CHECK(rowwise_speedup(t, 32768, 32768, 32768) == Approx(1.52));
  CHECK(rowwise_speedup(t, 16384, 32768, 32768) == Approx(1.72));
  CHECK(rowwise_speedup(t, 4096, 2048, 16384) == Approx(0.90));
}

TEST_CASE("fp8 rowwise interpolation: log-linear between points, clamped outside the table") {
  Fp8LinearSpeedup t;
  t.m = {1024, 4096};
  t.k = {1024};
  t.n = {1024, 4096};
  t.speedup = {0.5, 1.0,   // M 1024
               0.7, 1.5};  // M 4096
  CHECK(rowwise_speedup(t, 1024, 1024, 2048) == Approx(0.75));             // half-way in log N
  CHECK(rowwise_speedup(t, 2048, 9999, 1024) == Approx(0.6));              // half-way in log M; K clamped
  CHECK(rowwise_speedup(t, 1e6, 1024, 128) == Approx(0.7));                // both clamped
  CHECK(rowwise_speedup(t, 2048, 1024, 2048) == Approx((0.75 + 1.1) / 2));
}

TEST_CASE("fp8 rowwise: every linear at its bf16 time / the speedup of its own shape, no casts, no weight copies") {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 64, 96, 8192);
  p.hardware = h100();
  p.job.fp8 = Fp8Recipe::Rowwise;
  ParallelConfig c;
  c.tp = 8;
  c.dp = 8;
  c.zero_stage = 3;
  c.micro_batch_size = 12;
  c.num_micro_batches = 1;
  c.sequence_parallel = true;
  const double T = 12.0 * 8192, peak = 989e12;
  const LinearGemmTimes r = rowwise_linear_times(p, c, peak, T);
  const Fp8LinearSpeedup& s = p.hardware.fp8_rowwise_speedup;
  auto bf16 = [&](double K, double N) { return gemm_time_s(p.hardware, peak, 2.0 * T * K * N); };
  // wk, wv: 4096 x 128 per TP rank, below the table: its N = 1024 column at M, K clamped, 0.59.
  CHECK(rowwise_speedup(s, T, 4096, 128) == Approx(0.59));
  CHECK(r.qkv == Approx(bf16(4096, 512) / rowwise_speedup(s, T, 4096, 512) + 2 * bf16(4096, 128) / 0.59));
  CHECK(r.out == Approx(bf16(512, 4096) / rowwise_speedup(s, T, 512, 4096)));
  CHECK(r.up == Approx(2 * bf16(4096, 1792) / rowwise_speedup(s, T, 4096, 1792)));
  CHECK(r.down == Approx(bf16(1792, 4096) / rowwise_speedup(s, T, 1792, 4096)));
  CHECK(r.qkv > bf16(4096, 512 + 2 * 128));  // at these shapes row-wise FP8 is slower than bf16
  CHECK(fp8_cast_bytes(p, c, T).forward_bytes == 0.0);
  CHECK(fp8_weight_bytes_per_param(Fp8Recipe::Rowwise) == 0.0);
  CHECK(fp8_scaling_state_bytes_per_layer(Fp8Recipe::Rowwise) == 0.0);
  CHECK(linear_gemm_peak(p, peak) == peak);
  CHECK(to_string(Fp8Recipe::Rowwise) == std::string("rowwise"));
  CHECK(parse_fp8_recipe("rowwise") == Fp8Recipe::Rowwise);
}

TEST_CASE("fp8 rowwise is refused without a measured table, and under Transformer Engine frameworks") {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 16, 8192);
  ParallelConfig c;
  c.dp = 8;
  c.micro_batch_size = 2;
  p.job.fp8 = Fp8Recipe::Rowwise;
  auto b200 = load_hardware("b200", kProfiles);
  REQUIRE(b200.ok());
  p.hardware = b200.value();  // an fp8 peak but no table
  ErrorList e;
  validate_features(p, c, "t", e);
  REQUIRE(e.size() == 1);
  CHECK(e[0].message.find("gpu.fp8_rowwise_speedup") != std::string::npos);
  p.hardware = h100();
  e.clear();
  validate_features(p, c, "t", e);
  CHECK(e.empty());
  // Transformer Engine's frameworks have no row-wise recipe; torchtitan (torchao) has no TE delayed one.
  p.job.framework = Framework::Megatron;
  const ErrorList mega = validate_framework(p, c, "t");
  REQUIRE(mega.size() == 1);
  CHECK(mega[0].message.find("torchao") != std::string::npos);
  p.job.framework = Framework::Torchtitan;
  c.zero_stage = 3;
  CHECK(validate_framework(p, c, "t").empty());
  p.job.fp8 = Fp8Recipe::Delayed;
  const ErrorList titan = validate_framework(p, c, "t");
  REQUIRE(titan.size() == 1);
  CHECK(titan[0].field == "--fp8");
}
