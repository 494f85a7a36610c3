// `meshplan simulate` end to end: broken hand-written schedules exit 2 with one line naming ranks and
// actions; JSON keys of DESIGN.md; timeline files; straggler and goodput flags.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

static std::string plan_args(int global_batch) {
  return "simulate --model " + source_path("examples/models/llama-2-7b.yaml") +
         " --hardware a100-80gb-sxm --gpus 8 --global-batch " + std::to_string(global_batch) + " --pp 4 --zero 1";
}
static const std::string kPlan = plan_args(16);

TEST_CASE("simulate: a schedule with a receive but no send is exit 2, naming ranks and actions") {
  const std::string f = write_scratch("nosend.txt",
                                      "rank 0: F0.0 F1.0 SF1.0 RB0.0 B0.0 RB1.0 B1.0 R.0 O\n"
                                      "rank 1: RF0.0 F0.0 B0.0 SB0.0 RF1.0 F1.0 B1.0 SB1.0 R.0 O\n");
  check_refusal(run_cli("simulate --schedule-file " + f),
                       {f, "rank 1", "RF0.0", "receive without send", "SF0.0 on rank 0", "(hint: "});
}

TEST_CASE("simulate: a cycle of waiting ranks is exit 2 naming the cycle, never a hang") {
  const std::string f = write_scratch("cycle.txt",
                                      "rank 0: F0.0 RB0.0 SF0.0 B0.0 R.0 O\n"
                                      "rank 1: RF0.0 F0.0 B0.0 SB0.0 R.0 O\n");
  check_refusal(run_cli("simulate --schedule-file " + f),
                       {f, "deadlock", "rank 0 blocks at RB0.0", "rank 1 blocks at RF0.0", "cycle"});
}

TEST_CASE("simulate: a syntax error in a schedule file names file, line and token") {
  const std::string f = write_scratch("typo.txt", "rank 0: F0.0 B0.0\nrank 1: F0.0 Q0.0\n");
  check_refusal(run_cli("simulate --schedule-file " + f), {f, "line 2", "Q0.0"});
}

TEST_CASE("simulate: a compute-only hand-written schedule gets its send/recv and simulates") {
  const std::string f = write_scratch("plain.txt",
                                      "# meshplan schedule: kind=1f1b pp=2 virtual_stages=1 micro_batches=2\n"
                                      "rank 0: F0.0 F1.0 B0.0 B1.0 R.0 O\n"
                                      "rank 1: F0.0 B0.0 F1.0 B1.0 R.0 O\n");
  CliResult r = run_cli("simulate --schedule-file " + f + " --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // Unit stages F 1 ms, B 2 ms: 1F1B with P=2, M=2 takes (M+P-1)(f+b) = 9 ms.
  CHECK(j["step_s"].get<double>() == Approx(0.009));
  CHECK(j["bubble_fraction"].get<double>() == Approx(1.0 / 3));
}

TEST_CASE("simulate --format json carries DESIGN.md's meshplan.simulate/1 keys, deterministically") {
  CliResult r = run_cli(kPlan + " --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "meshplan.simulate/1");
  for (const char* k : {"step_s", "bubble_fraction", "events", "checks", "stages"}) CHECK(j.contains(k));
  REQUIRE(j["checks"].is_array());
  for (const auto& c : j["checks"]) {
    CHECK(c.contains("name"));
    CHECK(c["ok"].is_boolean());
    CHECK(c["detail"].is_string());
  }
  REQUIRE(j["stages"].size() == 4);
  for (const auto& s : j["stages"]) {
    CHECK(s.contains("stage"));
    CHECK(s["peak_activation_bytes"].is_number());
  }
  CHECK(run_cli(kPlan + " --format json").out == r.out);
}

TEST_CASE("simulate writes trace JSON, Gantt SVG, DOT and the rendered graph") {
  const std::string dir = scratch_dir();
  CliResult r = run_cli(kPlan + " --trace " + dir + "/t.json --svg " + dir + "/g.svg --dot " + dir +
                        "/d.dot --graph " + dir + "/graph.svg");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("step time") != std::string::npos);
  CHECK(r.out.find("[ok] estimate") != std::string::npos);
  const auto trace = nlohmann::json::parse(slurp(dir + "/t.json"));
  CHECK(trace["traceEvents"].size() > 100);
  CHECK(slurp(dir + "/g.svg").find("</svg>") != std::string::npos);
  CHECK(slurp(dir + "/d.dot").rfind("digraph schedule", 0) == 0);
  CHECK(slurp(dir + "/graph.svg").find("<svg") != std::string::npos);
}

TEST_CASE("simulate --graph skips big plans with a note and still writes the rest") {
  const std::string dir = scratch_dir();
  std::filesystem::remove(dir + "/big.svg");
  const CliResult r = run_cli(plan_args(512) + " --graph " + dir + "/big.svg --svg " + dir + "/big-gantt.svg");
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("--graph") != std::string::npos);
  CHECK(r.err.find("skipped") != std::string::npos);
  CHECK(r.err.find("--dot") != std::string::npos);
  CHECK(r.out.find("step") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir + "/big.svg"));
  CHECK(slurp(dir + "/big-gantt.svg").find("<svg") != std::string::npos);
}

