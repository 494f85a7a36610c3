// Acceptance 1: for each parallel layout the loss of each of 5 steps equals the one-rank run
// within 1e-5 relative (fp32), under mpirun with 8 ranks. Plans come from `meshplan estimate
// --output`, so the runs go through `meshplan run --plan`.
#include <catch2/catch.hpp>

#include <cmath>

#include "run_helpers.h"

using namespace meshplan_test;

namespace {

// Losses of `meshplan run --plan <plan> --steps 5` on np ranks.
std::vector<double> losses_of(const std::string& dir, const std::string& name, int np,
                              const std::string& config_flags) {
  const std::string plan = write_plan(dir, name, np, config_flags);
  REQUIRE_FALSE(plan.empty());
  const std::string report = dir + "/" + name + ".run.json";
  std::string out;
  int rc = run_meshplan(np, "--plan " + plan + " --steps 5 --format json --output " + report, &out);
  INFO(out);
  REQUIRE(rc == 0);
  std::ifstream in(report);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return json_numbers(json, "loss");
}

void check_equivalent(const std::string& name, const std::string& config_flags) {
  const std::string dir = temp_dir("equiv-" + name);
  const std::vector<double> reference = losses_of(dir, "one-rank", 1, "");
  const std::vector<double> parallel = losses_of(dir, name, 8, config_flags);
  REQUIRE(reference.size() == 5);
  REQUIRE(parallel.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    INFO("step " << i << ": one rank " << reference[i] << ", " << name << " " << parallel[i]);
    CHECK(std::fabs(parallel[i] - reference[i]) <= 1e-5 * std::fabs(reference[i]));
  }
  // The run must learn something, or equal losses would prove little.
  CHECK(reference[4] < reference[0]);
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE("dist: tp2 pp2 dp2 equals one rank") { check_equivalent("tp2pp2dp2", "--tp 2 --pp 2"); }

TEST_CASE("dist: tp4 dp2 equals one rank") { check_equivalent("tp4dp2", "--tp 4"); }

TEST_CASE("dist: pp4 dp2 1F1B equals one rank") { check_equivalent("pp4dp2-1f1b", "--pp 4 --schedule 1f1b"); }

TEST_CASE("dist: pp4 dp2 interleaved equals one rank") {
  check_equivalent("pp4dp2-interleaved", "--pp 4 --schedule interleaved --virtual-stages 2");
}

TEST_CASE("dist: pp4 dp2 interleaved with an embedding-only first and a loss-only last chunk equals one rank") {
  // Megatron's account_for_embedding/loss_in_pipeline_split (Llama 3.1 405B at PP 16 x VP 8: 0, 1 x 126, 0).
  check_equivalent("pp4dp2-interleaved-ends",
                   "--pp 4 --schedule interleaved --virtual-stages 2 --layers-per-stage 0,2,1,1,1,1,2,0");
}

TEST_CASE("dist: pp4 dp2 GPipe equals one rank") { check_equivalent("pp4dp2-gpipe", "--pp 4 --schedule gpipe"); }

TEST_CASE("dist: dp8 ZeRO-1 equals one rank") { check_equivalent("dp8-zero1", "--zero 1"); }

TEST_CASE("dist: dp8 ZeRO-2 equals one rank") { check_equivalent("dp8-zero2", "--zero 2"); }

TEST_CASE("dist: dp8 ZeRO-3 equals one rank") { check_equivalent("dp8-zero3", "--zero 3"); }

TEST_CASE("dist: tp2 pp2 dp2 ZeRO-3 full recompute equals one rank") {
  check_equivalent("tp2pp2dp2-zero3-full", "--tp 2 --pp 2 --zero 3 --recompute full");
}

TEST_CASE("dist: tp2 pp2 dp2 ZeRO-3 selective recompute sequence parallel equals one rank") {
  check_equivalent("tp2pp2dp2-zero3-sel-sp",
                   "--tp 2 --pp 2 --zero 3 --recompute selective --sequence-parallel");
}

TEST_CASE("dist: dp8 without overlap equals one rank") { check_equivalent("dp8-no-overlap", "--no-dp-overlap"); }

TEST_CASE("dist: pp4 dp2 ZB-H1 equals one rank") { check_equivalent("pp4dp2-zbh1", "--pp 4 --schedule zb-h1"); }

TEST_CASE("dist: tp2 pp2 dp2 interleaved ZeRO-2 selective recompute equals one rank") {
  check_equivalent("tp2pp2dp2-interleaved-zero2",
                   "--tp 2 --pp 2 --schedule interleaved --virtual-stages 2 --zero 2 --recompute selective");
}

// DualPipeV (V-shaped placement: rank 0 holds the first and the last model chunk, the turn at rank pp-1
// hands over in memory) at its smallest micro-batch count, 2 pp = 8.
TEST_CASE("dist: pp4 dp2 DualPipeV equals one rank") {
  check_equivalent("pp4dp2-dualpipev", "--pp 4 --schedule dualpipev");
}

TEST_CASE("dist: tp2 pp2 dp2 DualPipeV ZeRO-1 full recompute equals one rank") {
  check_equivalent("tp2pp2dp2-dualpipev-zero1", "--tp 2 --pp 2 --schedule dualpipev --zero 1 --recompute full");
}
