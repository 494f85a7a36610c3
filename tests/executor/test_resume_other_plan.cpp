// `meshplan run --resume` from a checkpoint written by another plan (another layout, another model,
// another world size): one line, exit 2, and every checkpoint file byte-identical afterwards.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "run_helpers.h"

using namespace meshplan_test;
namespace fs = std::filesystem;

namespace {

// Relative path -> bytes of every regular file under `root` (the whole checkpoint directory).
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    files[fs::relative(e.path(), root).string()] =
        std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return files;
}

// Same shape as write_test_model but hidden 32 / 4 layers: a different model, still tp/pp-divisible.
std::string write_other_model_plan(const std::string& dir, int gpus) {
  const std::string model = dir + "/llama-other.yaml";
  std::ofstream(model) << "name: llama-other\nmodel_type: llama\nhidden_size: 32\n"
                          "num_hidden_layers: 4\nnum_attention_heads: 4\nnum_key_value_heads: 2\n"
                          "intermediate_size: 64\nvocab_size: 256\nmax_position_embeddings: 64\n"
                          "tie_word_embeddings: false\n";
  const std::string plan = dir + "/other-model.json";
  const std::string cmd = std::string(MESHPLAN_BIN) + " estimate --model " + model +
                          " --hardware a100-80gb-sxm --gpus " + std::to_string(gpus) +
                          " --global-batch 16 --seq 16 --micro-batch 1 --output " + plan +
                          " --format json > /dev/null";
  return run_command(cmd) == 0 ? plan : "";
}

// `run --resume` with `plan` on `np` ranks against `ckpt`: exactly one meshplan line naming
// `expected`, exit 2, and the checkpoint directory unchanged to the byte.
void check_refused(int np, const std::string& plan, const std::string& ckpt, const std::string& expected) {
  REQUIRE_FALSE(plan.empty());
  const auto before = snapshot(ckpt);
  REQUIRE_FALSE(before.empty());
  std::string out;
  const int rc = run_meshplan(np, "--plan " + plan + " --steps 4 --checkpoint-dir " + ckpt + " --resume", &out);
  INFO(out);
  CHECK(rc == 2);
  const std::vector<std::string> lines = meshplan_lines(out);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(expected) != std::string::npos);
  CHECK(lines[0].find("MANIFEST") != std::string::npos);  // names the file at fault
  CHECK(snapshot(ckpt) == before);
}

}  // namespace

TEST_CASE("run: --resume from another plan's checkpoint is one line, exit 2, files untouched") {
  const std::string dir = temp_dir("resume-other");
  const std::string ckpt = dir + "/ckpt";
  const std::string written_by = write_plan(dir, "dp2", 2, "");
  REQUIRE_FALSE(written_by.empty());
  std::string out;
  REQUIRE(run_meshplan(2, "--plan " + written_by + " --steps 2 --checkpoint-dir " + ckpt, &out) == 0);
  REQUIRE(fs::exists(ckpt + "/step-00000002/MANIFEST"));

  // Same model and world size, another layout; same layout, another model; another world size.
  check_refused(2, write_plan(dir, "tp2", 2, "--tp 2"), ckpt, "another model or configuration");
  check_refused(2, write_plan(dir, "pp2", 2, "--pp 2"), ckpt, "another model or configuration");
  check_refused(2, write_other_model_plan(dir, 2), ckpt, "another model or configuration");
  check_refused(4, write_plan(dir, "tp2dp2", 4, "--tp 2"), ckpt, "written by 2 ranks, this run has 4");
  check_refused(1, write_plan(dir, "one", 1, ""), ckpt, "written by 2 ranks, this run has 1");
  fs::remove_all(dir);
}
