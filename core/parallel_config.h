// ParallelConfig (tp/pp/dp/ZeRO/micro-batching/recompute/schedule), Job and Problem, with validation.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ac_policy.h"
#include "core/error.h"
#include "core/framework_knobs.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"

namespace meshplan {

enum class Recompute { None, Selective, Full };
/// Pipeline schedules. DualPipeV (DeepSeek's DualPipe cut in half, as torch.distributed.pipelining's
/// ScheduleDualPipeV runs it): two model chunks per rank placed in a V (core/pipeline_placement.h).
/// New values go at the end.
enum class ScheduleKind { GPipe, OneFOneB, Interleaved, ZeroBubbleH1, DualPipeV };

/// Bytes per parameter for weights + gradients + optimizer state (DESIGN.md "Conventions").
/// Default16: bf16 weights 2 + bf16 grads 2 + fp32 master, m, v 12.
/// Megatron: bf16 weights 2 + fp32 main grads 4 + fp32 master, m, v 12 = 18.
/// Fp32Grads: fp32 weights 4 + fp32 grads 4 + master, m, v 12 = 20.
enum class ParamConvention { Default16, Megatron, Fp32Grads };

/// The training framework a plan is for; core/framework.h says what each can run and its defaults.
enum class Framework { Meshplan, Megatron, DeepSpeed, Fsdp, Torchtitan, Nemo };

/// FP8 recipes of the linear layers; None = GEMMs in the job's dtype. Delayed, Current, Blockwise,
/// Mxfp8: Transformer Engine's. Rowwise: torchao's dynamic row-wise scaling (torchtitan's
/// float8 recipe "rowwise", costmodel/fp8_rowwise.h). New values go at the end.
enum class Fp8Recipe { None, Delayed, Current, Blockwise, Mxfp8, Rowwise };

/// Data-parallel gradient compression; None = full-precision reduction.
enum class GradCompression { None, PowerSgd, OneBitAdam, OneBitLamb, TopK };

/// How context-parallel ranks exchange K/V (Megatron-Core --cp-comm-type): P2p = ring attention,
/// AllGather = K/V all-gathered before attention, AllToAll = heads scattered (DeepSpeed Ulysses).
/// Context-parallel K/V exchange: Megatron-Core's cp_comm_type p2p | all_gather | a2a, and
/// TorchAllGather, PyTorch's experimental context_parallel with rotate_method "allgather" as torchtitan
/// runs it (costmodel/cp_torch_allgather.h). New values go at the end.
enum class CpComm { P2p, AllGather, AllToAll, TorchAllGather };

const char* to_string(Recompute r);
const char* to_string(ScheduleKind s);
const char* to_string(ParamConvention c);
std::optional<Recompute> parse_recompute(const std::string& s);
std::optional<ScheduleKind> parse_schedule(const std::string& s);
std::optional<ParamConvention> parse_param_convention(const std::string& s);

/// Bytes per parameter of each state kind under a convention.
struct ParamBytes {
  double weights = 2.0;    // the working copy the GEMMs read
  double gradients = 2.0;  // gradient buffer reduced across DP
  double optimizer = 12.0; // fp32 master + Adam m + v
};
ParamBytes param_bytes(ParamConvention c);

/// One way to lay the job out on the GPUs. DP is derived: gpus / (tp * cp * pp). Expert layers
/// re-fold the same GPUs as etp x ep x edp (Megatron-Core "MoE parallel folding").
struct ParallelConfig {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int ep = 1;                         // expert parallel: experts sharded over ep ranks (Megatron-Core EP)
  int etp = 1;                        // expert tensor parallel: TP width inside each expert (Megatron ETP)
  int cp = 1;                         // context parallel: each sequence split over cp ranks
  int zero_stage = 0;                 // 0..3
  int shard_group = 0;                // HSDP: DP ranks one ZeRO-1/2/3 shard spans, replicated over
                                      // dp/shard_group groups (0 = all dp ranks; core/hsdp_config.h)
  int64_t micro_batch_size = 1;       // sequences per micro-batch per DP rank
  int64_t num_micro_batches = 1;      // per DP rank per step (gradient accumulation)
  Recompute recompute = Recompute::None;
  bool sequence_parallel = false;     // only with tp > 1
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  int virtual_stages = 1;             // v: model chunks per pipeline rank (interleaved; dualpipev: 2)
  bool dp_overlap = true;             // overlap DP gradient communication with backward
  std::vector<int> layers_per_stage;  // size pp (or pp*v chunks); empty = as even as possible
};

/// What the user wants trained, independent of how it is split.
struct Job {
  int64_t gpus = 0;
  int64_t global_batch = 0;           // sequences per optimizer step
  int64_t seq_len = 0;                // tokens per sequence
  std::string dtype = "bf16";         // compute dtype used to look up peak FLOP/s
  ParamConvention convention = ParamConvention::Default16;
  Framework framework = Framework::Meshplan;  // whose rules and conventions the plan follows
  bool allow_tp_across_nodes = false;
  FrameworkKnobs knobs;               // attention kernel, ZeRO-3/FSDP granularity and prefetch
  Fp8Recipe fp8 = Fp8Recipe::None;    // which GEMMs run in FP8 and what state that keeps
  GradCompression compression = GradCompression::None;
  int64_t powersgd_rank = 0;          // PowerSGD rank r (only with PowerSgd)
  double topk_fraction = 0.0;         // fraction of gradient entries sent (only with TopK)
  double moe_capacity_factor = 0.0;   // 0 = dropless (tokens never dropped); else capacity factor
  double moe_imbalance = 1.0;         // busiest expert's tokens / mean (1.0 = perfectly balanced)
  CpComm cp_comm = CpComm::P2p;       // added by issue 11 (CP): K/V exchange of context parallelism
  AcPolicy ac_policy;                 // how selective/full recompute is carried out (core/ac_policy.h)
};

struct Problem {
  ModelSpec model;
  HardwareProfile hardware;
  Job job;
};

/// Bytes per parameter of the job: its convention's weights and gradients, and the optimizer states its
/// framework keeps (FrameworkKnobs::optimizer_states: 12 when all fp32, e.g. 8 with bf16 Adam moments).
ParamBytes param_bytes(const Job& job);

/// Layers held by each of the pp*v model chunks (chunk c lives on pipeline rank c % pp).
/// Uses cfg.layers_per_stage when given; otherwise spreads L as evenly as possible, the extra
/// layers going to the middle chunks (the first and last also hold embedding and LM head).
std::vector<int> layers_per_chunk(const ModelSpec& m, const ParallelConfig& cfg);
/// True when `split` has `chunks` entries summing to `layers`, each positive except the first and the last,
/// which may be 0 (a chunk holding only the embedding, or only the final norm, LM head and loss:
/// Megatron's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split).
bool layer_split_ok(const std::vector<int>& split, int64_t chunks, int64_t layers);

/// Every reason this configuration cannot run this job (empty = valid). Does not check memory.
/// `where` names the origin of the config for messages, e.g. "command line" or a plan file.
ErrorList validate_config(const Problem& p, const ParallelConfig& cfg, const std::string& where);

/// Checks the job alone (positive GPUs, batch, sequence length).
ErrorList validate_job(const Job& job, const std::string& where);

}  // namespace meshplan
