// DataParallelChunk: one ModelChunk plus its data-parallel machinery: bucketed non-blocking
// gradient all-reduce started from the grad-ready hook (ZeRO-0), reduce-scatter of gradients into
// a sharded optimizer (ZeRO-1/2), per-layer parameter all-gather for forward and backward (ZeRO-3),
// fp32 master weights with AdamW, and the state a checkpoint needs.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/backend.h"
#include "executor/checkpoint/shard_file.h"
#include "executor/comm.h"
#include "executor/model/model_chunk.h"
#include "executor/optim/adamw.h"
#include "executor/optim/grad_clip.h"
#include "executor/parallel/shard_layout.h"

namespace meshplan::exec {

struct DataParallelOptions {
  int zero_stage = 0;                  // 0..3
  int64_t bucket_bytes = 4 << 20;      // ZeRO-0 all-reduce bucket (bytes of fp32 gradients)
  bool overlap = true;                 // start reductions from grads_ready (else at the R action)
  AdamWConfig adamw;
};

/// What the chunk holds, by stage (P = this chunk's parameters on this TP rank, S = P/dp padded):
///   ZeRO-0: working params P, grads P, master P + m, v P       (all-reduce of gradient buckets)
///   ZeRO-1: working params P, grads P, master S + m, v S       (reduce-scatter once per step)
///   ZeRO-2: working params P, grads S (+ one block in flight), master, m, v S (reduce-scatter of
///           each micro-batch's block gradients as backward produces them)
///   ZeRO-3: working params S (+ gathered blocks), grads S, master, m, v S
/// Working params are refreshed from the fp32 master after each optimizer step (an all-gather for
/// ZeRO-1/2), mirroring a bf16-working / fp32-master GPU layout.
class DataParallelChunk {
 public:
  /// `groups` go to the model chunk (context parallelism: `dp` then spans the DP x CP ranks).
  /// Expert parallelism: `edp` (the expert-data-parallel group: the ranks of `dp` holding the same
  /// experts) reduces and shards the expert tensors; null when ep == 1 (experts reduce over `dp`).
  /// ZeRO-0 and ZeRO-1 only with `edp` (asserted; rank_setup.cpp refuses the rest).
  DataParallelChunk(Backend& backend, const ChunkSpec& spec, const TpContext& tp, Communicator& dp,
                    const DataParallelOptions& options, EpCpGroups groups = {},
                    Communicator* edp = nullptr);
  ~DataParallelChunk();
  DataParallelChunk(const DataParallelChunk&) = delete;
  DataParallelChunk& operator=(const DataParallelChunk&) = delete;

  ModelChunk& model() { return *model_; }
  int zero_stage() const { return options_.zero_stage; }
  /// ZeRO-2/3 reduce every micro-batch's gradients (pass grads_final on every backward).
  bool reduce_every_micro_batch() const { return options_.zero_stage >= 2; }
  /// True when each DP rank ends the step with a different part of the gradients (ZeRO >= 1).
  bool grads_sharded() const { return options_.zero_stage >= 1; }

  /// Start of a step: clears gradient accumulators and bucket state.
  void begin_step();
  /// The schedule's R action: starts every reduction not started yet (non-blocking).
  void issue_remaining();
  /// Before the optimizer: waits for every reduction; the optimizer's gradients are then final.
  void finish_reductions();
  /// Gradients the optimizer uses (full or this rank's shard) with their segments, for clipping.
  GradRange optimizer_grads();
  /// AdamW on the master weights at `lr`, then refreshes the working parameters.
  void optimizer_step(float lr);

  /// Checkpoint state under `prefix` ("chunk0."): master, m, v, step count.
  std::vector<Section> state_sections(const std::string& prefix);
  /// Checks that `sections` hold this chunk's state in the right sizes (no communication).
  Result<bool> check_state(const std::vector<Section>& sections, const std::string& prefix,
                           const std::string& file) const;
  /// Restores state_sections' output; asserts check_state passed (collective over the DP group
  /// for ZeRO-1/2: all-gather of the working parameters).
  void load_state(const std::vector<Section>& sections, const std::string& prefix);

  /// This rank's view of a block's shard (tests).
  const ShardLayout& shards() const { return shards_; }
  /// Full working parameters of the chunk, gathered if sharded (collective for ZeRO-3; tests).
  std::vector<float> full_params_for_test();

 private:
  struct InFlight;  // one pending non-blocking reduction
  ChunkHooks make_hooks();
  void on_grads_ready(int block);
  float* grad_buffer(int block);
  const float* gather_params(int block, Pass pass);
  void release_params(int block, Pass pass);
  void issue_bucket();
  void issue_reduce_scatter(int block, const float* block_grads);
  void complete(InFlight& f);
  void complete_until(size_t max_pending);
  void refresh_working_params();
  void init_master();
  void add_to_bucket(const BlockShard& piece);
  Communicator& comm_of(const BlockShard& piece) { return piece.expert ? *edp_ : dp_; }

  Backend& backend_;
  Communicator& dp_;
  Communicator* edp_ = nullptr;  // expert pieces' group (expert parallelism), else null
  DataParallelOptions options_;
  std::unique_ptr<ModelChunk> model_;
  ShardLayout shards_;                         // pieces (one per block unless edp_)
  std::vector<std::vector<int>> pieces_;       // per block: its pieces in shards_.blocks

  Tensor master_;      // (P) ZeRO-0, else (S): fp32 master weights
  Tensor grad_shard_;  // (S) reduced gradient shard, ZeRO >= 1
  Tensor param_shard_; // (S) working parameter shard, ZeRO-3
  std::unique_ptr<AdamW> adamw_;

  // ZeRO-0 bucket being filled: flat range [bucket_lo_, bucket_hi_).
  int64_t bucket_lo_ = -1, bucket_hi_ = -1;
  std::vector<bool> issued_;                   // per block: reduction started this step
  std::deque<std::unique_ptr<InFlight>> in_flight_;
  std::vector<Tensor> live_grads_;             // ZeRO-2/3: per block, gradients being accumulated
  std::vector<Tensor> gathered_;               // ZeRO-3: per block, gathered parameters
};

}  // namespace meshplan::exec
