// train(): setup of this rank's chunks, data and schedule; the step loop; measurements.
// Checkpoint save/restore of the same state is in train_checkpoint.cpp.
#include "executor/train/trainer.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "executor/data/batches.h"
#include "executor/data/token_source.h"
#include "executor/optim/grad_clip.h"
#include "executor/parallel/context_parallel.h"
#include "executor/pipeline/pipeline_runner.h"
#include "executor/train/process_memory.h"
#include "executor/train/rank_agreement.h"
#include "executor/train/rank_setup.h"
#include "executor/train/train_checkpoint.h"

namespace meshplan::exec {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double comm_seconds(ProcessGroups& g) {
  return g.world->stats().seconds + g.tp->stats().seconds + g.dp->stats().seconds +
         g.pp->stats().seconds + (g.cp ? g.cp->stats().seconds : 0.0) +
         (g.ep ? g.ep->stats().seconds + g.edp->stats().seconds : 0.0);
}

Result<std::unique_ptr<TokenSource>> open_source(const Problem& p, const TrainOptions& o,
                                                 const std::string& where) {
  Result<std::unique_ptr<TokenSource>> src =
      o.data_path.empty() ? Result<std::unique_ptr<TokenSource>>(make_synthetic_tokens(p.model.vocab_size, o.seed))
                          : open_data_file(o.data_path, p.model.vocab_size);
  if (!src) return src.error();
  ErrorList errs = validate_source(**src, p.job.seq_len, p.model.vocab_size,
                                   o.data_path.empty() ? where : o.data_path);
  if (!errs.empty()) return errs.front();
  return src;
}

struct RankRun {
  const Problem& problem;
  const ParallelConfig& cfg;
  ProcessGroups& groups;
  Backend& backend;
  const TrainOptions& options;
  std::unique_ptr<TokenSource> data;
  Schedule schedule;
  std::vector<std::unique_ptr<DataParallelChunk>> chunks;
  std::unique_ptr<PipelineRunner> runner;
};

void build_chunks(RankRun& run) {
  const ParallelConfig& cfg = run.cfg;
  TpContext tp{run.groups.coord.tp, cfg.tp, run.groups.tp.get(), cfg.sequence_parallel};
  DataParallelOptions dpo;
  dpo.zero_stage = cfg.zero_stage;
  dpo.bucket_bytes = run.options.bucket_bytes;
  dpo.overlap = cfg.dp_overlap;
  dpo.adamw = run.options.adamw;
  std::vector<DataParallelChunk*> local;
  // Context parallelism: each CP rank holds T/cp tokens of every sequence and its loss is their
  // mean; the DP group spans dp*cp ranks, so gradients are summed over DP x CP.
  const ProcessGroups& g = run.groups;
  // Expert parallelism: MoE layers exchange tokens over the EP group; expert gradients are reduced
  // (and ZeRO-1 sharded) over the expert-data-parallel group, dense ones over DP x CP.
  const EpCpGroups groups{GroupContext{g.ep_rank(), g.ep_size, g.ep.get()},
                          GroupContext{g.cp_rank(), g.cp_size, g.cp.get()}};
  for (const ChunkSpec& spec : local_chunk_specs(run.problem, cfg, run.groups.coord.pp, run.options.seed)) {
    run.chunks.push_back(std::make_unique<DataParallelChunk>(run.backend, spec, tp, *run.groups.dp, dpo, groups,
                                                             run.groups.edp.get()));
    local.push_back(run.chunks.back().get());
  }
  const float loss_scale = 1.0f / static_cast<float>(cfg.num_micro_batches * cfg.dp * g.cp_size);
  run.runner = std::make_unique<PipelineRunner>(run.backend, *run.groups.pp, run.schedule,
                                                run.groups.coord.pp, local, loss_scale);
}

// The loader of step `step`; the kill test hook fires on the last world rank mid-pipeline.
MicroBatchLoader loader_for(RankRun& run, int64_t step) {
  return [&run, step](int mb, int32_t* inputs, int32_t* targets) {
    const ProcessGroups& g = run.groups;
    if (step == run.options.test_kill_at_step && g.world_rank == g.grid.world_size() - 1 &&
        mb == static_cast<int>(run.cfg.num_micro_batches / 2)) {
      ::kill(::getpid(), SIGKILL);
    }
    BatchCoord c{step, mb, run.cfg.num_micro_batches, g.dp_rank(), run.cfg.dp,
                 run.cfg.micro_batch_size, run.problem.job.seq_len};
    load_micro_batch(*run.data, c, inputs, targets);
    if (g.cp_size > 1) {  // this CP rank's (B, T/cp) tokens at the front of the (B, T) buffers
      const int64_t B = run.cfg.micro_batch_size, T = run.problem.job.seq_len;
      const std::vector<int32_t> in = cp_local_tokens(inputs, B, T, g.cp_size, g.cp_rank());
      const std::vector<int32_t> tg = cp_local_tokens(targets, B, T, g.cp_size, g.cp_rank());
      std::copy(in.begin(), in.end(), inputs);
      std::copy(tg.begin(), tg.end(), targets);
    }
  };
}

// The ranges' segments of expert tensors (expert == true) or of the others.
std::vector<GradRange> filter_grads(const std::vector<GradRange>& ranges, bool expert) {
  std::vector<GradRange> out;
  for (const GradRange& r : ranges) {
    GradRange f{r.grads, {}};
    for (const FlatSegment& s : r.segments)
      if (s.expert_parallel == expert) f.segments.push_back(s);
    out.push_back(std::move(f));
  }
  return out;
}

double clip_gradients(RankRun& run) {
  std::vector<GradRange> ranges;
  for (auto& c : run.chunks) ranges.push_back(c->optimizer_grads());
  const bool sharded = run.cfg.zero_stage >= 1;
  ProcessGroups& g = run.groups;
  auto reduce = [&g, sharded](double local) {
    double s = all_reduce_sum_double(*g.tp, local);
    s = all_reduce_sum_double(*g.pp, s);
    return sharded ? all_reduce_sum_double(*g.dp, s) : s;
  };
  if (!g.ep) return clip_grad_norm(run.backend, ranges, g.coord.tp == 0, reduce, run.options.max_grad_norm);
  // Expert parallelism without ZeRO: dense gradients are the same on every DP rank, expert ones
  // differ across the EP group (and are the same over expert DP); with ZeRO-1 the DP x CP ranks
  // hold disjoint shards of both, and `reduce` sums over all of them.
  const bool tp0 = g.coord.tp == 0;
  const double dense = reduce(local_grad_sumsq(run.backend, filter_grads(ranges, false), tp0));
  double expert = reduce(local_grad_sumsq(run.backend, filter_grads(ranges, true), tp0));
  if (!sharded) expert = all_reduce_sum_double(*g.ep, expert);
  const double norm = std::sqrt(dense + expert);
  scale_grads(run.backend, ranges, clip_factor(norm, run.options.max_grad_norm));
  return norm;
}

StepRecord run_step(RankRun& run, int64_t step) {
  StepRecord rec;
  rec.step = step;
  const double t0 = now_s(), comm0 = comm_seconds(run.groups);
  for (auto& c : run.chunks) c->begin_step();
  double loss_sum = run.runner->run_step(loader_for(run, step));
  for (auto& c : run.chunks) c->finish_reductions();
  rec.grad_norm = clip_gradients(run);
  rec.lr = learning_rate(run.options.lr, step);
  for (auto& c : run.chunks) c->optimizer_step(static_cast<float>(rec.lr));
  // The loss of the step: last pipeline stage, one TP rank, summed over DP.
  const bool counts = run.chunks.back()->model().spec().has_head && run.groups.coord.tp == 0;
  const double total = all_reduce_sum_double(*run.groups.world, counts ? loss_sum : 0.0);
  rec.loss = total / static_cast<double>(run.cfg.num_micro_batches * run.cfg.dp * run.groups.cp_size);
  // GPU kernels run asynchronously: wait for the step's queued work so its time counts (no-op on CPU).
  run.backend.synchronize();
  rec.time_s = now_s() - t0;
  rec.comm_s = comm_seconds(run.groups) - comm0;
  const double tokens = static_cast<double>(run.problem.job.global_batch * run.problem.job.seq_len);
  rec.tokens_per_s = rec.time_s > 0 ? tokens / rec.time_s : 0;
  return rec;
}

bool checkpoint_due(const TrainOptions& o, int64_t completed) {
  if (o.checkpoint_dir.empty()) return false;
  if (completed == o.steps) return true;
  return o.checkpoint_every > 0 && completed % o.checkpoint_every == 0;
}

void measure(RankRun& run, TrainResult& result) {
  ProcessGroups& g = run.groups;
  const uint64_t mine = run.backend.memory().peak_bytes();
  const std::vector<uint64_t> all = all_gather_u64(*g.world, mine);
  result.stage_peak_bytes.assign(static_cast<size_t>(run.cfg.pp), 0);
  for (int r = 0; r < g.grid.world_size(); ++r) {
    uint64_t& stage = result.stage_peak_bytes[static_cast<size_t>(g.grid.coords(r).pp)];
    stage = std::max(stage, all[static_cast<size_t>(r)]);
    result.peak_bytes = std::max(result.peak_bytes, all[static_cast<size_t>(r)]);
  }
  result.peak_rss_bytes = all_reduce_max_u64(*g.world, peak_rss_bytes());
  // Each step's communication time becomes the maximum over ranks (the busiest rank).
  std::vector<float> comm(result.steps.size());
  for (size_t i = 0; i < comm.size(); ++i) comm[i] = static_cast<float>(result.steps[i].comm_s);
  if (!comm.empty()) g.world->all_reduce(comm.data(), static_cast<int64_t>(comm.size()), ReduceOp::Max);
  for (size_t i = 0; i < comm.size(); ++i) result.steps[i].comm_s = comm[i];
}

}  // namespace

