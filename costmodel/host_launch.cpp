// Host issue time of Megatron-Core's eager layers and the launch-bound floor (costmodel/host_launch.h).
#include "costmodel/host_launch.h"

#include <algorithm>

#include "core/cuda_graphs.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

// Tuned on the three `use: tuning` Qwen3-30B-A3B rows of validation/megatron-bridge-moe-h100.yaml (one layout,
// releases 26.04, 26.04.01, 26.06): the whole microsecond whose mean error there is nearest 0 (+1.0, +0.3,
// -0.5 %); every other run is held out.
const double kHostOpSeconds = 94e-6;
// PyTorch benchmarks/overrides_benchmark/README.md: "Overhead for torch functions when run on
// torch.Tensor objects is on the order of 2 us"; plus the cudaLaunchKernel call itself.
const double kHostLaunchSeconds = 3e-6;

namespace {

// Launches of one block, forward and backward, per micro-batch.
struct Ops {
  double forward = 0, backward = 0;
};

// The recipes' columns of the count table: 16-bit, TE delayed, current, MXFP8, blockwise.
enum Col { kBf16, kDelayed, kCurrent, kMx, kBlock };

Col column(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::Delayed: return kDelayed;
    case Fp8Recipe::Current: return kCurrent;
    case Fp8Recipe::Mxfp8: return kMx;
    case Fp8Recipe::Blockwise: return kBlock;
    default: return kBf16;  // none; torchao's rowwise is not a Megatron-Core recipe
  }
}

// Per layer, per micro-batch (costmodel/README.md "Host launch time" derives each entry). Attention
// (TELayerNormColumnParallelLinear QKV, q/k norms, fused RoPE, TEDotProductAttention, TERowParallelLinear,
// bias-dropout-add); FP8 adds the input quantization (current scaling: amax, scale, cast = 4 kernels; MXFP8
// 1 + 2 scale swizzles per GEMM; blockwise and delayed 1).
constexpr Ops kAttention[] = {{10, 17}, {12, 19}, {17, 25}, {16, 27}, {12, 19}};
// Dense MLP (TELayerNormMLP: norm, fc1, activation, fc2, bias-dropout-add).
constexpr Ops kDenseMlp[] = {{5, 8}, {7, 10}, {11, 16}, {11, 14}, {7, 10}};
// A shared expert: the dense MLP without its norm.
constexpr Ops kSharedExpert[] = {{4, 6}, {6, 8}, {10, 14}, {10, 12}, {6, 8}};
// MoE layer before the dispatcher's sync, with --moe-router-fusion and --moe-permute-fusion as the
// recipes set them: router (pre-MLP norm, router GEMM, fused top-k, fused aux loss and its tracker) and
// preprocess (token metadata, the TP x EP all-gather of counts, the fused first permutation).
constexpr Ops kRouter = {10, 10};
constexpr Ops kPreprocess = {10, 1};
// MoE layer after the sync, outside TE's per-expert loop: the dispatch and combine all-to-alls, the chunk
// sorts, GroupedLinear fc1/fc2 calls, the activation, the unpermutation, bias-dropout-add.
constexpr Ops kPostSync[] = {{10, 9}, {12, 11}, {10, 9}, {14, 17}, {10, 9}};
// Per local expert inside TE's GroupedLinear (C++ loop): one GEMM per expert and GroupedLinear call (fc1,
// fc2; backward dgrad + wgrad), plus per-expert quantization (current scaling 4 kernels, MXFP8 and
// blockwise 1; delayed scaling's multi_cast_transpose is one fused launch, counted in kPostSync).
constexpr Ops kPerExpert[] = {{2, 4}, {2, 4}, {10, 12}, {4, 6}, {4, 6}};
// Blockwise on Blackwell: GEMM inputs converted to MXFP8 tensor by tensor (TE gemm.cpp).
constexpr Ops kPerExpertBlockwiseBlackwell = {8, 14};
// MLA (q/kv down-projections, their norms, up-projections, the RoPE split): more launches than MHA.
constexpr Ops kMlaExtra = {6, 10};
// The combined 1F1B EP overlap's event waits and records: 5 schedule nodes x 2 calls, forward and backward.
constexpr Ops kOverlapEvents = {10, 10};
constexpr Ops kGraphReplay = {1, 1};

Ops scaled(Ops o, double by) { return {o.forward * by, o.backward * by}; }
Ops plus(Ops a, Ops b) { return {a.forward + b.forward, a.backward + b.backward}; }

}  // namespace

