// Benchmark: costmodel::estimate_step throughput (configs/s on one core) over a planner-like sweep.
#include <chrono>
#include <cstdio>

#include "core/parallel_config.h"
#include "costmodel/estimate.h"

using namespace meshplan;

static Problem llama70b_on_1024() {
  Problem p;
  ModelSpec& m = p.model;
  m.name = "llama-2-70b"; m.hidden_size = 8192; m.num_layers = 80; m.num_heads = 64; m.num_kv_heads = 8;
  m.intermediate_size = 28672; m.vocab_size = 32000; m.mlp = MlpKind::Gated;
  HardwareProfile& hw = p.hardware;
  hw.name = "bench-a100"; hw.memory_bytes = 80e9; hw.reserved_memory_bytes = 2.5e9; hw.other_memory_bytes = 2e9;
  hw.peak_flops = {{"bf16", 312e12}}; hw.hbm_bytes_per_s = 2039e9; hw.hbm_efficiency = 0.7;
  hw.gemm_efficiency = {{1e8, 0.2}, {1e9, 0.35}, {1e10, 0.55}, {1e11, 0.68}, {1e12, 0.78}};
  hw.gpus_per_node = 8; hw.intra_node = {300e9, 5e-6, 0.8}; hw.inter_node = {25e9, 1e-5, 0.8};
  p.job.gpus = 1024; p.job.global_batch = 1024; p.job.seq_len = 4096;
  return p;
}

int main() {
  const Problem p = llama70b_on_1024();
  const ScheduleKind schedules[] = {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1,
                                    ScheduleKind::Interleaved};
  const Recompute recomputes[] = {Recompute::None, Recompute::Selective, Recompute::Full};
  long evaluated = 0, fitting = 0;
  double checksum = 0.0;
  const auto start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 20; ++rep)
    for (int tp : {1, 2, 4, 8})
      for (int pp : {1, 2, 4, 8, 16})
        for (int mb : {1, 2, 4})
          for (int zero = 0; zero <= 3; ++zero)
            for (Recompute r : recomputes)
              for (ScheduleKind s : schedules) {
                ParallelConfig c;
                c.tp = tp; c.pp = pp; c.dp = static_cast<int>(p.job.gpus / (tp * pp));
                c.micro_batch_size = mb; c.num_micro_batches = p.job.global_batch / (c.dp * mb);
                if (c.num_micro_batches < 1) continue;
                c.zero_stage = zero; c.recompute = r; c.schedule = s;
                c.sequence_parallel = tp > 1;
                if (s == ScheduleKind::Interleaved) {
                  if (pp < 2 || c.num_micro_batches % pp != 0) continue;
                  c.virtual_stages = 2;
                }
                const StepEstimate e = estimate_step(p, c);
                checksum += e.time.step_s;
                fitting += e.fits;
                ++evaluated;
              }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("estimate_step: %ld configs in %.3f s = %.0f configs/s/core (%ld fit; checksum %.6g)\n",
              evaluated, s, evaluated / s, fitting, checksum);
  return 0;
}
