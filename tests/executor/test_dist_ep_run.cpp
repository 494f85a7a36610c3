// `meshplan run --ep E`: a tiny Mixtral-style model file (every layer MoE, 4 experts, top-2) trains
// on MPI ranks with the experts split over EP and their gradients reduced over the
// expert-data-parallel group; the loss of each of 5 steps equals the one-rank run within 1e-5
// relative. What the trainer does not run with EP is refused in one line (exit 2).
#include <catch2/catch.hpp>

#include <cmath>

#include "run_helpers.h"

using namespace meshplan_test;

namespace {

/// Mixtral keys (num_local_experts, num_experts_per_tok; intermediate_size is the expert width).
std::string write_moe_model(const std::string& dir) {
  const std::string path = dir + "/mixtral-test4.yaml";
  std::ofstream(path) << "name: mixtral-test4\nmodel_type: mixtral\nhidden_size: 64\n"
                         "num_hidden_layers: 4\nnum_attention_heads: 8\nnum_key_value_heads: 4\n"
                         "intermediate_size: 48\nnum_local_experts: 4\nnum_experts_per_tok: 2\n"
                         "vocab_size: 256\nmax_position_embeddings: 64\ntie_word_embeddings: false\n";
  return path;
}

int run_moe(const std::string& dir, int np, const std::string& flags, std::string* out) {
  return run_meshplan(np, "--model " + write_moe_model(dir) + " --hardware a100-80gb-sxm --gpus " +
                              std::to_string(np) + " --global-batch 8 --seq 16 --micro-batch 1 " + flags,
                      out);
}

std::vector<double> run_losses(const std::string& dir, const std::string& name, int np,
                               const std::string& flags) {
  const std::string report = dir + "/" + name + ".run.json";
  std::string out;
  const int rc = run_moe(dir, np, flags + " --steps 5 --format json --output " + report, &out);
  INFO(out);
  REQUIRE(rc == 0);
  std::ifstream in(report);
  std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return json_numbers(json, "loss");
}

void check_ep(const std::string& name, int np, const std::string& flags) {
  const std::string dir = temp_dir("ep-" + name);
  const std::vector<double> one = run_losses(dir, "one-rank", 1, "");
  const std::vector<double> par = run_losses(dir, name, np, flags);
  REQUIRE(one.size() == 5);
  REQUIRE(par.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    INFO("step " << i << ": one rank " << one[i] << ", " << name << " " << par[i]);
    CHECK(std::fabs(par[i] - one[i]) <= 1e-5 * std::fabs(one[i]));
  }
  CHECK(one[4] < one[0]);
  std::filesystem::remove_all(dir);
}

void check_refused(const std::string& name, int np, const std::string& flags, const std::string& field) {
  const std::string dir = temp_dir("ep-refused-" + name);
  std::string out;
  const int rc = run_moe(dir, np, flags + " --steps 1", &out);
  INFO(out);
  CHECK(rc == 2);
  CHECK(out.find(field) != std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE("dist: run ep2 x edp2 (dp4) ZeRO-0 equals one rank") {
  check_ep("ep2dp4", 4, "--ep 2");
}

TEST_CASE("dist: run ep4 (dp4, experts not replicated) ZeRO-1 equals one rank") {
  check_ep("ep4dp4-zero1", 4, "--ep 4 --zero 1");
}

TEST_CASE("dist: run ep2 x edp2 (dp4) ZeRO-1 equals one rank") {
  check_ep("ep2dp4-zero1", 4, "--ep 2 --zero 1");
}

TEST_CASE("dist: run ep2 with cp2 (dp2) ZeRO-1 equals one rank") {
  check_ep("ep2cp2dp2-zero1", 4, "--ep 2 --cp 2 --zero 1");
}

TEST_CASE("dist: run --ep with ZeRO-2 is refused in one line naming zero") {
  check_refused("zero2", 2, "--ep 2 --zero 2", "zero=2");
}

TEST_CASE("dist: run --ep not dividing dp*cp is refused in one line naming ep") {
  check_refused("ep4", 2, "--ep 4", "ep=4");
}
