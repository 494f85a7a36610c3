// FrameworkSpec: what one training framework can run (layouts, schedules, ZeRO stages, recompute) and
// the memory/precision conventions and defaults a plan for it is costed with, as data.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// How a framework treats sequence parallelism when tp > 1.
enum class SequenceParallelRule {
  Optional,       // a flag (Megatron --sequence-parallel, NeMo sequence_parallel, meshplan)
  AlwaysWithTp,   // part of every TP plan (torchtitan enable_sequence_parallel = true by default)
  Never,          // no Megatron-style SP (DeepSpeed's JSON has no such key)
};

/// One framework as data. Every default below is cited in framework.cpp (file and commit).
struct FrameworkSpec {
  Framework id = Framework::Meshplan;
  const char* name = "meshplan";
  const char* runs_with = "";                 // entry point, one line for tables and exports
  bool tensor_parallel = true;                // can it run tp > 1
  bool pipeline_parallel = true;              // can it run pp > 1
  bool equal_pipeline_chunks = false;         // needs num_layers divisible by pp*v
  std::vector<ScheduleKind> schedules;        // pipeline schedules it runs (pp > 1)
  std::vector<int> zero_stages;               // ZeRO stages it runs with pp == 1
  std::vector<int> zero_stages_with_pp;       // ... and with pp > 1
  std::vector<Recompute> recomputes;          // activation recomputation modes
  SequenceParallelRule sequence_parallel = SequenceParallelRule::Optional;
  ParamConvention convention = ParamConvention::Default16;  // bytes per parameter (weights, grads, opt)
  double default_dropout = 0.0;               // hidden/attention dropout when the user sets none
  std::string attention = "fused";            // attention kernel: fused (flash) or materialized
  double dp_bucket_bytes = 0;                 // DP gradient bucket (0 = framework sizes it per DP)
  double zero3_prefetch_bytes = 0;            // ZeRO-3 / FSDP parameter prefetch (0 = one layer)
  // HSDP (ZeRO state sharded within groups, replicated across them) at these ZeRO stages: what its export
  // can express; empty = the framework has no hybrid sharding.
  std::vector<int> hsdp_zero_stages;
  bool hybrid_sharding() const { return !hsdp_zero_stages.empty(); }
};

const char* to_string(Framework f);
std::optional<Framework> parse_framework(const std::string& s);
/// Megatron-LM and NeMo: the frameworks that run Megatron-Core's own options (its overlaps, recompute
/// modules, CUDA graph scopes).
inline bool runs_megatron_core_option(Framework f) { return f == Framework::Megatron || f == Framework::Nemo; }
/// "megatron, deepspeed, fsdp, torchtitan, nemo or meshplan" for hints and --help.
std::string framework_names();

/// The shipped description of framework `f` (a static table; never null).
const FrameworkSpec& framework_spec(Framework f);

/// The cost model's knobs under framework `f`: its attention kernel, and how it shards ZeRO-3
/// traffic (DeepSpeed: per-parameter fetches coalesced into its cited buckets; the others: one
/// all-gather / reduce-scatter per wrapped unit, FSDP's default).
FrameworkKnobs framework_knobs(const FrameworkSpec& f);

/// Whether `f` can run this ZeRO stage at this pipeline depth.
bool framework_admits_zero(const FrameworkSpec& f, int zero_stage, int pp);
/// Whether `f` can run this pipeline schedule at this depth (pp == 1 runs as plain 1F1B).
bool framework_admits_schedule(const FrameworkSpec& f, ScheduleKind s, int pp);
/// torchtitan builds DualPipeV from torch.distributed.pipelining's ScheduleDualPipeV, which refuses stages
/// built with torch.compile (_check_torch_compile_compatibility): false for that pairing, true otherwise.
bool schedule_admits_compile(const Job& job, ScheduleKind s);
bool framework_admits_recompute(const FrameworkSpec& f, Recompute r);
/// Whether the sequence-parallel setting `sp` is what `f` runs at this tp.
bool framework_admits_sp(const FrameworkSpec& f, bool sp, int tp);

/// Every reason the job's framework (p.job.framework) cannot run `cfg`, with the framework named in
/// the message and what it can run in the hint. Empty = runnable.
ErrorList validate_framework(const Problem& p, const ParallelConfig& cfg, const std::string& where);

}  // namespace meshplan
