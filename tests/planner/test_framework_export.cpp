// Framework exports (--export megatron|deepspeed|fsdp|torchtitan|nemo): golden files, refusal of
// what a framework cannot run, Megatron layouts for uneven splits, and DeepSpeed's own validator.
// Set MESHPLAN_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "core/framework.h"
#include "core/job_features.h"
#include "planner/enumerate.h"
#include "planner/export.h"
#include "planner/export_frameworks.h"
#include "planner/search.h"
#include "planner_test_util.h"
#include "skip.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::check_golden;
using planner_test::config;
using planner_test::llama70b;
using planner_test::on;
using planner_test::problem;
using planner_test::run;
using planner_test::temp_file;

namespace {

std::string exported(const std::string& kind, const Problem& p, const ParallelConfig& c) {
  auto e = export_for_framework(kind, p, c);
  INFO((e ? std::string() : e.error().one_line()));
  REQUIRE(e.ok());
  return e->text;
}

}  // namespace

TEST_CASE("framework exports: golden files") {
  const Problem p = llama70b();
  // The same file as test_export.cpp's megatron_args golden: --export megatron adds checks, not text.
  check_golden("planner/megatron_llama-2-70b.sh",
               exported("megatron", on(p, Framework::Megatron),
                        config(8, 4, 4, 1, 1, 256, Recompute::Selective, true, ScheduleKind::Interleaved, 5)));
  check_golden("planner/fw_deepspeed_llama-2-70b_pp4.json",
               exported("deepspeed", on(p, Framework::DeepSpeed),
                        config(2, 4, 16, 1, 1, 64, Recompute::Full, false)));
  check_golden("planner/fw_torchtitan_llama-2-70b.toml",
               exported("torchtitan", on(p, Framework::Torchtitan),
                        config(8, 4, 4, 3, 1, 256, Recompute::Selective, true, ScheduleKind::Interleaved, 2)));
  check_golden("planner/fw_fsdp_llama-2-7b.toml",
               exported("fsdp", on(problem("llama-2-7b", "a100-80gb-sxm", 64, 512, 4096), Framework::Fsdp),
                        config(1, 1, 64, 3, 2, 4, Recompute::Full, false)));
  check_golden("planner/fw_nemo_llama-2-70b.yaml",
               exported("nemo", on(p, Framework::Nemo),
                        config(8, 4, 4, 1, 1, 256, Recompute::Full, true, ScheduleKind::Interleaved, 5)));
}

TEST_CASE("megatron export: dropout switched off for a model without it, on for GPT, rotary base") {
  const std::string llama = exported("megatron", on(llama70b(), Framework::Megatron),
                                     config(8, 4, 4, 1, 1, 256, Recompute::Selective, true));
  CHECK(llama.find("--hidden-dropout 0.0") != std::string::npos);
  CHECK(llama.find("--attention-dropout 0.0") != std::string::npos);
  CHECK(llama.find("--main-grads-dtype fp32") != std::string::npos);
  CHECK(llama.find("--rotary-base 10000\n") != std::string::npos);  // rope_theta of the model file
  const Problem gpt = on(problem("gpt3-175b", "a100-80gb-sxm", 1024, 2048, 2048), Framework::Megatron);
  const std::string g = exported("megatron", gpt, config(8, 8, 16, 0, 1, 128, Recompute::Selective, true));
  CHECK(g.find("--hidden-dropout 0.1") != std::string::npos);
}

TEST_CASE("megatron export: layers that do not divide by pp get a pipeline layout") {
  // 80 layers over pp 6: 13/14 layers per stage; validate_args would reject an even split request.
  Problem p = on(problem("llama-2-70b", "a100-80gb-sxm", 96, 960, 4096), Framework::Megatron);
  const ParallelConfig c = config(8, 6, 2, 1, 1, 480, Recompute::Selective, true);
  REQUIRE(validate_config(p, c, "t").empty());
  const std::string text = exported("megatron", p, c);
  const std::vector<int> chunks = layers_per_chunk(p.model, c);
  std::string layout;
  for (size_t i = 0; i < chunks.size(); ++i)
    layout += std::string(i ? "|" : "E") + "t*" + std::to_string(chunks[i]) + (i + 1 == chunks.size() ? "L" : "");
  CHECK(text.find("--pipeline-model-parallel-layout \"" + layout + "\"") != std::string::npos);
  CHECK(text.find("--num-layers-per-virtual-pipeline-stage") == std::string::npos);
  // The array sources in bash: the quoted layout is one element.
  const std::string path = temp_file("layout.sh", text);
  int rc = 0;
  const std::string args = run("bash -c 'source " + path + " && printf \"%s\\n\" \"${MEGATRON_ARGS[@]}\"'", rc);
  std::remove(path.c_str());
  REQUIRE(rc == 0);
  CHECK(args.find("--pipeline-model-parallel-layout\n" + layout + "\n") != std::string::npos);
}

