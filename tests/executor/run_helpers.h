// Helpers for end-to-end tests of `meshplan run`: a tiny Llama model file, plan files written by
// `meshplan estimate --output`, runs under MESHPLAN_MPIEXEC, and the losses of meshplan.run/1.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dist_launch.h"

namespace meshplan_test {

/// A fresh directory under the temp dir, unique per process and name.
inline std::string temp_dir(const std::string& name) {
  namespace fs = std::filesystem;
  std::string dir = fs::temp_directory_path().string() + "/meshplan-" + name + "-" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// 8 layers, 8 heads / 4 KV heads, hidden 64: divisible by tp 1..4, pp 1..8, pp*v = 8.
inline std::string write_test_model(const std::string& dir) {
  const std::string path = dir + "/llama-test8.yaml";
  std::ofstream(path) << "name: llama-test8\nmodel_type: llama\nhidden_size: 64\n"
                         "num_hidden_layers: 8\nnum_attention_heads: 8\nnum_key_value_heads: 4\n"
                         "intermediate_size: 128\nvocab_size: 256\nmax_position_embeddings: 64\n"
                         "tie_word_embeddings: false\n";
  return path;
}

/// `meshplan estimate <flags> --output plan` with the test model: a plan file of one candidate.
inline std::string write_plan(const std::string& dir, const std::string& name, int gpus,
                              const std::string& config_flags, int64_t global_batch = 16,
                              int64_t seq = 16) {
  const std::string plan = dir + "/" + name + ".json";
  const std::string cmd = std::string(MESHPLAN_BIN) + " estimate --model " + write_test_model(dir) +
                          " --hardware a100-80gb-sxm --gpus " + std::to_string(gpus) +
                          " --global-batch " + std::to_string(global_batch) + " --seq " +
                          std::to_string(seq) + " --micro-batch 1 " + config_flags + " --output " +
                          plan + " --format json > /dev/null";
  std::string out;
  if (run_command(cmd, &out) != 0) return "";
  return plan;
}

/// Runs `meshplan run <args>` on np ranks (np == 1: without mpirun); stdout+stderr in *output.
inline int run_meshplan(int np, const std::string& args, std::string* output) {
  const std::string bin = std::string(MESHPLAN_BIN) + " run " + args;
  return run_command(np == 1 ? bin : mpirun_prefix(np) + bin, output);
}

/// Values of every `"<key>": <number>` in a JSON text, in order.
inline std::vector<double> json_numbers(const std::string& json, const std::string& key) {
  std::vector<double> out;
  const std::string pattern = "\"" + key + "\": ";
  for (size_t pos = json.find(pattern); pos != std::string::npos; pos = json.find(pattern, pos + 1))
    out.push_back(std::strtod(json.c_str() + pos + pattern.size(), nullptr));
  return out;
}

/// The raw text of each `"<key>": <number>` (for exact comparisons of printed doubles).
inline std::vector<std::string> json_number_texts(const std::string& json, const std::string& key) {
  std::vector<std::string> out;
  const std::string pattern = "\"" + key + "\": ";
  for (size_t pos = json.find(pattern); pos != std::string::npos; pos = json.find(pattern, pos + 1)) {
    size_t start = pos + pattern.size(), end = json.find_first_of(",\n}", start);
    out.push_back(json.substr(start, end - start));
  }
  return out;
}

/// Lines of `text` that start with "meshplan:" (our one-line errors).
inline std::vector<std::string> meshplan_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.rfind("meshplan:", 0) == 0) out.push_back(line);
    start = end + 1;
  }
  return out;
}

}  // namespace meshplan_test
