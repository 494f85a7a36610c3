// `meshplan run --cp C`: context-parallel layouts (with DP, TP, PP, ZeRO) train on 8 MPI ranks with
// the loss of each of 5 steps equal to the one-rank run within 1e-5 relative (`--ep` runs are in
// test_dist_ep_run.cpp).
#include <catch2/catch.hpp>

#include <cmath>

#include "run_helpers.h"

using namespace meshplan_test;

namespace {

std::vector<double> run_losses(const std::string& dir, const std::string& name, int np,
                               const std::string& flags) {
  const std::string report = dir + "/" + name + ".run.json";
  std::string out;
  const int rc = run_meshplan(np, "--model " + write_test_model(dir) + " --hardware a100-80gb-sxm --gpus " +
                                      std::to_string(np) + " --global-batch 16 --seq 16 --micro-batch 1 " +
                                      flags + " --steps 5 --format json --output " + report, &out);
  INFO(out);
  REQUIRE(rc == 0);
  std::ifstream in(report);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return json_numbers(json, "loss");
}

void check_cp(const std::string& name, const std::string& flags) {
  const std::string dir = temp_dir("cp-" + name);
  const std::vector<double> one = run_losses(dir, "one-rank", 1, "");
  const std::vector<double> par = run_losses(dir, name, 8, flags);
  REQUIRE(one.size() == 5);
  REQUIRE(par.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    INFO("step " << i << ": one rank " << one[i] << ", " << name << " " << par[i]);
    CHECK(std::fabs(par[i] - one[i]) <= 1e-5 * std::fabs(one[i]));
  }
  CHECK(one[4] < one[0]);
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE("dist: run cp2 dp4 equals one rank") { check_cp("cp2dp4", "--cp 2"); }

TEST_CASE("dist: run cp2 tp2 pp2 ZeRO-3 selective recompute equals one rank") {
  check_cp("cp2tp2pp2-zero3", "--cp 2 --tp 2 --pp 2 --zero 3 --recompute selective");
}

TEST_CASE("dist: run cp4 dp2 ZeRO-1 equals one rank") {
  check_cp("cp4dp2-zero1", "--cp 4 --zero 1");
}
