// `meshplan run` on CPU ranks predicts with a CPU profile (never the plan's GPU datasheet): measured
// for this host on first use, then read from the cache, or the plan's own profile when calibrated.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

static std::string tiny_run(const std::string& hardware, const std::string& extra = "") {
  return "run --model " + source_path("examples/models/llama-tiny.yaml") + " --hardware " + hardware +
         " --gpus 1 --global-batch 2 --seq 32 --steps 2 --format json" + extra;
}

TEST_CASE("run predicts CPU ranks with a host profile measured once and cached, and says which") {
  const std::string cache = scratch_dir() + "/xdg-cache";
  std::filesystem::remove_all(cache);
  setenv("XDG_CACHE_HOME", cache.c_str(), 1);

  const CliResult first = run_cli(tiny_run("a100-80gb-sxm"));
  INFO("stderr: " << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("measuring this host once") != std::string::npos);
  const auto p1 = nlohmann::json::parse(first.out)["predicted"];
  CHECK(p1["profile_source"] == "measured");
  CHECK(p1["profile_kind"] == "calibrated");
  const std::string profile = p1["profile"];
  CHECK(profile.rfind("cpu-", 0) == 0);
  const std::string path = p1["profile_path"];
  CHECK(path.rfind(cache + "/meshplan/", 0) == 0);
  REQUIRE(std::filesystem::exists(path));

  const CliResult second = run_cli(tiny_run("a100-80gb-sxm"));
  REQUIRE(second.exit_code == 0);
  CHECK(second.err.find("measuring") == std::string::npos);
  const auto p2 = nlohmann::json::parse(second.out)["predicted"];
  CHECK(p2["profile_source"] == "cache");
  CHECK(p2["profile"] == profile);
  // The CPU profile's prediction is within reach of a CPU, unlike the A100's (about 1000x off).
  const auto measured = nlohmann::json::parse(second.out)["measured"];
  const double ratio = p2["step_s"].get<double>() / measured["step_s"].get<double>();
  CHECK(ratio > 0.02);
  CHECK(ratio < 50);

  // A calibrated profile given to the plan is used as is.
  const CliResult own = run_cli(tiny_run(path, " --dtype fp32"));
  INFO("stderr: " << own.err);
  REQUIRE(own.exit_code == 0);
  const auto p3 = nlohmann::json::parse(own.out)["predicted"];
  CHECK(p3["profile_source"] == "plan");
  CHECK(p3["profile_path"] == "");

  // The table names the profile too.
  const CliResult table = run_cli(tiny_run("a100-80gb-sxm").substr(0, tiny_run("a100-80gb-sxm").find(" --format")));
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("predicted with " + profile + " (calibrated), this host's profile") != std::string::npos);
  CHECK(table.out.find("the plan's a100-80gb-sxm is a datasheet") != std::string::npos);

  // Like with like: the measured peak counts the executor's tensors only, so the prediction it is
  // compared with leaves out the profile's other_memory (context, workspaces, communication buffers).
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t other = text.find("  other_memory_gb: 0\n");  // a CPU rank has none of its own
  REQUIRE(other != std::string::npos);
  text.replace(other, 21, "  other_memory_gb: 1.0\n");
  const std::string with_other = scratch_dir() + "/cpu-with-other-memory.yaml";
  std::ofstream(with_other) << text;
  const CliResult est = run_cli("estimate --model " + source_path("examples/models/llama-tiny.yaml") + " --hardware " +
                                with_other + " --gpus 1 --global-batch 2 --seq 32 --dtype fp32 --format json");
  INFO("estimate stderr: " << est.err);
  REQUIRE(est.exit_code == 0);
  CHECK(nlohmann::json::parse(est.out)["memory"]["peak_bytes"].get<double>() > 1e9);  // the profile carries it
  const CliResult run = run_cli(tiny_run(with_other, " --dtype fp32"));
  INFO("run stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(nlohmann::json::parse(run.out)["predicted"]["peak_bytes"].get<double>() < 1e9);
  unsetenv("XDG_CACHE_HOME");
}
