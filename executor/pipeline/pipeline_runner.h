// PipelineRunner: executes one pipeline rank's action list of a planner::Schedule (GPipe, 1F1B,
// interleaved, ZB-H1, DualPipeV) for one training step: F/B on the local model chunks, activations and
// their gradients exchanged with the neighbouring pipeline ranks by point-to-point messages (and, at a
// V-shaped schedule's turn, handed from one local chunk to the other in memory).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "core/pipeline_placement.h"
#include "executor/backend.h"
#include "executor/comm.h"
#include "executor/parallel/data_parallel.h"
#include "planner/schedule.h"

namespace meshplan::exec {

/// Fills inputs (B, T) and targets (B, T) of micro-batch `mb` of the current step (host memory).
using MicroBatchLoader = std::function<void(int mb, int32_t* inputs, int32_t* targets)>;

/// Semantics (planner/schedule.h): actions run in list order; SF/SB are non-blocking sends whose
/// buffers stay alive until completed; RF/RB block until the data has arrived. W actions are
/// no-ops here: B computes weight gradients too (ModelChunk has no split backward), which keeps the
/// result exact and only changes timing. R starts the chunk's remaining DP reductions.
/// Message tags: (mb * model_chunks + receiving model chunk) * 2 + (0 activations | 1 gradients),
/// so every message of a step has its own tag.
class PipelineRunner {
 public:
  /// chunks[c] is local chunk c (model chunk placed_chunk(kind, pp, pp_rank, c)). loss_scale: dL/d(mean loss of
  /// one micro-batch), 1 / (M * dp) for a mean over the global batch.
  PipelineRunner(Backend& backend, Communicator& pp, const Schedule& schedule, int pp_rank,
                 std::vector<DataParallelChunk*> chunks, float loss_scale);

  /// Runs every action of this rank for one step (except O). Returns the sum of the micro-batch
  /// losses this rank computed (last model chunk only; 0 elsewhere).
  double run_step(const MicroBatchLoader& load);

 private:
  using Key = std::pair<int, int>;  // (micro-batch, local chunk)
  int model_chunk(int local) const { return placed_chunk(schedule_.kind, pp_size_, pp_rank_, local); }
  /// The local chunk holding model chunk g, or -1 when another rank holds it.
  int local_of(int g) const;
  int tag(int mb, int receiving_model_chunk, int kind) const;
  const std::vector<int32_t>& tokens(int mb, bool targets, const MicroBatchLoader& load);
  void forward(const Action& a, const MicroBatchLoader& load, double& loss_sum);
  void backward(const Action& a);
  void receive(const Action& a, std::map<Key, Tensor>& into, int kind);
  void release_completed_sends();

  Backend& backend_;
  Communicator& pp_;
  const Schedule& schedule_;
  int pp_rank_;
  int pp_size_;
  int model_chunks_;
  std::vector<DataParallelChunk*> chunks_;
  float loss_scale_;
  std::vector<int> last_backward_mb_;  // per local chunk: micro-batch of its last B this step

  std::map<int, std::pair<std::vector<int32_t>, std::vector<int32_t>>> batches_;  // mb -> (in, tgt)
  std::map<Key, Tensor> recv_activations_;
  std::map<Key, Tensor> recv_gradients_;
  std::map<Key, const float*> outputs_;          // forward outputs awaiting their send
  std::map<Key, CommRequest> output_sends_;      // in flight until the same micro-batch's B
  std::map<Key, Tensor> grad_inputs_;            // backward results awaiting their send
  std::vector<std::pair<CommRequest, Tensor>> gradient_sends_;
};

}  // namespace meshplan::exec