TEST_CASE("simulate --slow-rank shows the straggler, bad values are exit 2") {
  CliResult base = run_cli(kPlan + " --format json");
  CliResult slow = run_cli(kPlan + " --slow-rank 1=1.3 --format json");
  INFO(slow.err);
  REQUIRE(slow.exit_code == 0);
  const auto b = nlohmann::json::parse(base.out), s = nlohmann::json::parse(slow.out);
  CHECK(s["step_s"].get<double>() > b["step_s"].get<double>() * 1.05);
  CHECK(s["schedule"]["replicas_simulated"] == 2);
  check_refusal(run_cli(kPlan + " --slow-rank 9=1.3"), {"--slow-rank", "9=1.3", "out of range"});
  check_refusal(run_cli(kPlan + " --slow-rank one"), {"--slow-rank", "RANK=FACTOR"});
}

TEST_CASE("simulate goodput: Young/Daly for the job GPUs, the checkpoint cost is required") {
  CliResult r = run_cli(kPlan + " --gpu-mtbf-hours 8000 --checkpoint-s 60 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto g = nlohmann::json::parse(r.out)["goodput"];
  // 8 GPUs at 8,000 h each: job MTBF 3,600,000 s; Young sqrt(2 * 60 * 3.6e6) = 20,784.6 s.
  CHECK(g["job_mtbf_s"].get<double>() == Approx(3.6e6));
  CHECK(g["young_interval_s"].get<double>() == Approx(20784.6).epsilon(1e-5));
  CHECK(g["interval_s"].get<double>() == 900);  // default: checkpoint every 15 minutes
  check_refusal(run_cli(kPlan + " --gpu-mtbf-hours 8000"), {"--checkpoint-s"});
}

TEST_CASE("simulate --svg of the 1T plan (P=64, 512 micro-batches) is aggregated and under 2 MB") {
  const std::string svg = scratch_dir() + "/1t.svg";
  const CliResult r = run_cli("simulate --model " + source_path("examples/models/megatron-gpt-1t.yaml") +
                              " --hardware a100-80gb-sxm --gpus 512 --global-batch 512 --seq 2048 --tp 8 --pp 64"
                              " --recompute full --svg " + svg);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(svg);
  CHECK(text.size() < 2u * 1000 * 1000);
  CHECK(text.find("aggregated: ") != std::string::npos);
  CHECK(text.find(">rank 63<") != std::string::npos);  // every stage has its row
  size_t rects = 0;
  for (size_t at = text.find("<rect"); at != std::string::npos; at = text.find("<rect", at + 1)) ++rects;
  CHECK(rects > 64 * 2);  // more than the empty row backgrounds: the timeline is drawn
  CHECK(text.rfind("</svg>\n") == text.size() - 7);
}

TEST_CASE("simulate --svg-from-ms/--svg-to-ms/--svg-rows draw a window of the 1T plan in detail") {
  const std::string svg = scratch_dir() + "/1t-window.svg";
  const std::string base = "simulate --model " + source_path("examples/models/megatron-gpt-1t.yaml") +
                           " --hardware a100-80gb-sxm --gpus 512 --global-batch 512 --seq 2048 --tp 8 --pp 64"
                           " --recompute full --svg " + svg;
  const CliResult r = run_cli(base + " --svg-from-ms 40000 --svg-to-ms 42000 --svg-rows 0-7");
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = slurp(svg);
  CHECK(text.find("aggregated: ") == std::string::npos);  // few actions in view: one rect each
  CHECK(text.find(">rank 7<") != std::string::npos);
  CHECK(text.find(">rank 8<") == std::string::npos);
  CHECK(text.find(">40000<") != std::string::npos);      // the axis starts at the window
  CHECK(text.size() < 200u * 1000);
  check_refusal(run_cli(base + " --svg-rows 5-3"), {"--svg-rows", "5-3", "(hint: "});
  check_refusal(run_cli(base + " --svg-from-ms 10 --svg-to-ms 5"), {"--svg-to-ms", "(hint: "});
}