TEST_CASE("megatron export: an embedding-only first and a loss-only last chunk are a bare E and L") {
  Problem p = on(problem("llama-2-7b", "a100-80gb-sxm", 48, 96, 4096), Framework::Megatron);
  ParallelConfig c = config(2, 4, 6, 1, 1, 16, Recompute::Selective, true, ScheduleKind::Interleaved, 2);
  c.layers_per_stage = {0, 5, 5, 5, 5, 5, 7, 0};
  REQUIRE(validate_config(p, c, "t").empty());
  const std::string text = exported("megatron", p, c);
  CHECK(text.find("--pipeline-model-parallel-layout \"E|t*5|t*5|t*5|t*5|t*5|t*7|L\"") != std::string::npos);
}

TEST_CASE("exports refuse what the framework cannot run, in one line") {
  const Problem p = llama70b();
  const ParallelConfig zb = config(2, 4, 16, 1, 1, 64, Recompute::Selective, true, ScheduleKind::ZeroBubbleH1);
  auto m = export_for_framework("megatron", p, zb);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().field == "--schedule");
  auto d = export_for_framework("deepspeed", p, config(2, 4, 16, 2, 1, 64, Recompute::Full, false));
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().field == "--zero");
  CHECK(d.error().one_line().find('\n') == std::string::npos);
  auto f = export_for_framework("fsdp", p, config(2, 1, 64, 3, 1, 16, Recompute::Full, true));
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().field == "--tp");
}

TEST_CASE("exports other than megatron and nemo refuse Megatron-Core's overlap flags") {
  // A layout the target framework runs (TP 1, so no TP rule refuses it first) whose job asked for
  // --tp-comm-overlap or --overlap-param-gather: DeepSpeed and FSDP have no such settings.
  Problem tp_overlap = llama70b();
  tp_overlap.job.knobs.tp_comm_overlap = true;
  auto d = export_for_framework("deepspeed", tp_overlap, config(1, 1, 64, 1, 1, 16, Recompute::Full, false));
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().field == "tp_comm_overlap");
  Problem gather = llama70b();
  gather.job.knobs.param_gather_overlap = true;
  auto f = export_for_framework("fsdp", gather, config(1, 1, 64, 3, 1, 16, Recompute::Full, false));
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().field == "overlap_param_gather");
  CHECK(f.error().one_line().find("--overlap-param-gather") != std::string::npos);
  // The same knobs export for megatron, where they are flags (written only where costed).
  CHECK(export_for_framework("megatron", tp_overlap, config(1, 1, 64, 1, 1, 16, Recompute::Full, false)).ok());
}

TEST_CASE("deepspeed export: the mpu requirement is stated when tp*pp > 1") {
  auto e = export_for_framework("deepspeed", on(llama70b(), Framework::DeepSpeed),
                                config(2, 4, 16, 1, 1, 64, Recompute::Full, false));
  REQUIRE(e.ok());
  CHECK(e->note.find("mpu") != std::string::npos);
  auto flat = export_for_framework("deepspeed", on(llama70b(), Framework::DeepSpeed),
                                   config(1, 1, 128, 3, 1, 8, Recompute::Full, false));
  REQUIRE(flat.ok());
  CHECK(flat->note.empty());
}

TEST_CASE("plans searched under a framework only hold what it runs, and export") {
  for (auto f : {Framework::Megatron, Framework::DeepSpeed, Framework::Torchtitan, Framework::Nemo}) {
    const Problem p = on(problem("llama-2-13b", "a100-80gb-sxm", 32, 128, 4096), f);
    SearchOptions opt;
    opt.top_k = 10;
    const SearchResult r = search(p, opt);
    REQUIRE_FALSE(r.top.empty());
    for (const StepEstimate& e : r.top) {
      INFO(to_string(f) << " tp " << e.config.tp << " pp " << e.config.pp << " zero " << e.config.zero_stage
                        << " " << to_string(e.config.schedule));
      CHECK(validate_framework(p, e.config, "t").empty());
      CHECK(export_for_framework(to_string(f), p, e.config).ok());
    }
  }
}

