// Chunk specs per pipeline stage and the executor-side validation of a plan.
#include "executor/train/rank_setup.h"

#include <numeric>

#include "core/pipeline_placement.h"

namespace meshplan::exec {

std::vector<ChunkSpec> local_chunk_specs(const Problem& p, const ParallelConfig& cfg, int stage,
                                         uint64_t seed) {
  const std::vector<int> layers = layers_per_chunk(p.model, cfg);
  const int chunks = static_cast<int>(layers.size());
  const int v = chunks / cfg.pp;
  std::vector<ChunkSpec> specs;
  for (int local = 0; local < v; ++local) {
    const int g = placed_chunk(cfg.schedule, cfg.pp, stage, local);  // looped or V (core/pipeline_placement.h)
    ChunkSpec s;
    s.model = p.model;
    s.first_layer = std::accumulate(layers.begin(), layers.begin() + g, 0);
    s.num_layers = layers[g];
    s.has_embedding = g == 0;
    s.has_head = g == chunks - 1;
    s.micro_batch_size = cfg.micro_batch_size;
    s.seq_len = p.job.seq_len;
    s.recompute = cfg.recompute;
    s.seed = seed;
    s.loss_chunk_bytes = p.job.knobs.loss_chunk_bytes;
    specs.push_back(s);
  }
  return specs;
}

ErrorList validate_executable(const Problem& p, const ParallelConfig& cfg, const std::string& where) {
  ErrorList errs;
  if (cfg.ep > 1 || cfg.etp > 1) {
    // Expert parallelism folds the DP x CP ranks as ep x edp (executor/mpi/process_groups.h).
    const int dp_ranks = cfg.dp * std::max(1, cfg.cp);
    if (cfg.etp > 1) {
      errs.push_back(make_error(where, "etp", std::to_string(cfg.etp),
                                "meshplan run does not train expert tensor parallelism",
                                "run with etp 1 (each expert whole on one rank)"));
    } else if (dp_ranks % cfg.ep != 0) {
      errs.push_back(make_error(where, "ep", std::to_string(cfg.ep),
                                "ep must divide dp*cp = " + std::to_string(dp_ranks) +
                                    " (experts are split over the data-parallel ranks)",
                                "choose an ep that divides dp*cp"));
    } else if (cfg.zero_stage >= 2) {
      // ZeRO-2/3 reduce-scatter and gather whole layers over DP; a MoE layer's experts would need
      // their own expert-DP pieces in the live gradient and gathered parameter buffers.
      errs.push_back(make_error(where, "zero", std::to_string(cfg.zero_stage),
                                "meshplan run trains expert parallelism (ep=" + std::to_string(cfg.ep) +
                                    ") with ZeRO 0 or 1 only",
                                "use --zero 1 with --ep"));
    }
    if (!errs.empty()) return errs;
  }
  const std::vector<int> layers = layers_per_chunk(p.model, cfg);
  const int v = std::max(1, cfg.virtual_stages);
  if (static_cast<int>(layers.size()) != cfg.pp * v) {
    errs.push_back(make_error(where, "layers_per_stage", std::to_string(layers.size()) + " entries",
                              "needs pp*virtual_stages = " + std::to_string(cfg.pp * v) + " entries"));
    return errs;
  }
  if (std::accumulate(layers.begin(), layers.end(), 0) != p.model.num_layers) {
    errs.push_back(make_error(where, "layers_per_stage", "", "does not add up to num_hidden_layers=" +
                              std::to_string(p.model.num_layers)));
  }
  for (int stage = 0; stage < cfg.pp; ++stage) {
    for (const ChunkSpec& s : local_chunk_specs(p, cfg, stage, 1)) {
      for (int tp_rank = 0; tp_rank < cfg.tp; ++tp_rank) {
        TpContext tp{tp_rank, cfg.tp, nullptr, cfg.sequence_parallel};
        const EpCpGroups groups{GroupContext{0, std::max(1, cfg.ep), nullptr},
                                GroupContext{0, std::max(1, cfg.cp), nullptr}};
        for (Error& e : validate_chunk(s, tp, groups, where)) errs.push_back(std::move(e));
        if (!errs.empty()) return errs;  // every rank would repeat the same reasons
      }
    }
  }
  return errs;
}

}  // namespace meshplan::exec
