// Compressed data-parallel gradient reduction: PowerSGD rank r, 1-bit Adam / 1-bit LAMB, top-k:
// bytes sent, communication and compression time, and the uncompressed warm-up steps.
#pragma once
#include <cstdint>

#include "core/parallel_config.h"
#include "costmodel/collectives.h"

namespace meshplan {

/// One step's gradient reduction of pipeline rank `stage` on one GPU under Job::compression
/// (ZeRO 0 only, core/job_features.h). N = the stage's parameters per GPU, split into its weight
/// matrices (n x m, TP-local: QKV, out-projection, MLP up, MLP down per layer; embedding and LM
/// head) and vectors (norms, biases), g = gradient bytes per element (ParamBytes::gradients).
/// - PowerSGD rank r (Vogels et al. 2019; PyTorch ddp_comm_hooks.powerSGD_hook): per matrix
///   P = M Q (n x r) and Q = M^T P (m x r) are all-reduced, vectors all-reduced uncompressed:
///   all-reduce of g * sum r(n + m) bytes in two rounds (P, then Q) plus the vectors. Compute: the
///   three skinny GEMMs against M and the error-feedback update are memory bound at r << n, m:
///   7 g n m bytes (3 reads of M, read error, add, write error and gradient). Warm-up: vanilla
///   all-reduce for start_powerSGD_iter = 1000 steps (PowerSGDState default).
/// - 1-bit Adam / 1-bit LAMB (Tang et al. 2021, Li et al. 2021; DeepSpeed onebit/adam.py, lamb.py):
///   after freeze_step = 100000 uncompressed steps (the optimizers' default) the momentum is
///   compressed to 1 bit per element plus a scale and reduced by DeepSpeed's compressed_allreduce:
///   an all-to-all of N/8 bytes to the "servers" then an all-gather of N/8 bytes. Compute: worker
///   and server compression with error feedback, fp32: 20 bytes per element through HBM.
///   1-bit LAMB also all-reduces one fp32 scaling coefficient per tensor (latency only).
/// - top-k, fraction F (Aji & Heafield 2017; Lin et al. 2018, Deep Gradient Compression): k = F N
///   values (g bytes) and int32 indices are all-gathered (sparse sets cannot be summed in place):
///   all-gather of dp * k (g + 4) bytes. Compute: error feedback and selection, 4 passes of fp32
///   over N (16 N bytes), plus scattering the dp*k received entries. No warm-up (0).
struct CompressedReduction {
  double bytes_sent = 0;       // bytes this GPU puts on the wire per step (steady state)
  double uncompressed_bytes = 0;  // the plain reduction's buffer size, for comparison
  double comm_s = 0;
  double compute_s = 0;        // compression, decompression and error feedback kernels
  double total_s = 0;          // comm_s + compute_s
  int64_t warmup_steps = 0;    // steps reduced uncompressed before compression starts
};

CompressedReduction compressed_reduction(const Problem& p, const ParallelConfig& cfg, int stage,
                                         const GroupPlacement& g);

/// The uncompressed warm-up defaults cited above.
constexpr int64_t kPowerSgdStartIter = 1000;
constexpr int64_t kOneBitFreezeStep = 100000;

}  // namespace meshplan
