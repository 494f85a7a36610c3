// Megatron-LM and DeepSpeed exports: golden text, valid bash / JSON, and the batch arithmetic.
// Set MESHPLAN_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>

#include "planner/export.h"
#include "planner/search.h"
#include "planner_test_util.h"
#include "skip.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::check_golden;
using planner_test::config;
using planner_test::llama70b;
using planner_test::problem;
using planner_test::run;
using planner_test::temp_file;

namespace {

int64_t json_int(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": (-?[0-9]+)");
  REQUIRE(std::regex_search(json, m, re));
  return std::stoll(m[1]);
}

// 70B on 128 A100s: tp 8, pp 4 (interleaved, v = 5), dp 4, ZeRO-1, selective recompute with SP.
ParallelConfig llama70b_config() {
  return config(8, 4, 4, 1, 1, 256, Recompute::Selective, true, ScheduleKind::Interleaved, 5);
}

// GPT-3 175B on 96 GPUs (fp16): tp 4, pp 3 (1F1B, 96 layers), dp 8, ZeRO-1, full recompute, mb 2:
// what both Megatron-LM and DeepSpeed's pipeline engine run (neither runs GPipe or ZeRO-3 with PP).
ParallelConfig gpt3_config() {
  ParallelConfig c = config(4, 3, 8, 1, 2, 16, Recompute::Full, false);
  c.dp_overlap = false;
  return c;
}

Problem gpt3_problem() {
  Problem p = problem("gpt3-175b", "a100-80gb-sxm", 96, 256, 2048);
  p.job.dtype = "fp16";
  return p;
}

}  // namespace

TEST_CASE("the exported configurations are valid for their problems") {
  CHECK(validate_config(llama70b(), llama70b_config(), "t").empty());
  CHECK(validate_config(gpt3_problem(), gpt3_config(), "t").empty());
}

// megatron_llama-2-70b.sh is checked through --export megatron's own path (test_framework_export.cpp).
TEST_CASE("megatron export: golden text") {
  check_golden("planner/megatron_gpt3-175b.sh", megatron_args(gpt3_problem(), gpt3_config()));
}

TEST_CASE("megatron export: a bash array with the parallel sizes and batch") {
  const Problem p = llama70b();
  const std::string path = temp_file("megatron.sh", megatron_args(p, llama70b_config()));
  int rc = 0;
  const std::string args = run("bash -c 'source " + path + " && printf \"%s\\n\" \"${MEGATRON_ARGS[@]}\"'", rc);
  std::remove(path.c_str());
  REQUIRE(rc == 0);
  // Each flag is followed by its value as the next array element.
  for (const char* expected : {"--tensor-model-parallel-size\n8\n", "--pipeline-model-parallel-size\n4\n",
                               "--num-layers-per-virtual-pipeline-stage\n4\n",  // 80 / (4 x 5)
                               "--micro-batch-size\n1\n", "--global-batch-size\n1024\n",
                               "--sequence-parallel\n", "--recompute-granularity\nselective\n",
                               "--use-distributed-optimizer\n", "--bf16\n", "--num-layers\n80\n",
                               "--hidden-size\n8192\n", "--num-query-groups\n8\n", "--swiglu\n",
                               "--seq-length\n4096\n"})
    CHECK(args.find(expected) != std::string::npos);
  CHECK(args.find('#') == std::string::npos);  // comments are not arguments
}

TEST_CASE("megatron export: ZeRO 2 and 3 run as Megatron-FSDP at pp 1 and are refused under a pipeline") {
  Problem p = llama70b();
  p.job.framework = Framework::Megatron;
  for (int zero : {2, 3}) {
    ParallelConfig c = config(8, 1, 16, zero, 1, 64, Recompute::Selective, true);
    INFO("zero " << zero);
    REQUIRE(validate_config(p, c, "t").empty());
    const std::string args = megatron_args(p, c);
    CHECK(args.find("--use-megatron-fsdp") != std::string::npos);
    CHECK(args.find(std::string("--data-parallel-sharding-strategy ") + (zero == 2 ? "optim_grads\n" : "optim_grads_params\n")) !=
          std::string::npos);
    CHECK(args.find("--ckpt-format fsdp_dtensor") != std::string::npos);
    ParallelConfig piped = c;
    piped.pp = 4;
    piped.dp = 4;
    CHECK_FALSE(validate_config(p, piped, "t").empty());  // not costed under a pipeline schedule
  }
  const std::string one = megatron_args(p, config(8, 1, 16, 1, 1, 64, Recompute::Selective, true));
  CHECK(one.find("--use-megatron-fsdp") == std::string::npos);  // ZeRO-1: the distributed optimizer
}

TEST_CASE("deepspeed export: golden text") {
  check_golden("planner/deepspeed_llama-2-70b.json",
               deepspeed_config_json(llama70b(),
                                     llama70b_config()));
  check_golden("planner/deepspeed_gpt3-175b.json", deepspeed_config_json(gpt3_problem(), gpt3_config()));
}

TEST_CASE("deepspeed export: batch arithmetic train_batch = micro x accumulation x dp") {
  const Problem p = problem("llama-2-13b", "a100-80gb-sxm", 32, 128, 4096);
  SearchOptions opt;
  opt.top_k = 20;
  const SearchResult r = search(p, opt);
  REQUIRE(r.top.size() == 20);
  for (const StepEstimate& e : r.top) {
    const std::string json = deepspeed_config_json(p, e.config);
    const int64_t micro = json_int(json, "train_micro_batch_size_per_gpu");
    const int64_t accumulation = json_int(json, "gradient_accumulation_steps");
    const int64_t dp = p.job.gpus / (static_cast<int64_t>(e.config.tp) * e.config.pp);
    CHECK(json_int(json, "train_batch_size") == p.job.global_batch);
    CHECK(micro * accumulation * dp == p.job.global_batch);
    CHECK(json_int(json, "stage") == e.config.zero_stage);
  }
}

TEST_CASE("deepspeed export: python's json module parses it") {
  const std::string python = MESHPLAN_PYTHON;
  if (python.empty()) meshplan_test::skip("no python3 found at configure time");
  const std::string json = deepspeed_config_json(gpt3_problem(), gpt3_config());
  const std::string path = temp_file("ds_config.json", json);
  int rc = 0;
  const std::string out = run(python + " -c 'import json,sys; c=json.load(open(sys.argv[1])); "
                                       "print(c[\"train_batch_size\"], c[\"train_micro_batch_size_per_gpu\"], "
                                       "c[\"gradient_accumulation_steps\"], c[\"zero_optimization\"][\"stage\"], "
                                       "c[\"fp16\"][\"enabled\"])' " + path, rc);
  std::remove(path.c_str());
  REQUIRE(rc == 0);
  CHECK(out == "256 2 16 1 True\n");  // 2 x 16 x dp 8 = 256
}
