// Planner benchmark: full searches for Korthikanti et al.'s 1T model on 3,072 A100s and the 530B
// model on 2,240 A100s; prints search time, configurations per second and work vs a naive search.
// Usage: bench_planner [--naive] [--repeat N]   (--naive also times the evaluate-everything twin)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/framework.h"
#include "core/io.h"
#include "planner/plan_table.h"
#include "planner/search.h"

using namespace meshplan;

namespace {

struct Case {
  const char* label;
  const char* model;     // examples/models/<model>.yaml
  int64_t gpus;
  int64_t global_batch;  // sequences per step
  const char* source;
  Framework framework = Framework::Meshplan;  // whose rules the search follows (--framework)
};

// Narayanan et al. 2021 (SC'21) Table 1: 1T on 3,072 GPUs with global batch 3,072 (one sequence
// per GPU). Korthikanti et al. 2022 trained the 530B model on 2,240 A100s; we keep the same one
// sequence per GPU (global batch 2,240).
const Case kCases[] = {
    {"1T on 3072 A100-80GB", "megatron-gpt-1t", 3072, 3072, "Narayanan et al. 2021, Table 1"},
    {"530B on 2240 A100-80GB", "megatron-gpt-530b", 2240, 2240, "Korthikanti et al. 2022"},
    // torchtitan's space: TP x PP x FSDP2 (ZeRO 0/2/3) with HSDP shard groups of one node's DP ranks
    // and up, every recompute mode.
    {"Llama 2 70B on 1024 A100-80GB, --framework torchtitan (HSDP searched)", "llama-2-70b", 1024, 1024,
     "FSDP2 + TP + PP at large DP", Framework::Torchtitan},
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string describe(const ParallelConfig& c) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "tp=%d pp=%d dp=%d zero=%d shard_group=%d mb=%lld M=%lld %s v=%d %s sp=%d ov=%d",
                c.tp, c.pp, c.dp, c.zero_stage, c.shard_group, static_cast<long long>(c.micro_batch_size),
                static_cast<long long>(c.num_micro_batches), to_string(c.schedule), c.virtual_stages,
                to_string(c.recompute), c.sequence_parallel ? 1 : 0, c.dp_overlap ? 1 : 0);
  // An uneven (balanced) chunk split, run-length (planner/pipeline_balance.h).
  return c.layers_per_stage.empty() ? std::string(buf) : std::string(buf) + " layers=" + layers_text(c.layers_per_stage);
}

bool load(const Case& k, Problem& p) {
  const std::string dir = MESHPLAN_SOURCE_DIR;
  auto m = load_model(dir + "/examples/models/" + k.model + ".yaml");
  auto h = load_hardware("a100-80gb-sxm", dir + "/hardware-profiles");
  if (!m || !h) {
    std::fprintf(stderr, "bench_planner: %s\n", (!m ? m.error() : h.error()).one_line().c_str());
    return false;
  }
  p.model = *m;
  p.hardware = *h;
  p.job.gpus = k.gpus;
  p.job.global_batch = k.global_batch;
  p.job.seq_len = 2048;
  p.job.framework = k.framework;
  p.job.convention = framework_spec(k.framework).convention;
  p.job.knobs = framework_knobs(framework_spec(k.framework));
  return true;
}

void run_case(const Case& k, bool naive, int repeat) {
  Problem p;
  if (!load(k, p)) return;
  SearchOptions opt;
  SearchResult r;
  double best_s = 1e30;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    r = search(p, opt);
    best_s = std::min(best_s, seconds_since(t0));
  }
  std::printf("%s (global batch %lld, seq 2048; %s)\n", k.label,
              static_cast<long long>(k.global_batch), k.source);
  std::printf("  search time            %.4f s (best of %d, one core)\n", best_s, repeat);
  std::printf("  space (naive count)    %lld configurations\n", static_cast<long long>(r.space));
  std::printf("  fitting                %lld\n", static_cast<long long>(r.fitting()));
  std::printf("  estimate_memory calls  %lld\n", static_cast<long long>(r.memory_checks));
  std::printf("  estimate_step calls    %lld (pruned by the time bound: %lld)\n",
              static_cast<long long>(r.evaluated), static_cast<long long>(r.pruned));
  std::printf("  configurations decided %.0f /s\n", r.space / best_s);
  std::printf("  full estimates         %.0f /s\n", r.evaluated / best_s);
  if (!r.top.empty())
    std::printf("  best: %s  step %.3f s  MFU %.3f\n", describe(r.top[0].config).c_str(),
                r.top[0].time.step_s, r.top[0].throughput.mfu);
  if (!naive) return;
  const auto t0 = std::chrono::steady_clock::now();
  const SearchResult n = search_reference(p, opt);
  const double naive_s = seconds_since(t0);
  std::printf("  naive twin             %.4f s: %.0f configurations/s, %lld estimate_step calls "
              "(%.0f /s); same best: %s\n",
              naive_s, n.space / naive_s, static_cast<long long>(n.evaluated), n.evaluated / naive_s,
              !n.top.empty() && !r.top.empty() && describe(n.top[0].config) == describe(r.top[0].config)
                  ? "yes" : "NO");
}

}  // namespace

int main(int argc, char** argv) {
  bool naive = false;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--naive")) naive = true;
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
  }
  for (const Case& k : kCases) run_case(k, naive, repeat < 1 ? 1 : repeat);
  return 0;
}