HostLaunchTimes host_launch_times(const Problem& p, const ParallelConfig& cfg) {
  HostLaunchTimes t;
  const FrameworkKnobs& k = p.job.knobs;
  if (!k.megatron_core_model_code) return t;
  const uint32_t g = k.cuda_graphs;
  if (g & kGraphFullIteration) return t;  // one replay per iteration
  const ModelSpec& m = p.model;
  const Col col = column(p.job.fp8);
  Ops attention = kAttention[col];
  if (m.mla.enabled()) attention = plus(attention, kMlaExtra);
  if (!m.qk_norm) attention = plus(attention, {-2, -4});  // no q/k norms (TENorm x 2)
  if (g & kGraphAttn) attention = kGraphReplay;
  const Ops dense_mlp = (g & kGraphMlp) ? kGraphReplay : kDenseMlp[col];
  const double r = moe_layer_fraction(m);
  // Ops (at kHostOpSeconds) and expert launches (at kHostLaunchSeconds) of the mean layer.
  Ops ops = plus(attention, scaled(dense_mlp, 1.0 - r));
  Ops launches;
  double post_sync_ops = 0, post_sync_launches = 0;
  if (r > 0.0) {
    const double local_experts = static_cast<double>(m.moe.num_experts) / std::max(1, cfg.ep);
    const bool blackwell = p.hardware.compute_capability >= 10.0;
    const Ops per_expert = col == kBlock && blackwell ? kPerExpertBlockwiseBlackwell : kPerExpert[col];
    Ops moe;
    if (g & kGraphMoe) {
      moe = kGraphReplay;  // the whole MoE layer, shapes static (drop-and-pad)
    } else {
      // The moe_router graph holds the router and the shared experts, moe_preprocess joins it.
      Ops front = kRouter;
      if (m.moe.num_shared_experts > 0) front = plus(front, kSharedExpert[col]);
      if (g & kGraphMoeRouter) front = kGraphReplay;
      if (!(g & kGraphMoePreprocess)) front = plus(front, kPreprocess);
      moe = plus(front, kPostSync[col]);
      launches = scaled(per_expert, r * local_experts);
      post_sync_ops = r * kPostSync[col].forward;
      post_sync_launches = launches.forward;
      if (k.moe_a2a_overlap) launches = plus(launches, scaled(kOverlapEvents, r));
    }
    ops = plus(ops, scaled(moe, r));
    // Dropless routing: the host reads the token counts before the dispatch (one blocking sync per MoE
    // layer, token_dispatcher.py _maybe_dtoh_and_synchronize; HybridEP's dispatch_preprocess; DeepEP's
    // spin-wait). The moe and full_iteration graphs run drop-and-pad: no sync.
    t.syncs = !graphs_need_drop_and_pad(p);
  }
  t.forward_s = ops.forward * kHostOpSeconds + launches.forward * kHostLaunchSeconds;
  t.backward_s = ops.backward * kHostOpSeconds + launches.backward * kHostLaunchSeconds;
  t.post_sync_s = post_sync_ops * kHostOpSeconds + post_sync_launches * kHostLaunchSeconds;
  // A full recompute issues the forward again inside the backward.
  if (cfg.recompute == Recompute::Full) t.backward_s += t.forward_s;
  return t;
}

void apply_host_launch_floor(const Problem& p, const ParallelConfig& cfg, LayerCompute& c, const LayerComm& comm) {
  const HostLaunchTimes h = host_launch_times(p, cfg);
  if (h.forward_s <= 0.0 && h.backward_s <= 0.0) return;
  const double gpu_forward = c.forward_s + comm.forward_s;
  const double gpu_backward = c.backward_input_s + c.backward_weight_s + c.recompute_s + comm.backward_s;
  // The GPU work after the sync: the experts and the dispatch + combine (comm.expert_s, one pass); costed
  // only where the sync is exposed (the planner's hot path).
  const double sync_wait = h.syncs && !p.job.knobs.moe_a2a_overlap
                               ? std::max(0.0, h.post_sync_s - (c.expert_forward_s + comm.expert_s))
                               : 0.0;
  const double forward_idle = std::max(gpu_forward + sync_wait, h.forward_s) - gpu_forward;
  const double backward_idle = std::max(0.0, h.backward_s - gpu_backward);
  c.forward_s += forward_idle;
  c.backward_input_s += backward_idle;
  c.host_wait_s += forward_idle + backward_idle;
}

}  // namespace meshplan
