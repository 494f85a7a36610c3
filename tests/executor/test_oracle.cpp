// External oracle: the loss and every parameter gradient of a small model (dense; MoE with EP;
// context-parallel attention), and AdamW steps, match PyTorch on CPU (float64, tests/executor/torch_oracle.py) within 1e-4 relative. Skipped when no
// python3 with torch is found (MESHPLAN_PYTHON, python3, /usr/bin/python3 are tried).
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ep_cp_harness.h"
#include "model_harness.h"
#include "executor/optim/adamw.h"
#include "skip.h"

using namespace meshplan;
using namespace meshplan::exec;
using namespace exec_test;
namespace fs = std::filesystem;

namespace {

std::string torch_python() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("MESHPLAN_PYTHON")) candidates.push_back(env);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  for (const std::string& py : candidates) {
    const std::string cmd = py + " -c 'import torch' > /dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return py;
  }
  return "";
}

fs::path make_temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "meshplan-oracle-XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

void write_bytes(const fs::path& p, const void* data, size_t bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  REQUIRE(f.good());
}

std::vector<float> read_floats(const fs::path& p, size_t n) {
  std::vector<float> v(n);
  std::ifstream f(p, std::ios::binary);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * 4));
  REQUIRE(f.gcount() == static_cast<std::streamsize>(n * 4));
  return v;
}

// Writes config.txt, manifest.txt and `dir`/`sub`/<name>.bin for each tensor of `tensors`.
void write_tensors(const fs::path& dir, const std::string& sub, const RunResult& shapes_from,
                   const std::map<std::string, std::vector<float>>& tensors, const ModelSpec& m) {
  fs::create_directories(dir / sub);
  std::ofstream manifest(dir / "manifest.txt");
  ChunkSpec s;
  s.model = m;
  const ParamLayout layout = make_param_layout(m, 0, static_cast<int>(m.num_layers), true, true, 0, 1);
  for (const ParamView& v : layout.views) {
    manifest << v.name;
    for (int64_t d : v.full_shape) manifest << ' ' << d;
    manifest << '\n';
    const std::vector<float>& t = tensors.at(v.name);
    write_bytes(dir / sub / (v.name + ".bin"), t.data(), t.size() * 4);
  }
  (void)shapes_from;
}

int run_oracle(const std::string& py, const std::string& mode, const fs::path& dir) {
  const std::string cmd = py + " " + MESHPLAN_SOURCE_DIR + "/tests/executor/torch_oracle.py " +
                          mode + " " + dir.string();
  return std::system(cmd.c_str());
}

}  // namespace

TEST_CASE("loss and every gradient match PyTorch", "[executor][oracle]") {
  const std::string py = torch_python();
  if (py.empty()) meshplan_test::skip("no python3 with torch (Debian: python3-torch)");
  const ModelSpec m = tiny_llama(2);
  const int64_t B = 2, T = 16;
  const int M = 2;
  const auto tokens = rand_tokens(M * B * (T + 1), m.vocab_size, 5);
  const RunResult r = run_model(m, Split{}, B, T, M, tokens);
  const fs::path dir = make_temp_dir();
  {
    std::ofstream cfg(dir / "config.txt");
    cfg << "num_layers " << m.num_layers << "\nnum_heads " << m.num_heads << "\nnum_kv_heads "
        << m.num_kv_heads << "\nhidden_size " << m.hidden_size << "\nnorm_eps 1e-05\nrope_theta "
        << "10000.0\nmicro_batches " << M << "\nbatch " << B << "\nseq_len " << T << "\n";
  }
  write_tensors(dir, "params", r, r.params, m);
  write_bytes(dir / "tokens.bin", tokens.data(), tokens.size() * 4);
  REQUIRE(run_oracle(py, "model", dir) == 0);

  std::vector<double> torch_losses(M);
  std::ifstream lf(dir / "torch_losses.txt");
  for (double& l : torch_losses) lf >> l;
  // The one-rank model, and the same weights split tp2 + SP over two pipeline chunks with full
  // recompute (gradients gathered back to full tensors), against the same PyTorch run.
  Split split;
  split.tp = 2;
  split.sp = true;
  split.layers_per_chunk = {1, 1};
  split.recompute = Recompute::Full;
  const RunResult r_split = run_model(m, split, B, T, M, tokens);
  for (const auto& [label, run] : {std::pair<const char*, const RunResult*>{"1 rank", &r},
                                   {"tp2+sp pp2 full-recompute", &r_split}}) {
    INFO(label);
    for (int mb = 0; mb < M; ++mb) {
      const double err = std::fabs(run->losses[mb] - torch_losses[mb]) / std::fabs(torch_losses[mb]);
      std::printf("oracle (%s): micro-batch %d loss ours %.7f torch %.7f rel %.2e\n", label, mb,
                  run->losses[mb], torch_losses[mb], err);
      CHECK(err < 1e-4);
    }
    double worst = 0;
    for (const auto& [name, g] : run->grads) {
      const auto ref = read_floats(dir / "torch_grads" / (name + ".bin"), g.size());
      const double err = rel_error(g, ref);
      worst = std::max(worst, err);
      INFO(name << " rel error " << err);
      CHECK(err < 1e-4);
    }
    std::printf("oracle (%s): %zu gradient tensors, worst relative error %.2e\n", label,
                run->grads.size(), worst);
  }
  fs::remove_all(dir);
}

