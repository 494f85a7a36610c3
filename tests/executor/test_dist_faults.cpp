// Acceptance 3 and 5: a rank SIGKILLed mid-run ends the job quickly with a clear message and
// `--resume` continues the exact loss sequence; bad plans are one-line errors with exit code 2.
#include <catch2/catch.hpp>

#include <chrono>

#include "run_helpers.h"

using namespace meshplan_test;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The report's losses as printed (exact text), from `meshplan run ... --output report`.
std::vector<std::string> run_losses(int np, const std::string& args, const std::string& report) {
  std::string out;
  int rc = run_meshplan(np, args + " --format json --output " + report, &out);
  INFO(out);
  REQUIRE(rc == 0);
  return json_number_texts(read_file(report), "loss");
}

// Exactly one of our error lines; exit code 2.
void check_one_line_error(int rc, const std::string& out, const std::string& expected) {
  INFO(out);
  CHECK(rc == 2);
  std::vector<std::string> lines = meshplan_lines(out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(expected) != std::string::npos);
}

}  // namespace

TEST_CASE("dist: SIGKILL of one rank ends the job and --resume continues the same losses") {
  const std::string dir = temp_dir("kill");
  const std::string plan = write_plan(dir, "pp2dp2", 4, "--pp 2");
  REQUIRE_FALSE(plan.empty());
  const std::string base = "--plan " + plan + " --steps 6";
  const std::vector<std::string> full = run_losses(4, base, dir + "/full.json");
  REQUIRE(full.size() == 6);

  const std::string ckpt = " --checkpoint-dir " + dir + "/ckpt --checkpoint-every 2";
  std::string out;
  const auto start = std::chrono::steady_clock::now();
  int rc = run_meshplan(4, base + ckpt + " --test-kill-at-step 3 --comm-timeout-s 30", &out);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(out);
  CHECK(rc != 0);
  CHECK(elapsed_s < 60.0);
  const bool clear = out.find("signal 9") != std::string::npos || out.find("Killed") != std::string::npos ||
                     out.find("made no progress") != std::string::npos;
  CHECK(clear);

  const std::string resumed_report = dir + "/resumed.json";
  const std::vector<std::string> resumed = run_losses(4, base + ckpt + " --resume", resumed_report);
  CHECK(json_numbers(read_file(resumed_report), "resumed_from_step") == std::vector<double>{2});
  REQUIRE(resumed.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(resumed[i] == full[i + 2]);  // identical digits
  std::filesystem::remove_all(dir);
}

TEST_CASE("dist: world size different from the plan is a one-line error") {
  const std::string dir = temp_dir("world");
  const std::string plan = write_plan(dir, "tp2pp2dp2", 8, "--tp 2 --pp 2");
  REQUIRE_FALSE(plan.empty());
  std::string out;
  int rc = run_meshplan(2, "--plan " + plan + " --steps 1", &out);
  check_one_line_error(rc, out, "launch with mpirun -np 8");
  std::filesystem::remove_all(dir);
}

TEST_CASE("dist: a plan over the memory limit is a one-line error") {
  const std::string dir = temp_dir("memlimit");
  const std::string plan = write_plan(dir, "dp2", 2, "");
  REQUIRE_FALSE(plan.empty());
  std::string out;
  int rc = run_meshplan(2, "--plan " + plan + " --steps 1 --memory-limit-gb 0.001", &out);
  check_one_line_error(rc, out, "--memory-limit-gb");
  std::filesystem::remove_all(dir);
}

TEST_CASE("dist: an unknown schedule in the plan is a one-line error") {
  const std::string dir = temp_dir("schedule");
  const std::string plan = write_plan(dir, "pp2", 2, "--pp 2");
  REQUIRE_FALSE(plan.empty());
  std::string text = read_file(plan);
  const size_t at = text.find("\"1f1b\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 6, "\"zigzag\"");
  std::ofstream(plan) << text;
  std::string out;
  int rc = run_meshplan(2, "--plan " + plan + " --steps 1", &out);
  check_one_line_error(rc, out, "zigzag");
  std::filesystem::remove_all(dir);
}

TEST_CASE("dist: a corrupted checkpoint is a one-line error") {
  const std::string dir = temp_dir("corrupt-run");
  const std::string plan = write_plan(dir, "dp2-zero1", 2, "--zero 1");
  REQUIRE_FALSE(plan.empty());
  const std::string args = "--plan " + plan + " --steps 2 --checkpoint-dir " + dir + "/ckpt";
  std::string out;
  REQUIRE(run_meshplan(2, args, &out) == 0);
  const std::string shard = dir + "/ckpt/step-00000002/rank-00001.bin";
  REQUIRE(std::filesystem::exists(shard));
  {
    std::fstream f(shard, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(300);
    f.put('\x55');
    f.seekp(301);
    f.put('\x66');
  }
  int rc = run_meshplan(2, args + " --resume", &out);
  check_one_line_error(rc, out, "corrupted checkpoint");
  std::filesystem::remove_all(dir);
}

TEST_CASE("dist: --resume without a checkpoint is a one-line error") {
  const std::string dir = temp_dir("no-ckpt");
  const std::string plan = write_plan(dir, "one", 1, "");
  REQUIRE_FALSE(plan.empty());
  std::string out;
  int rc = run_meshplan(1, "--plan " + plan + " --steps 2 --resume --checkpoint-dir " + dir + "/none", &out);
  check_one_line_error(rc, out, "no complete checkpoint");
  std::filesystem::remove_all(dir);
}
