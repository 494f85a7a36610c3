// Simulator vocabulary: per-chunk integer durations, the simulation input, spans and per-lane results.
// No I/O and no cost model here: durations.h turns StepCosts into these integers.
#pragma once
#include <cstdint>
#include <vector>

#include "core/framework_knobs.h"
#include "core/units.h"
#include "planner/schedule.h"

namespace meshplan {

/// The three streams of one simulated GPU. TP collectives live inside compute (layer costs).
enum class Stream : uint8_t { Compute = 0, P2p = 1, Dp = 2 };
const char* to_string(Stream s);

/// One model chunk's costs in integer nanoseconds, on an un-slowed GPU.
struct ChunkTimes {
  Nanoseconds forward_ns = 0;      // F of one micro-batch, including its TP communication
  Nanoseconds backward_ns = 0;     // B: input + weight gradients, or input gradients only with W actions
  Nanoseconds weight_ns = 0;       // W: weight gradients (0 when the schedule has no W actions)
  Nanoseconds tp_forward_ns = 0;   // TP communication inside forward_ns
  Nanoseconds tp_backward_ns = 0;  // TP communication inside backward_ns
  Nanoseconds dp_reduce_ns = 0;    // ZeRO-0/1: DP gradient reduction of the whole chunk, once per step (R)
  Nanoseconds reduce_per_micro_batch_ns = 0;  // ZeRO-2/3: reduce-scatter of the chunk's gradients after
                                              // every micro-batch's gradient-producing op (B or W)
  Nanoseconds gather_ns = 0;       // ZeRO-3: all-gather of one layer's weights (0 otherwise)
  bool gather_once = false;        // gathers only in micro-batch 0's F, none in B; the step's reduce (R)
                                   // starts after the last B, not under it (costmodel/fsdp2_pipeline.h)
  int layers = 1;                  // gradient buckets and ZeRO-3 gathers are per layer
  int refetch_layers = 0;          // ZeRO-3: layers (0..layers) whose recomputed forward in B gathers
                                   // their weights again (DeepSpeed; costmodel/zero_comm.h)
  double activation_bytes = 0;     // stashed per micro-batch from F until its last backward piece
  Nanoseconds ep_forward_ns = 0;   // MoE: expert all-to-all inside tp_forward_ns (joins the EP group)
  Nanoseconds ep_backward_ns = 0;  // MoE: expert all-to-all inside tp_backward_ns
};

/// Everything one simulation needs. A lane is one simulated GPU: lane = replica * pp + rank.
struct SimInput {
  Schedule schedule;                       // with send/recv actions (add_communication)
  std::vector<ChunkTimes> chunks;          // pp * v entries, indexed by model chunk
  Nanoseconds p2p_ns = 0;                  // one activation or gradient message between neighbours
  Nanoseconds optimizer_ns = 0;            // optimizer step of one GPU
  std::vector<Nanoseconds> after_gather_ns;  // per rank (size pp or empty): ZeRO-1/2 all-gather of
                                             // the updated weight shards after the optimizer
  int replicas = 1;                        // DP replicas simulated; DP collectives join them
  std::vector<double> compute_factor;      // replicas*pp slowdowns of F/B/W/O (empty = all 1)
  std::vector<double> link_factor;         // replicas*pp: link rank r <-> r+1 (mod pp) (empty = 1)
  double overlap_slowdown = 0;             // compute op stretch per ns of DP-stream traffic of its rank
                                           // overlapping it (SM/HBM contention; the cost model's
                                           // kOverlapComputeSlowdown). Counts collectives already
                                           // scheduled when the op (or ZeRO-3 piece) starts.
  bool record_spans = true;
  bool forward_prefetch = true;            // ZeRO-3: F's next-layer gather issued ahead (ShardingKnobs)
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;  // ZeRO-3: when B issues its gathers
  int ep_group_replicas = 1;               // MoE: consecutive replicas whose lanes of one rank form an
                                           // expert-parallel group; every F/B with expert all-to-all
                                           // waits until all of them reach it (simulator/expert_join.h)
};

/// One busy interval of one stream of one lane.
struct Span {
  Nanoseconds start_ns = 0;
  Nanoseconds end_ns = 0;
  int32_t lane = 0;
  int32_t micro_batch = -1;  // -1 for R, O and ZeRO collectives
  int16_t chunk = 0;         // local chunk on the lane's rank (as in the schedule text)
  int16_t piece = 0;         // ZeRO-3 compute ops run one piece per layer (and pass): its index
  ActionKind kind = ActionKind::Forward;  // on the DP stream: R (reduction) or F/B (ZeRO-3 gather
                                          // for that pass) or O (ZeRO-1/2 gather after the step)
  Stream stream = Stream::Compute;
};

/// Where one lane's step time went. For the lane that ends last, compute + optimizer + the four
/// waits equal end_ns exactly (every idle nanosecond of the compute stream is attributed once).
struct LaneStats {
  Nanoseconds compute_ns = 0;      // F/B/W busy time, TP communication inside layers included
  Nanoseconds tp_comm_ns = 0;      // the TP part of compute_ns
  Nanoseconds optimizer_ns = 0;
  Nanoseconds bubble_ns = 0;       // waiting for a neighbour's compute (pipeline fill and drain)
  Nanoseconds p2p_wait_ns = 0;     // waiting while the awaited message was on the wire
  Nanoseconds dp_wait_ns = 0;      // waiting for DP reductions / ZeRO-1/2 gathers (and other replicas)
  Nanoseconds gather_wait_ns = 0;  // ZeRO-3 all-gathers not hidden behind the previous layer
  Nanoseconds compute_end_ns = 0;  // end of the lane's last F/B/W
  Nanoseconds end_ns = 0;          // end of the lane's step
  double peak_activation_bytes = 0;
  int peak_in_flight = 0;          // micro-batch-chunks stashed at the peak
  int64_t actions = 0;
};

struct SimResult {
  ScheduleKind kind = ScheduleKind::OneFOneB;  // the schedule's chunk placement (core/pipeline_placement.h)
  int pp = 1;
  int virtual_stages = 1;
  int replicas = 1;
  Nanoseconds step_ns = 0;         // max over lanes of end_ns
  int64_t events = 0;              // events taken off the queue
  int64_t actions = 0;             // schedule actions executed, all lanes
  std::vector<LaneStats> lanes;    // replicas * pp
  std::vector<Span> spans;         // empty unless record_spans
  std::vector<double> chunk_activation_bytes;  // per model chunk (for memory-over-time tracks)
  bool split_backward = false;     // W actions release the stash (else B)
};

}  // namespace meshplan
