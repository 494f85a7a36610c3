// estimate_step / step_costs: assembles per-stage costs into one step (costmodel/README.md "Step time").
#include "costmodel/step.h"

#include <algorithm>

#include "core/megatron_overlap.h"
#include "core/pipeline_placement.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activation_offload.h"
#include "costmodel/activations.h"
#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/ddp_edge_bucket.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/flops.h"
#include "costmodel/fp8_params.h"
#include "costmodel/fsdp2_copies.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/grad_accumulation.h"
#include "costmodel/grad_compression.h"
#include "costmodel/host_launch.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/moe_a2a_overlap.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"
#include "costmodel/mtp.h"
#include "costmodel/pipeline.h"
#include "costmodel/zero_comm.h"

namespace meshplan {

const char* to_string(Bottleneck b) {
  switch (b) {
    case Bottleneck::Compute: return "compute";
    case Bottleneck::TpComm: return "tp_comm";
    case Bottleneck::PpBubble: return "pp_bubble";
    case Bottleneck::PpComm: return "pp_comm";
    case Bottleneck::DpComm: return "dp_comm";
    case Bottleneck::Optimizer: return "optimizer";
    case Bottleneck::Memory: return "memory";
    case Bottleneck::Host: return "host";
  }
  return "?";
}

namespace {
// Everything that does not depend on the stage, computed once per configuration.
struct LayerCosts {
  LayerCompute compute;
  LayerComm comm;
  EndsCompute ends;
  double recomputed_share = 0;  // layers whose forward (and MoE all-to-all) reruns in backward
  OffloadTime offload;          // activation offloading's exposed copies, whole model (pp = 1 only)
  int mtp_layers = 0;           // MTP modules on the last chunk: that many more layers, plus mtp
  MtpTimes mtp;                 // their work outside the layers (costmodel/mtp.h)
};

LayerCosts layer_costs(const Problem& p, const ParallelConfig& cfg) {
  LayerCosts lc;
  lc.compute = layer_compute(p, cfg);
  lc.comm = layer_tp_comm(p, cfg, lc.compute);
  add_expert_comm(p, cfg, lc.comm);  // MoE dispatch/combine all-to-all (costmodel/moe_cost.h)
  hide_expert_comm(p, cfg, lc.compute, lc.comm);  // combined 1F1B EP overlap (costmodel/moe_a2a_overlap.h)
  // Megatron-Core's eager layers: the GPU waits where the host issues slower (costmodel/host_launch.h).
  apply_host_launch_floor(p, cfg, lc.compute, lc.comm);
  lc.ends = ends_compute(p, cfg);
  lc.mtp_layers = static_cast<int>(p.model.mtp_layers);
  lc.mtp = mtp_times(p, cfg, lc.ends);
  lc.recomputed_share = recomputed_layer_share(p.job.ac_policy, cfg.recompute);  // costmodel/ac_policy.h
  // Megatron-Core offloads only without PP (core/offload_config.h); off in the planner's hot path otherwise.
  if (p.job.knobs.activation_offload_layers > 0 && cfg.pp == 1 && std::max(1, cfg.virtual_stages) == 1) {
    const LayerCompute& c = lc.compute;
    lc.offload = offload_exposed(p, layer_activation_bytes_for(p, cfg), p.model.num_layers,
                                 c.forward_s + lc.comm.forward_s,
                                 c.backward_input_s + c.backward_weight_s + lc.comm.backward_s);
  }
  return lc;
}

// One chunk, one micro-batch; the same numbers feed StageTimes and ChunkCosts.
ChunkCosts chunk_times(const LayerCosts& lc, int main_layers, bool first, bool last) {
  const LayerCompute& c = lc.compute;
  const LayerComm& m = lc.comm;
  const EndsCompute& e = lc.ends;
  // The last chunk's MTP modules: one more transformer layer each (costed as the model's mean layer),
  // and their projection, norms and second LM-head pass (costmodel/mtp.h).
  const int layers = main_layers + (last ? lc.mtp_layers : 0);
  const MtpTimes mtp = last ? lc.mtp : MtpTimes{};
  ChunkCosts k;
  k.layers = layers;
  k.has_embedding = first;
  k.has_lm_head = last;
  k.tp_comm_forward_s = layers * m.forward_s + (last ? e.head_tp_comm_forward_s : 0.0) + mtp.tp_comm_forward_s;
  k.tp_comm_backward_s = layers * (m.backward_s + m.recompute_s) + (last ? e.head_tp_comm_backward_s : 0.0) +
                         mtp.tp_comm_backward_s;
  k.forward_s = layers * c.forward_s + (first ? e.embedding_forward_s : 0.0) +
                (last ? e.head_forward_s : 0.0) + k.tp_comm_forward_s + lc.offload.forward_s +
                (mtp.forward_s - mtp.tp_comm_forward_s);
  // Hidden TP collectives slow the dW GEMMs they run under (kOverlapComputeSlowdown).
  k.backward_input_s = layers * (c.backward_input_s + c.recompute_s + kOverlapComputeSlowdown * m.hidden_s) +
                       (first ? e.embedding_backward_s : 0.0) + (last ? e.head_backward_input_s : 0.0) +
                       k.tp_comm_backward_s + lc.offload.backward_s + (mtp.backward_input_s - mtp.tp_comm_backward_s);
  k.backward_weight_s = layers * c.backward_weight_s + (last ? e.head_backward_weight_s : 0.0) + mtp.backward_weight_s;
  k.ep_comm_forward_s = layers * m.expert_s;
  // The dispatch/combine repeats in the recomputed forward of the checkpointed layers only.
  k.ep_comm_backward_s = layers * m.expert_s * (1.0 + lc.recomputed_share);
  return k;
}

StageTimes stage_times_from(const Problem& p, const ParallelConfig& cfg, const LayerCosts& lc, int stage) {
  const int v = std::max(1, cfg.virtual_stages);
  const int last = cfg.pp * v - 1;
  StageTimes st;
  for (int k = 0; k < v; ++k) {
    const int chunk = placed_chunk(cfg, stage, k);
    const ChunkCosts c = chunk_times(lc, chunk_layers(p.model, cfg, chunk), chunk == 0, chunk == last);
    const double comm = c.tp_comm_forward_s + c.tp_comm_backward_s;
    // DeepSpeed BF16_Optimizer's fp32 accumulation follows each backward (costmodel/grad_accumulation.h).
    const double accumulate = grad_accumulation_pass_s(p, cfg, chunk);
    st.forward_s += c.forward_s;
    st.backward_s += c.backward_input_s + c.backward_weight_s + accumulate;
    st.backward_weight_s += c.backward_weight_s + accumulate;
    st.tp_comm_s += comm;
    st.compute_s += c.forward_s + c.backward_input_s + c.backward_weight_s + accumulate - comm;
    st.host_wait_s += c.layers * lc.compute.host_wait_s;
  }
  return st;
}

// Time a stage contributes to the pipeline fill/drain (per micro-batch, in its units).
double bubble_unit(ScheduleKind s, const StageTimes& st) {
  if (s == ScheduleKind::ZeroBubbleH1)  // Qi et al. 2023: (P-1)(T_F + T_B - T_W), T_B input grads only
    return std::max(0.0, st.forward_s + st.backward_s - 2.0 * st.backward_weight_s);
  // DualPipeV (torch.distributed.pipelining ScheduleDualPipeV's order, two chunks of F, B, W per rank):
  // P-1 chunk units of max(F, F + B - W), B the input gradient; the simulator measures this exactly for
  // equal units (tests/simulator), and longer for B > F on deep pipelines (costmodel/README.md).
  if (s == ScheduleKind::DualPipeV) {
    const double input_grad = st.backward_s - st.backward_weight_s;
    return std::max(st.forward_s, st.forward_s + input_grad - st.backward_weight_s) / 2.0;
  }
  return st.total();
}
}  // namespace

double tied_embedding_sync_s(const Problem& p, const ParallelConfig& cfg) {
  if ((!p.model.tie_word_embeddings && p.model.mtp_layers <= 0) || cfg.pp <= 1) return 0.0;
  if (v_shaped(cfg.schedule)) return 0.0;  // embedding and LM head (and MTP's copy) both on rank 0
  // Megatron keeps the tied word embedding on the first and the last stage and all-reduces its
  // gradient (V*h/t values per GPU) between the two once per step; so it does for the copy of the
  // embedding the MTP stage builds (costmodel/mtp.h), one all-reduce for both.
  const double bytes = static_cast<double>(p.model.vocab_size) * static_cast<double>(p.model.hidden_size) /
                       cfg.tp * param_bytes(p.job).gradients;
  GroupPlacement ends;
  ends.size = 2;
  ends.per_node = 1;
  ends.nodes = place_group(p.hardware, cfg.pp, pp_group_stride(cfg)).spans_nodes() ? 2 : 1;
  if (ends.nodes == 1) ends.per_node = 2;
  return all_reduce_s(p.hardware, ends, bytes);
}

StageTimes stage_times(const Problem& p, const ParallelConfig& cfg, int stage) {
  return stage_times_from(p, cfg, layer_costs(p, cfg), stage);
}

namespace {
// A ZeRO-2/3 collective over one stage's parameters, issued layer by layer (DeepSpeed buckets,
// FSDP units): the latency term is paid once per layer, the bandwidth term once for all bytes.
double per_layer_collective_s(const Problem& p, const ParallelConfig& cfg, int stage, const GroupPlacement& g,
                              double bytes_per_param, bool gather) {
  const double layer_params = layer_parameters_per_gpu(p.model, cfg.tp);
  const int layers = stage_layers(p.model, cfg, stage);
  const double ends = stage_parameters_per_gpu(p.model, cfg, stage) - layers * layer_params;
  if (gather) return layers * all_gather_s(p.hardware, g, layer_params * bytes_per_param) +
                    all_gather_s(p.hardware, g, ends * bytes_per_param);
  // HSDP: each layer's reduced shard is then all-reduced across the replicas (costmodel/hsdp.h).
  const HsdpPassReduce r =
      hsdp_pass_reduce(p.hardware, cfg, g, layers, layer_params * bytes_per_param, ends * bytes_per_param);
  return layers * r.layer_s + r.ends_s;
}
}  // namespace

// ZeRO-0 all-reduces the gradients; so does ZeRO-1 under DeepSpeed's BF16_Optimizer
// (FrameworkKnobs::dp_all_reduce). ZeRO-1/2/3 otherwise reduce-scatter them.
static bool dp_reduce_all_reduce(const Problem& p, const ParallelConfig& cfg) {
  return cfg.zero_stage == 0 || (cfg.zero_stage == 1 && p.job.knobs.dp_all_reduce);
}

static DpComm dense_dp_comm(const Problem& p, const ParallelConfig& cfg, int stage, const StageTimes& st) {
  DpComm out;
  if (grad_group_size(cfg) <= 1) return out;
  const HardwareProfile& hw = p.hardware;
  // dp * cp ranks (costmodel/context_parallel.h); under HSDP (ZeRO 2/3 only) one shard group of them,
  // its replicas joined by hsdp_unit_reduce (costmodel/hsdp.h).
  const GroupPlacement g = zero_shard_group(hw, cfg);
  const double params = stage_parameters_per_gpu(p.model, cfg, stage);
  const double reduce_bytes = grad_reduce_bytes_per_param(p);  // on the wire (dp_reduce_bytes)
  const double M = static_cast<double>(cfg.num_micro_batches);
  const bool overlap = cfg.dp_overlap;
  if (cfg.zero_stage <= 1) {
    // Gradients accumulate locally over the M micro-batches and are reduced once, behind the last
    // backward: ZeRO-0 all-reduces them (or a compressed reduction, costmodel/grad_compression.h),
    // ZeRO-1 reduce-scatters them (all-reduces under dp_all_reduce) and all-gathers the updated
    // 16-bit weights after the optimizer (not overlapped).
    // HSDP at ZeRO-1 (Megatron's partial distributed optimizer) all-reduces the reduced shard across
    // the instances after the reduce-scatter, on the same stream (costmodel/hsdp.h).
    const double reduce = p.job.compression != GradCompression::None
                              ? compressed_reduction(p, cfg, stage, g).total_s
                              : dp_reduce_all_reduce(p, cfg)
                                    ? all_reduce_s(hw, g, params * reduce_bytes)
                                    : hsdp_serial_reduce_s(hw, cfg, reduce_scatter_s(hw, g, params * reduce_bytes),
                                                           params * reduce_bytes);
    // FP8 primary weights gather their FP8 data (costmodel/fp8_params.h).
    const double gather_bytes = param_gather_bytes(p, cfg, params, stage_layers(p.model, cfg, stage));
    const double after = cfg.zero_stage == 1 ? all_gather_s(hw, g, gather_bytes) : 0.0;
    out.total_s = reduce + after;
    // --overlap-param-gather: the gather runs under the next step's first forward (core/megatron_overlap.h).
    // The embedding's bucket group is reduced after the last backward and gathered before the first
    // forward on the first stage, with nothing left to hide behind (costmodel/ddp_edge_bucket.h).
    const EdgeExposure edge = stage == first_chunk_rank(cfg) ? edge_bucket_exposure(p, cfg, g) : EdgeExposure{};
    const double after_exposed =
        param_gather_overlap_on(p.job, cfg) ? std::max(edge.gather_s, after - st.forward_s) : after;
    out.exposed_s = (overlap ? std::max(edge.reduce_s, reduce - st.backward_s) : reduce) + after_exposed;
    return out;
  }
  // FSDP2 under a pipeline schedule (torchtitan): one gather and one reduce-scatter per step
  // (costmodel/fsdp2_pipeline.h), plus FSDP2's copies on the compute stream.
  if (pipeline_keeps_unsharded(p, cfg)) {
    out = pipeline_unsharded_dp_comm(p, cfg, stage, st);
    const Fsdp2CopyTimes copies = fsdp2_copy_times(p, cfg);
    const double copies_s = M * stage_layers(p.model, cfg, stage) * (copies.forward_s + copies.backward_s);
    out.total_s += copies_s;
    out.exposed_s += copies_s;
    return out;
  }
  // ZeRO-2/3 keep only a gradient shard, so every micro-batch's gradients are reduce-scattered
  // during its own backward (Rajbhandari et al. 2020, sec. 5.2).
  const double rs = per_layer_collective_s(p, cfg, stage, g, reduce_bytes, false);
  if (cfg.zero_stage == 2) {
    const double after = all_gather_s(hw, g, param_gather_bytes(p, cfg, params, stage_layers(p.model, cfg, stage)));
    out.total_s = M * rs + after;
    out.exposed_s = (overlap ? M * std::max(0.0, rs - st.backward_s) : M * rs) + after;
    return out;
  }
  // ZeRO-3: the weights are gathered before every forward and backward of every micro-batch, at the
  // framework's granularity, prefetched behind the previous layer (costmodel/zero_comm.h).
  const ShardedCollectives sc = sharded_collectives(p, cfg, stage, g);
  const ShardingKnobs& knobs = p.job.knobs.sharding;
  const double refetch = zero3_refetch_share(p, cfg);  // DeepSpeed re-fetches for recomputed layers
  const double layers = std::max(1, sc.layers);
  // FSDP2 packs and unpacks every gather and reduce-scatter on the compute stream (costmodel/
  // fsdp2_copies.h): serialized with the compute, so exposed, and counted with the ZeRO traffic it
  // serves (the planner's time bound keeps ZeRO-dependent terms out of the compute). Being compute-
  // stream work, a layer's copies also cover the collectives of the all-gather and reduce-scatter
  // streams, as its GEMMs do (the simulator's layer pieces carry them too).
  const Fsdp2CopyTimes copies = fsdp2_copy_times(p, cfg);
  out.total_s = M * zero3_total_s(sc, refetch);
  out.exposed_s = overlap ? M * zero3_exposed_s(sc, st.forward_s / layers + copies.forward_s,
                                                st.backward_s / layers + copies.backward_s, refetch, knobs)
                          : out.total_s;
  const double copies_s = M * layers * (copies.forward_s + copies.backward_s);
  out.total_s += copies_s;
  out.exposed_s += copies_s;
  return out;
}

DpComm dp_comm(const Problem& p, const ParallelConfig& cfg, int stage, const StageTimes& st) {
  DpComm out = dense_dp_comm(p, cfg, stage, st);
  add_expert_grad_sync(p, cfg, stage, st.backward_s, out.total_s, out.exposed_s);  // MoE experts over edp
  return out;
}

double optimizer_time_s(const Problem& p, const ParallelConfig& cfg, int stage) {
  const ParamBytes pb = param_bytes(p.job);
  const double local = stage_parameters_per_gpu(p.model, cfg, stage) / (cfg.zero_stage >= 1 ? zero_shard_size(cfg) : 1) +
                       stage_expert_static_bytes(p, cfg, stage).optimizer / pb.optimizer;
  // Adam reads the gradient and fp32 master/m/v, writes master/m/v and the 16-bit working weights;
  // the global-norm clipping reads the gradients once more and the next step's buffers are zeroed.
  if (!p.job.knobs.foreach_adamw) {
    // Megatron-Core zeroes its whole gradient buffer for the next step, not only the optimizer's shard
    // (DistributedDataParallel.zero_grad_buffer: grad_data.zero_() per buffer; distributed_data_parallel.py
    // l.554-576 at d3391901): the rest of the stage's gradient bytes are written once more.
    const double whole_buffer = p.job.knobs.megatron_core_model_code && cfg.zero_stage == 1
                                    ? (stage_parameters_per_gpu(p.model, cfg, stage) - local) * pb.gradients
                                    : 0.0;
    return memory_bound_time_s(p.hardware, local * (2.0 * pb.optimizer + 3.0 * pb.gradients + pb.weights) +
                                               std::max(0.0, whole_buffer));
  }
  // PyTorch's foreach AdamW (torch/optim/adamw.py _multi_tensor_adamw, torch 2.5-2.6) on fp32 params,
  // grads, m and v, one kernel per op: weight decay p *= (1 - lr wd) 8, m.lerp_(g) 12, v *= b2 8,
  // v.addcmul_(g, g) 12, sqrt(v) 8, / bias correction 8, + eps 8, p.addcdiv_(m, denom) 16 = 80 bytes per
  // parameter; clip_grad_norm_ (foreach norm, then g *= coef) 4 + 8 = 12.
  return memory_bound_time_s(p.hardware, local * (80.0 + 12.0));
}

static Bottleneck largest_term(const TimeBreakdown& t) {
  Bottleneck b = Bottleneck::Compute;
  double best = t.compute_s - t.host_wait_s;  // the GPU's own work
  auto consider = [&](double v, Bottleneck k) {
    if (v > best) { best = v; b = k; }
  };
  consider(t.host_wait_s, Bottleneck::Host);
  consider(t.tp_comm_s, Bottleneck::TpComm);
  consider(t.pp_bubble_s, Bottleneck::PpBubble);
  consider(t.pp_comm_s, Bottleneck::PpComm);
  consider(t.dp_comm_s, Bottleneck::DpComm);
  consider(t.optimizer_s, Bottleneck::Optimizer);
  return b;
}

// Tokens/s, executed TFLOP/s per GPU, MFU (model FLOPs) and HFU (with recompute) of a step of `step_s`.
static Throughput step_throughput(const Problem& p, const ParallelConfig& cfg, double step_s) {
  const double sequences = static_cast<double>(p.job.global_batch);
  const double seq = static_cast<double>(p.job.seq_len);
  const StepFlops f = policy_step_flops(p, cfg.recompute, sequences, seq);  // costmodel/ac_policy.h
  const double gpus = static_cast<double>(p.job.gpus);
  const double peak = job_peak_flops(p);
  Throughput th;
  th.tokens_per_s = sequences * seq / step_s;
  th.tflops_per_gpu = f.hardware / (step_s * gpus) / 1e12;
  th.mfu = f.model / (step_s * gpus * peak);
  th.hfu = f.hardware / (step_s * gpus * peak);
  return th;
}

StepEstimate estimate_step(const Problem& p, const ParallelConfig& cfg) {
  StepEstimate est;
  est.config = cfg;
  est.memory = estimate_memory(p, cfg);
  est.usable_memory_bytes = p.hardware.usable_memory_bytes();
  est.fits = est.memory.peak_bytes <= est.usable_memory_bytes;

  const LayerCosts lc = layer_costs(p, cfg);
  const double M = static_cast<double>(cfg.num_micro_batches);
  const int v = std::max(1, cfg.virtual_stages);
  // Stage costs depend only on (layers, holds embedding, holds head): a few classes, memoised in a
  // fixed array so the loop over P stages stays cheap and allocation-free.
  struct StageClass {
    int layers = -1;
    bool first = false, last = false;
    StageTimes st;
    double unit = 0, dp_exposed = 0, dp_hidden = 0, optimizer = 0;
  };
  StageClass classes[8];
  int n_classes = 0;
  StageClass worst;
  int worst_stage = 0;
  double unit_sum = 0.0, total_sum = 0.0, dp_exposed = 0.0, dp_hidden = 0.0, optimizer = 0.0;
  for (int stage = 0; stage < cfg.pp; ++stage) {
    const int layers = stage_layers(p.model, cfg, stage);
    const bool first = stage == first_chunk_rank(cfg), last = stage == last_chunk_rank(cfg);
    const StageClass* found = nullptr;
    for (int i = 0; i < n_classes; ++i)
      if (classes[i].layers == layers && classes[i].first == first && classes[i].last == last) found = &classes[i];
    StageClass computed;
    if (!found) {
      computed.layers = layers;
      computed.first = first;
      computed.last = last;
      computed.st = stage_times_from(p, cfg, lc, stage);
      computed.unit = bubble_unit(cfg.schedule, computed.st);
      const DpComm dp = dp_comm(p, cfg, stage, computed.st);
      computed.dp_exposed = dp.exposed_s;
      computed.dp_hidden = dp.total_s - dp.exposed_s;
      computed.optimizer = optimizer_time_s(p, cfg, stage);
      if (n_classes < 8) classes[n_classes++] = computed;
      found = &computed;
    }
    const StageClass& c = *found;
    unit_sum += c.unit;
    total_sum += c.st.total();
    if (stage == 0 || c.st.total() > worst.st.total()) {
      worst = c;
      worst_stage = stage;
    }
    dp_exposed = std::max(dp_exposed, c.dp_exposed);
    dp_hidden = std::max(dp_hidden, c.dp_hidden);
    optimizer = std::max(optimizer, c.optimizer);
  }
  const double worst_unit = worst.unit;
  TimeBreakdown& t = est.time;
  // DP/ZeRO communication hidden behind backward slows that backward (kOverlapComputeSlowdown).
  t.compute_s = M * worst.st.compute_s + kOverlapComputeSlowdown * dp_hidden;
  t.tp_comm_s = M * worst.st.tp_comm_s;
  t.host_wait_s = M * worst.st.host_wait_s;
  // Fill and drain: every other stage's per-micro-batch time once (Narayanan et al. 2021: (P-1)
  // stage times for equal stages), divided by v for the interleaved schedule.
  t.pp_bubble_s = (unit_sum - worst_unit) / (cfg.schedule == ScheduleKind::Interleaved ? v : 1);
  if (v_shaped(cfg.schedule) && worst_stage == 0 && cfg.pp > 1) {
    // DualPipeV's rank 0 (embedding and LM head) starts on 2(P-1) forwards of its first chunk and ends on
    // weight gradients: when it is the slowest rank, its extra work per micro-batch fills its fill/drain
    // idle, which is gone at a few percent more work (the simulator's DualPipeV tests measure this).
    const double extra = M * (worst.st.total() - (total_sum - worst.st.total()) / (cfg.pp - 1));
    t.pp_bubble_s = std::max(0.0, t.pp_bubble_s - extra);
  }
  if (cfg.pp > 1) {
    const GroupPlacement g = place_group(p.hardware, cfg.pp, pp_group_stride(cfg));
    const double hop = p2p_s(p.hardware, g, p2p_activation_bytes(p, cfg)) +
                       all_gather_s(p.hardware, place_group(p.hardware, cfg.tp, 1), p2p_gather_bytes(p, cfg));
    // Each chunk-micro-batch receives an activation and a gradient; fill and drain add P-1 hops each.
    // DualPipeV runs each transfer under its other chunk's compute (DualPipe's point): fill and drain only.
    const double hops = v_shaped(cfg.schedule) ? cfg.pp - 1.0 : v * M + cfg.pp - 1.0;
    t.pp_comm_s = 2.0 * hops * hop + tied_embedding_sync_s(p, cfg);
  }
  t.dp_comm_s = dp_exposed;
  t.optimizer_s = optimizer;
  t.step_s = t.compute_s + t.tp_comm_s + t.pp_bubble_s + t.pp_comm_s + t.dp_comm_s + t.optimizer_s;
  est.throughput = step_throughput(p, cfg, t.step_s);
  est.bottleneck = est.fits ? largest_term(t) : Bottleneck::Memory;
  return est;
}

StepCosts step_costs(const Problem& p, const ParallelConfig& cfg) {
  const LayerCosts lc = layer_costs(p, cfg);
  const HardwareProfile& hw = p.hardware;
  const ParamBytes pb = param_bytes(p.job);
  const GroupPlacement dp_group = zero_shard_group(hw, cfg);  // grad_group but under HSDP (costmodel/hsdp.h)
  const int v = std::max(1, cfg.virtual_stages);
  const int chunks = cfg.pp * v;
  const double b = static_cast<double>(cfg.micro_batch_size);
  const double s = cp_local_seq(p, cfg);
  const double e = activation_element_bytes(p.job.dtype);
  StepCosts out;
  out.chunks.reserve(chunks);
  for (int c = 0; c < chunks; ++c) {
    ChunkCosts k = chunk_times(lc, chunk_layers(p.model, cfg, c), c == 0, c == chunks - 1);
    k.activation_bytes = offload_resident_layers(p, k.layers) * layer_activation_bytes_for(p, cfg);
    if (k.has_embedding) k.activation_bytes += embedding_activation_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel);
    if (k.has_lm_head)
      k.activation_bytes += head_activation_bytes(p.model, b, s, cfg.tp, cfg.sequence_parallel, e, p.job.knobs.loss_chunk_bytes) +
                            mtp_extra_activation_bytes(p, cfg);
    const double params = chunk_parameters_per_gpu(p.model, cfg, c);
    k.grad_bytes = params * grad_reduce_bytes_per_param(p);
    k.backward_weight_s += grad_accumulation_pass_s(p, cfg, c);  // as stage_times_from
    k.dp_reduce_s = dp_reduce_all_reduce(p, cfg) ? all_reduce_s(hw, dp_group, k.grad_bytes)
                                                 : reduce_scatter_s(hw, dp_group, k.grad_bytes);
    if (p.job.compression != GradCompression::None) {
      // The stage's compressed reduction, shared among its chunks by parameters.
      const int stage = c % cfg.pp;
      k.dp_reduce_s = compressed_reduction(p, cfg, stage, dp_group).total_s * params /
                      stage_parameters_per_gpu(p.model, cfg, stage);
    }
    // HSDP: the chunk's layers all-reduce their shards across the replicas behind their reduce-scatters
    // (costmodel/hsdp.h); at chunk level L units of max(rs, ar) and one drain make max + min / L.
    // ZeRO-1 (Megatron): reduce-scatter, then the instances' all-reduce on the same stream.
    if (cfg.zero_stage <= 1) {
      if (!dp_reduce_all_reduce(p, cfg)) k.dp_reduce_s = hsdp_serial_reduce_s(hw, cfg, k.dp_reduce_s, k.grad_bytes);
    } else {
      const HsdpReduce hr = hsdp_unit_reduce(hw, cfg, k.dp_reduce_s, k.grad_bytes);
      k.dp_reduce_s = hr.per_unit_s + hr.drain_s / std::max(1, k.layers);
    }
    k.grad_bytes += expert_chunk_grad_bytes(p, cfg, c);  // MoE: reduced over the expert-data group
    k.dp_reduce_s += expert_chunk_reduce_s(p, cfg, c);
    k.gather_once = pipeline_keeps_unsharded(p, cfg);  // FSDP2 under a pipeline, ZeRO 2 or 3
    k.zero3_gather_s = cfg.zero_stage >= 3 || k.gather_once ? all_gather_s(hw, dp_group, params * pb.weights) : 0.0;
    k.zero3_gather_s += k.layers * expert_layer_collectives(p, cfg).gather_s;  // ZeRO-3 with EP: costmodel/expert_fsdp.h
    k.zero3_refetch_share = cfg.zero_stage >= 3 ? zero3_refetch_share(p, cfg) : 0.0;
    // FSDP2's copies run on the compute stream (the closed form counts them with the ZeRO traffic).
    const Fsdp2CopyTimes copies = fsdp2_copy_times(p, cfg);
    k.forward_s += k.layers * copies.forward_s;
    k.backward_input_s += k.layers * copies.backward_s;
    out.chunks.push_back(k);
  }
  out.p2p_bytes = cfg.pp > 1 ? p2p_activation_bytes(p, cfg) : 0.0;
  if (cfg.pp > 1)
    out.p2p_s = p2p_s(hw, place_group(hw, cfg.pp, pp_group_stride(cfg)), out.p2p_bytes) +
                all_gather_s(hw, place_group(hw, cfg.tp, 1), p2p_gather_bytes(p, cfg));
  for (int stage = 0; stage < cfg.pp; ++stage) {
    out.optimizer_s = std::max(out.optimizer_s, optimizer_time_s(p, cfg, stage));
    const MemoryBreakdown mb = stage_memory(p, cfg, stage);
    out.static_bytes_per_stage_max = std::max(
        out.static_bytes_per_stage_max, mb.weights_bytes + mb.gradients_bytes + mb.optimizer_bytes + mb.other_bytes);
  }
  return out;
}

}  // namespace meshplan
