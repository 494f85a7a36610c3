// CLI of --ac-policy: help text, JSON and plan-file round trip, one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/llama-3-8b.yaml");

std::string est(const std::string& rest) {
  return "estimate --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 --seq 8192 --zero 3 "
         "--micro-batch 2 --framework torchtitan " + rest;
}
}  // namespace

TEST_CASE("estimate --help states --ac-policy and its values") {
  CliResult h = run_cli("estimate --help");
  REQUIRE(h.exit_code == 0);
  CHECK(h.out.find("--ac-policy") != std::string::npos);
  CHECK(h.out.find("torchtitan-op") != std::string::npos);
  CHECK(h.out.find("every-N-layers") != std::string::npos);
}

TEST_CASE("estimate --ac-policy torchtitan-op: less stash and more recompute than Korthikanti selective, plan file keeps it") {
  const std::string plan = scratch_dir() + "/ac-policy-plan.json";
  CliResult mega = run_cli(est("--recompute selective --format json"));
  CliResult op = run_cli(est("--recompute selective --ac-policy torchtitan-op --format json --output " + plan));
  INFO(mega.err << op.err);
  REQUIRE(mega.exit_code == 0);
  REQUIRE(op.exit_code == 0);
  CHECK(mega.out.find("\"ac_policy\"") == std::string::npos);  // the default writes no key
  const std::string j = slurp(plan);
  CHECK(j.find("\"ac_policy\": \"torchtitan-op\"") != std::string::npos);
  CHECK(json_number(j, "activations_bytes") < json_number(mega.out, "activations_bytes"));
  CHECK(json_number(j, "step_s") > json_number(mega.out, "step_s"));
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("\"ac_policy\": \"torchtitan-op\"") != std::string::npos);
  CHECK(json_number(again.out, "step_s") == json_number(j, "step_s"));
}

TEST_CASE("estimate --ac-policy every-2-layers lies between no recompute and full recompute") {
  CliResult none = run_cli(est("--format json"));
  CliResult full = run_cli(est("--recompute full --format json"));
  CliResult half = run_cli(est("--recompute full --ac-policy every-2-layers --format json"));
  REQUIRE(none.exit_code == 0);
  REQUIRE(full.exit_code == 0);
  REQUIRE(half.exit_code == 0);
  CHECK(json_number(half.out, "step_s") < json_number(full.out, "step_s"));
  CHECK(json_number(half.out, "step_s") > json_number(none.out, "step_s"));
  CHECK(json_number(half.out, "activations_bytes") > json_number(full.out, "activations_bytes"));
  CHECK(json_number(half.out, "activations_bytes") < json_number(none.out, "activations_bytes"));
}

TEST_CASE("bad --ac-policy values are one line and exit 2") {
  const std::string meshplan_fw = "estimate --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                                  "--seq 8192 --zero 3 --micro-batch 2 --recompute selective --ac-policy torchtitan-op";
  for (const std::string& args : {est("--ac-policy every-0-layers"), est("--ac-policy op"), meshplan_fw,
                                  est("--recompute selective --ac-policy torchtitan-op --attention materialized")})
    check_bad(args, {"--ac-policy"});
}

TEST_CASE("plan --export torchtitan writes selective_ac_option N for every-N-layers") {
  CliResult r = run_cli("plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 --seq 8192 "
                        "--framework torchtitan --recompute full --ac-policy every-2-layers --export torchtitan");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("mode = \"selective\"") != std::string::npos);
  CHECK(r.out.find("selective_ac_option = \"2\"") != std::string::npos);
}