TEST_CASE("deepspeed export: DeepSpeed's own DeepSpeedConfig accepts it") {
  const char* venv = std::getenv("MESHPLAN_VALIDATORS_VENV");
  const std::string python = std::string(venv && *venv ? venv : "/opt/meshplan-validators") + "/bin/python";
  if (access(python.c_str(), X_OK) != 0)
    meshplan_test::skip("no validators venv (scripts/install-framework-validators.sh could not make it)");
  struct Case { ParallelConfig c; Problem p; };
  const Problem base = on(llama70b(), Framework::DeepSpeed);
  for (const ParallelConfig& c : {config(2, 4, 16, 1, 1, 64, Recompute::Full, false),
                                  config(1, 1, 128, 3, 2, 4, Recompute::Full, false),
                                  config(8, 1, 16, 2, 4, 16, Recompute::None, false)}) {
    const std::string path = temp_file("ds.json", exported("deepspeed", base, c));
    int rc = 0;
    const std::string out = run(python + " " + MESHPLAN_SOURCE_DIR + "/tests/validators/deepspeed_validate.py " +
                                    path + " " + std::to_string(base.job.gpus) + " " + std::to_string(c.dp) +
                                    " " + std::to_string(c.tp * c.pp) + " 2>&1",
                                rc);
    std::remove(path.c_str());
    INFO(out);
    if (rc == 4) meshplan_test::skip(out.c_str());  // deepspeed could not be installed here
    CHECK(rc == 0);
  }
}

// What DeepSpeed cannot run (PowerSGD, top-k; any compression for the other frameworks) is refused
// naming it; 1-bit Adam / LAMB become its optimizer block; plans with compression hold ZeRO 0 only.
TEST_CASE("gradient compression: DeepSpeed exports its 1-bit optimizers, other methods and exports are refused") {
  Problem p = on(llama70b(), Framework::DeepSpeed);
  const ParallelConfig c = config(1, 1, 128, 0, 1, 8, Recompute::Full, false);
  Job& j = p.job;
  REQUIRE(parse_grad_compression("onebit-adam", "t", "--grad-compression", j).ok());
  const std::string adam = exported("deepspeed", p, c);
  CHECK(adam.find("\"type\": \"OneBitAdam\"") != std::string::npos);
  CHECK(adam.find("\"freeze_step\": 100000") != std::string::npos);
  REQUIRE(parse_grad_compression("onebit-lamb", "t", "--grad-compression", j).ok());
  CHECK(exported("deepspeed", p, c).find("\"type\": \"OneBitLamb\"") != std::string::npos);
  for (const char* refused : {"powersgd:4", "topk:0.01"}) {
    REQUIRE(parse_grad_compression(refused, "t", "--grad-compression", j).ok());
    auto e = export_for_framework("deepspeed", p, c);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "--grad-compression");
    CHECK(e.error().one_line().find("DeepSpeed has no") != std::string::npos);
  }
  REQUIRE(parse_grad_compression("onebit-adam", "t", "--grad-compression", j).ok());
  for (const char* kind : {"megatron", "fsdp", "torchtitan", "nemo"}) {
    INFO(kind);
    Problem q = on(llama70b(), *parse_framework(kind));
    q.job.compression = j.compression;
    auto e = export_for_framework(kind, q, c);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().field == "--grad-compression");
  }
  // No compression: no optimizer block (the training script keeps its own optimizer).
  CHECK(exported("deepspeed", on(llama70b(), Framework::DeepSpeed), c).find("optimizer") == std::string::npos);
  // The search keeps ZeRO 0 only.
  const LayoutDims d = layout_dims(p, SearchSpace{}, 8, 1, 1);
  REQUIRE_FALSE(d.zeros.empty());
  for (int z : d.zeros) CHECK(z == 0);
}

