// The planner's search space: which values each dimension takes, the validity rules with named
// reasons, and a plain enumerator of every configuration (the reference the fast search is tested
// against). No cost model here: only divisibility and shape rules (core validate_config semantics).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/parallel_config.h"

namespace meshplan {

/// Flags narrow any dimension; an empty list means "every value the rules allow".
struct SearchSpace {
  std::vector<int> tp;                  // --tp 2,4,8
  std::vector<int> pp;                  // --pp
  std::vector<int> zero;                // --zero 1,2
  std::vector<int64_t> micro_batch;     // --micro-batch
  std::vector<Recompute> recompute;     // --recompute
  std::vector<int> sequence_parallel;   // --sequence-parallel on/off as 1/0
  std::vector<ScheduleKind> schedule;   // --schedule
  std::vector<int> virtual_stages;      // --virtual-stages (interleaved only)
  std::vector<int> dp_overlap;          // --dp-overlap on/off as 1/0
  int max_tp = 0;                       // --max-tp (0 = no limit)
  int max_pp = 0;                       // --max-pp (0 = no limit)
  std::vector<int> cp;                  // --cp (context parallel); empty = planner/cp_space.h
  std::vector<int> ep;                  // --ep (MoE models; planner/moe_space.h)
  std::vector<int> etp;                 // --etp
  std::vector<int> shard_group;         // --shard-group (HSDP, ZeRO 1-3; 0 = plain); planner/hsdp_space.h
  std::vector<int> pipeline_split;      // --pipeline-split even/balanced/embedding-loss as 0/1/2; empty = all
};

/// Why a candidate was rejected. Each rejected configuration is counted once, under the first rule
/// it breaks in this order (layout rules, then batch, then schedule, then memory).
enum class Reason {
  None = -1,
  GpusDivisible = 0,        // tp*pp does not divide the GPU count
  TpDividesHeads,           // tp does not divide attention heads and key/value heads
  TpExceedsNode,            // tp > gpus_per_node, or tp not dividing it (TP groups would straddle
                            // nodes), without --allow-tp-across-nodes
  PpExceedsLayers,          // pp*v > num_layers
  SequenceParallelNeedsTp,  // sequence parallelism asked for with tp == 1
  Batch,                    // global batch not divisible by dp*micro_batch
  InterleavedNeedsPp,       // interleaved schedule with pp < 2 or v < 2 (dualpipev: pp < 2 or v != 2)
  InterleavedMicroBatches,  // interleaved needs micro-batches % pp == 0
  Memory,                   // peak memory above the usable GPU memory
  DualPipeVMicroBatches,    // dualpipev needs at least 2 pp micro-batches (new reasons go last)
};
constexpr int kNumReasons = 10;
/// Stable short names used in JSON ("rejected") and --explain: "tp-divides-heads", "memory", ...
const char* reason_name(Reason r);
/// One sentence for --explain.
const char* reason_description(Reason r);

/// Rejected-configuration counts by reason.
struct RejectCounts {
  std::array<int64_t, kNumReasons> n{};
  void add(Reason r, int64_t count) { n[static_cast<int>(r)] += count; }
  int64_t operator[](Reason r) const { return n[static_cast<int>(r)]; }
  int64_t total() const;
  bool operator==(const RejectCounts& o) const { return n == o.n; }
};

/// Divisors of n in ascending order (n >= 1).
std::vector<int64_t> divisors(int64_t n);

/// One ZeRO choice: the stage and, under HSDP, the shard group (0 = all DP ranks).
struct ZeroChoice {
  int stage = 0;
  int shard_group = 0;
  bool operator==(const ZeroChoice& o) const { return stage == o.stage && shard_group == o.shard_group; }
};

/// One pipeline schedule choice: the kind and its virtual stages (1 unless interleaved; dualpipev 2).
struct ScheduleChoice {
  ScheduleKind kind = ScheduleKind::OneFOneB;
  int virtual_stages = 1;
  /// Layers per chunk; empty = the even split. The search tries each schedule with the even split and,
  /// where the framework takes uneven chunks and they differ, with the head-aware balanced one and the
  /// embedding-and-loss one (planner/pipeline_balance.h).
  std::vector<int> layers_per_chunk;
};

/// The lists a layout (tp, pp) iterates over; every list is in search order.
/// Recompute is ordered by activation memory, least first (full, selective, none): the search relies
/// on that order for its memory bound.
struct LayoutDims {
  int tp = 1, pp = 1;
  int64_t dp = 0;                        // 0 when tp*pp does not divide the GPU count
  std::vector<int64_t> micro_batches;    // ascending
  std::vector<ScheduleChoice> schedules;
  std::vector<int> zeros;                // ZeRO stages, narrowed by the framework, MoE, features
  std::vector<ZeroChoice> shardings;     // what the search visits: zeros x HSDP shard groups (last)
  std::vector<int> sequence_parallel;    // 0/1
  std::vector<Recompute> recomputes;     // full, selective, none (those allowed)
  std::vector<int> dp_overlaps;          // 1/0
  int cp = 1;                            // context-parallel degree of this layout
  int ep = 1, etp = 1;                   // expert layout (planner/moe_space.h); 1, 1 for dense models
};

/// TP values to try: the --tp list, else the divisors of the GPU count; capped by --max-tp; only
/// those the job's framework runs (planner/framework_space.h), as for every list below.
std::vector<int> tp_domain(const Problem& p, const SearchSpace& s);
/// PP values to try for a given tp: the --pp list, else the divisors of gpus/tp; capped by --max-pp.
std::vector<int> pp_domain(const Problem& p, const SearchSpace& s, int tp);
/// Everything below the layout (micro-batches, schedules, ZeRO, SP, recompute, overlap).
/// dp = gpus / (tp * cp * pp).
LayoutDims layout_dims(const Problem& p, const SearchSpace& s, int tp, int pp, int cp = 1);

/// First layout rule (tp, pp) breaks with DP still unknown, or Reason::None.
Reason check_layout(const Problem& p, int tp, int pp, int cp = 1);
/// First rule broken by a whole configuration (everything but memory), or Reason::None.
/// Same verdict as validate_config(...).empty(), without building messages: the hot-path twin.
Reason classify_config(const Problem& p, const ParallelConfig& cfg);

/// Configurations under one layout with a given micro-batch (number of (schedule, sharding, sp,
/// recompute, overlap) combinations).
int64_t count_per_micro_batch(const LayoutDims& d);
/// All configurations under one layout (1 when dp is undefined: the layout itself is the candidate),
/// for one expert choice (d.ep, d.etp).
int64_t count_layout(const LayoutDims& d);
/// count_layout over all of the layout's expert choices (planner/moe_space.h).
int64_t count_layout_all_experts(const Problem& p, const SearchSpace& s, const LayoutDims& d);
/// Size of the whole space (what a naive enumeration visits).
int64_t count_space(const Problem& p, const SearchSpace& s);

/// Builds the ParallelConfig for one point of a layout's dimensions (num_micro_batches derived;
/// 0 when dp*micro_batch does not divide the global batch).
ParallelConfig make_candidate(const Problem& p, const LayoutDims& d, int64_t micro_batch,
                              const ScheduleChoice& sc, const ZeroChoice& zero, int sp, Recompute rc,
                              int overlap);

/// Plain enumerator: calls `visit` for every configuration of the space, in search order, with the
/// first rule it breaks (Reason::None when valid) and how many configurations it stands for (more
/// than 1 only for a layout whose DP is undefined).
void for_each_config(const Problem& p, const SearchSpace& s,
                     const std::function<void(const ParallelConfig&, Reason, int64_t)>& visit);

}  // namespace meshplan