uint64_t plan_fingerprint(const Problem& p, const ParallelConfig& cfg, int world_size, uint64_t seed) {
  const ModelSpec& m = p.model;
  std::string s = std::to_string(m.hidden_size) + "," + std::to_string(m.num_layers) + "," +
                  std::to_string(m.num_heads) + "," + std::to_string(m.num_kv_heads) + "," +
                  std::to_string(m.intermediate_size) + "," + std::to_string(m.vocab_size) + "|" +
                  std::to_string(cfg.tp) + "," + std::to_string(cfg.pp) + "," + std::to_string(cfg.dp) +
                  "," + std::to_string(cfg.zero_stage) + "," + std::to_string(cfg.micro_batch_size) +
                  "," + std::to_string(cfg.num_micro_batches) + "," + std::to_string(cfg.virtual_stages) +
                  "," + to_string(cfg.schedule) + "," + std::to_string(cfg.sequence_parallel) + "|" +
                  std::to_string(p.job.seq_len) + "," + std::to_string(world_size) + "," + std::to_string(seed);
  for (int l : layers_per_chunk(m, cfg)) s += "," + std::to_string(l);
  if (cfg.cp > 1) s += "|cp" + std::to_string(cfg.cp);  // absent for cp 1: older checkpoints resume
  if (cfg.ep > 1) s += "|ep" + std::to_string(cfg.ep);
  return fnv1a64(s.data(), s.size());
}