TEST_CASE("AdamW steps match torch.optim.AdamW", "[executor][oracle]") {
  const std::string py = torch_python();
  if (py.empty()) meshplan_test::skip("no python3 with torch (Debian: python3-torch)");
  const ModelSpec m = tiny_llama(1);
  const RunResult r = run_model(m, Split{}, 2, 8, 1, rand_tokens(2 * 9, m.vocab_size, 6));
  auto be = make_cpu_backend();
  const ParamLayout layout = make_param_layout(m, 0, 1, true, true, 0, 1);
  std::vector<float> params(layout.total), grads(layout.total);
  for (const ParamView& v : layout.views) {
    std::copy(r.params.at(v.name).begin(), r.params.at(v.name).end(), params.begin() + v.offset);
    std::copy(r.grads.at(v.name).begin(), r.grads.at(v.name).end(), grads.begin() + v.offset);
  }
  const AdamWConfig cfg{0.9f, 0.95f, 1e-8f, 0.1f};
  const int steps = 3;
  const float lr = 1e-3f;
  AdamW opt(*be, layout.total, flat_segments(layout, 0, layout.total), cfg);
  for (int s = 0; s < steps; ++s) {
    std::vector<float> g = grads;
    for (float& x : g) x *= static_cast<float>(s + 1);
    opt.step(params.data(), g.data(), lr);
  }
  const fs::path dir = make_temp_dir();
  {
    std::ofstream c(dir / "config.txt");
    c << "lr 0.001\nbeta1 0.9\nbeta2 0.95\neps 1e-08\nweight_decay 0.1\nsteps " << steps << "\n";
  }
  write_tensors(dir, "params", r, r.params, m);
  write_tensors(dir, "grads", r, r.grads, m);
  REQUIRE(run_oracle(py, "adamw", dir) == 0);
  double worst = 0;
  for (const ParamView& v : layout.views) {
    const auto ref = read_floats(dir / "torch_params" / (v.name + ".bin"), v.numel());
    // Compare the updates (new - old), the part the optimizer computes.
    std::vector<float> ours(v.numel()), theirs(v.numel());
    for (int64_t i = 0; i < v.numel(); ++i) {
      ours[i] = params[v.offset + i] - r.params.at(v.name)[i];
      theirs[i] = ref[i] - r.params.at(v.name)[i];
    }
    const double err = rel_error(ours, theirs);
    worst = std::max(worst, err);
    INFO(v.name << " update rel error " << err);
    CHECK(err < 1e-4);
  }
  std::printf("oracle: AdamW %d steps, worst relative error of the updates %.2e\n", steps, worst);
  fs::remove_all(dir);
}

TEST_CASE("MoE layers with EP and ring attention with CP: loss and every gradient match PyTorch",
          "[executor][oracle][moe][cp]") {
  const std::string py = torch_python();
  if (py.empty()) meshplan_test::skip("no python3 with torch (Debian: python3-torch)");
  const ModelSpec m = tiny_moe();  // layer 0 dense, layers 1-2 MoE (4 experts, top-2)
  const int64_t B = 2, T = 16;
  const int M = 2;
  const auto tokens = rand_tokens(M * B * (T + 1), m.vocab_size, 5);
  const GridRun one = run_ep_cp_local(m, Grid{}, B, T, M, 1, tokens);
  const fs::path dir = make_temp_dir();
  {
    std::ofstream cfg(dir / "config.txt");
    cfg << "num_layers " << m.num_layers << "\nnum_heads " << m.num_heads << "\nnum_kv_heads "
        << m.num_kv_heads << "\nhidden_size " << m.hidden_size << "\nnorm_eps 1e-05\nrope_theta "
        << "10000.0\nmicro_batches " << M << "\nbatch " << B << "\nseq_len " << T
        << "\nnum_experts " << m.moe.num_experts << "\nexperts_per_token "
        << m.moe.experts_per_token << "\nfirst_dense_layers " << m.moe.first_dense_layers
        << "\nlayer_freq " << m.moe.layer_freq << "\n";
  }
  RunResult shapes;
  write_tensors(dir, "params", shapes, one.params, m);
  write_bytes(dir / "tokens.bin", tokens.data(), tokens.size() * 4);
  REQUIRE(run_oracle(py, "model", dir) == 0);
  double torch_loss = 0;
  std::ifstream lf(dir / "torch_losses.txt");
  for (int mb = 0; mb < M; ++mb) {
    double l = 0;
    lf >> l;
    torch_loss += l / M;
  }
  Grid ep2, cp2, ep2cp2;
  ep2.ep = 2;
  cp2.cp = 2;
  ep2cp2.ep = ep2cp2.cp = 2;
  ep2cp2.layers_per_chunk = {2, 1};
  ep2cp2.recompute = Recompute::Full;
  const GridRun r_ep = run_ep_cp_local(m, ep2, B, T, M, 1, tokens);
  const GridRun r_cp = run_ep_cp_local(m, cp2, B, T, M, 1, tokens);
  const GridRun r_both = run_ep_cp_local(m, ep2cp2, B, T, M, 1, tokens);
  for (const auto& [label, run] : {std::pair<const char*, const GridRun*>{"moe 1 rank", &one},
                                   {"moe ep2", &r_ep},
                                   {"moe cp2", &r_cp},
                                   {"moe ep2 x cp2, pp chunks, full recompute", &r_both}}) {
    INFO(label);
    const double lerr = std::fabs(run->step_losses[0] - torch_loss) / std::fabs(torch_loss);
    CHECK(lerr < 1e-4);
    double worst = 0;
    for (const auto& [name, g] : run->grads) {
      const auto ref = read_floats(dir / "torch_grads" / (name + ".bin"), g.size());
      const double err = rel_error(g, ref);
      worst = std::max(worst, err);
      INFO(name << " rel error " << err);
      CHECK(err < 1e-4);
    }
    std::printf("oracle (%s): loss rel %.2e, %zu gradient tensors, worst relative error %.2e\n",
                label, lerr, run->grads.size(), worst);
  }
  fs::remove_all(dir);
}