TEST_CASE("deepspeed export: DeepSpeed's own DeepSpeedConfig accepts a 1-bit LAMB config") {
  const char* venv = std::getenv("MESHPLAN_VALIDATORS_VENV");
  const std::string python = std::string(venv && *venv ? venv : "/opt/meshplan-validators") + "/bin/python";
  if (access(python.c_str(), X_OK) != 0)
    meshplan_test::skip("no validators venv (scripts/install-framework-validators.sh could not make it)");
  Problem p = on(llama70b(), Framework::DeepSpeed);
  REQUIRE(parse_grad_compression("onebit-lamb", "t", "--grad-compression", p.job).ok());
  const ParallelConfig c = config(1, 1, 128, 0, 1, 8, Recompute::Full, false);
  const std::string path = temp_file("ds1bit.json", exported("deepspeed", p, c));
  int rc = 0;
  const std::string out = run(python + " " + MESHPLAN_SOURCE_DIR + "/tests/validators/deepspeed_validate.py " + path +
                                  " " + std::to_string(p.job.gpus) + " " + std::to_string(c.dp) + " 1 2>&1",
                              rc);
  std::remove(path.c_str());
  INFO(out);
  if (rc == 4) meshplan_test::skip(out.c_str());  // deepspeed could not be installed here
  CHECK(rc == 0);
}

TEST_CASE("torchtitan/fsdp TOML: tomllib parses it and every key is torchtitan's, NeMo YAML parses") {
  const std::string python = MESHPLAN_PYTHON;
  if (python.empty()) meshplan_test::skip("no python3 found at configure time");
  const Problem p = llama70b();
  const std::vector<std::pair<std::string, ParallelConfig>> tomls = {
      {"torchtitan", config(8, 4, 4, 3, 1, 256, Recompute::Selective, true, ScheduleKind::Interleaved, 2)},
      {"torchtitan", config(8, 2, 8, 2, 1, 128, Recompute::Full, true, ScheduleKind::GPipe)},
      {"torchtitan", config(8, 4, 4, 3, 1, 256, Recompute::Selective, true, ScheduleKind::DualPipeV, 2)},
      {"fsdp", config(1, 1, 128, 0, 1, 8, Recompute::None, false)}};
  for (const auto& [kind, c] : tomls) {
    Problem fp = on(p, parse_framework(kind).value());
    fp.job.knobs.torch_compile = false;  // torchtitan's default (and what ScheduleDualPipeV needs)
    const std::string path = temp_file("tt.toml", exported(kind, fp, c));
    int rc = 0;
    const std::string out =
        run(python + " " + MESHPLAN_SOURCE_DIR + "/tests/validators/torchtitan_keys.py " + path + " 2>&1", rc);
    std::remove(path.c_str());
    INFO(out);
    CHECK(rc == 0);
  }
  // torchao float8 (row-wise and tensorwise): the converter and recipe keys torchtitan reads.
  for (Fp8Recipe r : {Fp8Recipe::Rowwise, Fp8Recipe::Current}) {
    Problem f8 = on(p, Framework::Torchtitan);
    f8.job.fp8 = r;
    const std::string text = exported("torchtitan", f8, config(8, 2, 8, 2, 1, 128, Recompute::Full, true, ScheduleKind::GPipe));
    CHECK(text.find("converters = [\"quantize.linear.float8\"]") != std::string::npos);
    CHECK(text.find(r == Fp8Recipe::Rowwise ? "recipe_name = \"rowwise\"" : "recipe_name = \"tensorwise\"") !=
          std::string::npos);
    const std::string path = temp_file("tt8.toml", text);
    int rc = 0;
    const std::string out =
        run(python + " " + MESHPLAN_SOURCE_DIR + "/tests/validators/torchtitan_keys.py " + path + " 2>&1", rc);
    std::remove(path.c_str());
    INFO(out);
    CHECK(rc == 0);
  }
  const std::string yaml = temp_file("nemo.yaml", exported("nemo", on(p, Framework::Nemo),
                                                           config(8, 4, 4, 1, 1, 256, Recompute::Selective, true)));
  int rc = 0;
  const std::string out = run(python + " -c 'import yaml,sys; d=yaml.safe_load(open(sys.argv[1])); m=d[\"model\"]; "
                                       "print(m[\"tensor_model_parallel_size\"], m[\"pipeline_model_parallel_size\"], "
                                       "m[\"num_query_groups\"], m[\"hidden_dropout\"], m[\"activations_checkpoint_granularity\"], "
                                       "d[\"trainer\"][\"num_nodes\"])' " + yaml + " 2>&1", rc);
  std::remove(yaml.c_str());
  CHECK(rc == 0);
  CHECK(out == "8 4 8 0.0 selective 16\n");
}