Result<TrainResult> train(const Problem& problem, const ParallelConfig& cfg, ProcessGroups& groups,
                          Backend& backend, const TrainOptions& options, const std::string& where) {
  ErrorList errs = validate_executable(problem, cfg, where);
  if (!errs.empty()) return errs.front();
  auto schedule = build_schedule(cfg.schedule, cfg.pp, std::max(1, cfg.virtual_stages), static_cast<int>(cfg.num_micro_batches));
  if (!schedule) return schedule.error();
  auto data = open_source(problem, options, where);
  // Every rank reads the data itself: agree, so that one rank's failure stops all of them.
  auto opened = agree(*groups.world, data ? Result<bool>(true) : Result<bool>(data.error()));
  if (!opened) return opened.error();
  RankRun run{problem, cfg, groups, backend, options, std::move(data).value(), std::move(schedule).value(), {}, {}};
  build_chunks(run);

  TrainResult result;
  result.data_description = run.data->describe();
  result.tokens_per_step = problem.job.global_batch * problem.job.seq_len;
  int64_t start = 0;
  if (options.resume) {
    auto restored = restore_checkpoint(run.chunks, groups, options, plan_fingerprint(problem, cfg, groups.grid.world_size(), options.seed));
    if (!restored) return restored.error();
    start = *restored;
    result.resumed_from_step = start;
  }
  for (int64_t step = start; step < options.steps; ++step) {
    result.steps.push_back(run_step(run, step));
    if (options.on_step) options.on_step(result.steps.back());
    if (checkpoint_due(options, step + 1)) {
      auto saved = save_checkpoint(run.chunks, groups, options, step + 1,
                                   plan_fingerprint(problem, cfg, groups.grid.world_size(), options.seed));
      if (!saved) return saved.error();
      result.checkpoints_written.push_back(step + 1);
    }
  }
  measure(run, result);
  return result;
}

}  // namespace meshplan::exec