TEST_CASE("megatron export: Megatron Core's own PipelineParallelLayerLayout accepts our layouts") {
  const char* venv = std::getenv("MESHPLAN_VALIDATORS_VENV");
  const std::string python = std::string(venv && *venv ? venv : "/opt/meshplan-validators") + "/bin/python";
  if (access(python.c_str(), X_OK) != 0)
    meshplan_test::skip("no validators venv (scripts/install-framework-validators.sh could not make it)");
  struct Case { Problem p; ParallelConfig c; };
  Problem l70 = on(problem("llama-2-70b", "a100-80gb-sxm", 96, 960, 4096), Framework::Megatron);
  Problem l7 = on(problem("llama-2-7b", "a100-80gb-sxm", 48, 96, 4096), Framework::Megatron);
  std::vector<Case> cases = {
      {l70, config(8, 6, 2, 1, 1, 480, Recompute::Selective, true)},                              // 80 / 6
      {l7, config(2, 3, 8, 1, 1, 12, Recompute::Full, true, ScheduleKind::Interleaved, 2)},       // 32 / 6 chunks
      {l7, config(1, 6, 8, 0, 1, 12, Recompute::None, false, ScheduleKind::OneFOneB)}};            // 32 / 6
  ParallelConfig custom = config(2, 3, 8, 1, 1, 12, Recompute::Selective, true);
  custom.layers_per_stage = {9, 12, 11};  // a user's --layers-per-stage
  cases.push_back({l7, custom});
  Problem l7_mtp = l7;  // an MTP module ("m" before the loss, checked against mtp_num_layers 1)
  l7_mtp.model.mtp_layers = 1;
  cases.push_back({l7_mtp, custom});
  cases.push_back({l7_mtp, config(2, 3, 8, 1, 1, 12, Recompute::Full, true, ScheduleKind::Interleaved, 2)});
  // Megatron-Bridge's large-model split: the embedding and the loss counted as pipeline layers, so the first
  // chunk holds only "E" and the last only "L" (Llama 3.1 405B at PP 16 x VP 8: 0, 1 x 126, 0).
  ParallelConfig ends = config(2, 4, 6, 1, 1, 16, Recompute::Selective, true, ScheduleKind::Interleaved, 2);
  ends.layers_per_stage = {0, 5, 5, 5, 5, 5, 7, 0};
  cases.push_back({l7, ends});
  for (const Case& k : cases) {
    REQUIRE(validate_config(k.p, k.c, "t").empty());
    const std::string text = exported("megatron", k.p, k.c);
    const std::string flag = "--pipeline-model-parallel-layout \"";
    const size_t at = text.find(flag);
    REQUIRE(at != std::string::npos);
    const std::string layout = text.substr(at + flag.size(), text.find('"', at + flag.size()) - at - flag.size());
    int rc = 0;
    const std::string out = run(python + " " + MESHPLAN_SOURCE_DIR + "/tests/validators/megatron_layout_validate.py '" +
                                    layout + "' " + std::to_string(k.c.pp) + " " +
                                    std::to_string(k.p.model.num_layers) + " " + std::to_string(k.c.virtual_stages) +
                                    " " + std::to_string(k.p.model.mtp_layers) + " 2>&1",
                                rc);
    INFO(out);
    if (rc == 4) meshplan_test::skip(out.c_str());  // megatron-core could not be installed here
    CHECK(rc == 0);
  }
}

TEST_CASE("torchtitan export: DualPipeV is PyTorch's ScheduleDualPipeV over 2 pp stages of equal layers") {
  Problem p = on(llama70b(), Framework::Torchtitan);
  p.job.knobs.torch_compile = false;  // torchtitan's default (core/framework.cpp)
  const ParallelConfig c = config(8, 4, 4, 3, 1, 256, Recompute::Selective, true, ScheduleKind::DualPipeV, 2);
  REQUIRE(validate_framework(p, c, "t").empty());
  const std::string text = exported("torchtitan", p, c);
  CHECK(text.find("pipeline_parallel_schedule = \"DualPipeV\"\n") != std::string::npos);
  CHECK(text.find("pipeline_parallel_layers_per_stage = 10\n") != std::string::npos);  // 80 layers, 8 stages
  // ScheduleDualPipeV refuses torch.compile'd stages; Megatron has no DualPipeV.
  Problem compiled = p;
  compiled.job.knobs.torch_compile = true;
  const ErrorList e = validate_framework(compiled, c, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].hint.find("--torch-compile off") != std::string::npos);
  CHECK_FALSE(validate_framework(on(llama70b(), Framework::Megatron), c, "t").empty());
}
