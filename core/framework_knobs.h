// Framework knobs of a job: attention kernel kind and ZeRO-3/FSDP collective granularity and prefetch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/moe_dispatcher.h"
#include "core/optimizer_states.h"

namespace meshplan {

/// How the attention core (softmax(Q K^T / sqrt(d)) V) runs.
/// Fused: FlashAttention 2/3, cuDNN SDPA, Transformer Engine: the s x s scores never reach HBM;
///   forward keeps the output and one fp32 log-sum-exp per row and head, backward recomputes Q K^T
///   and the softmax (Dao 2023, arXiv:2307.08691, Algorithm 2); causal blocks above the diagonal
///   are skipped. Materialized: Megatron-LM's 2021-2022 path (Korthikanti et al. 2022): scores,
///   softmax output and dropout mask are written to HBM and stashed.
enum class AttentionKind { Fused, Materialized };
const char* to_string(AttentionKind k);
std::optional<AttentionKind> parse_attention(const std::string& s);

/// When FSDP (torch.distributed.fsdp.FullyShardedDataParallel, "FSDP1") issues the all-gather of the
/// unit whose backward runs next (its `backward_prefetch` argument). The gathers are issued from the
/// module hooks, and the model takes a hook to run when the GPU reaches it: traces show FSDP's gathers
/// "not triggered until current layer's backward pass starts to compute" without prefetch
/// (pytorch/pytorch PR #69282, which added BACKWARD_PRE: "20% latency speed up") and forward gathers
/// that "do not overlap" without forward prefetch (facebookresearch/fairscale issue #623). Gathers
/// and reduce-scatters share one NCCL stream per process group (ProcessGroupNCCL::collective runs
/// every collective on ncclStreams_[key]), so they run in the order issued.
/// Pre (BACKWARD_PRE, PyTorch's default): the next unit's gather is issued as this unit's backward
///   starts and runs under it with this unit's neighbour's reduce-scatter.
/// Post (BACKWARD_POST, Composer's default: composer/distributed/dist_strategy.py
///   fsdp_config.setdefault('backward_prefetch', 'BACKWARD_POST'), v0.12-v0.21): issued in this unit's
///   post-backward hook, after its gradients, ahead of its own reduce-scatter (torch 2.1
///   _post_backward_hook calls _post_backward_reshard, which prefetches, before _reduce_grad): the
///   gather waits in the open, the reduce-scatter runs under the next unit's backward.
/// None: each unit gathers in its own pre-backward hook, queued behind the previous unit's
///   reduce-scatter: both exposed.
/// New values go at the end: plan files and tests name them by text.
enum class BackwardPrefetch { Pre, Post, None };
const char* to_string(BackwardPrefetch b);
/// "pre", "post", "none".
std::optional<BackwardPrefetch> parse_backward_prefetch(const std::string& s);

/// How ZeRO-3 / FSDP issues its parameter all-gathers and gradient reduce-scatters.
/// PerUnit: PyTorch FSDP, one all-gather and one reduce-scatter per wrapped unit (the usual
///   auto-wrap policy wraps each transformer block). Buckets: DeepSpeed ZeRO-3, per-parameter
///   fetches coalesced into buckets of at most `prefetch_bucket_elements` (gathers) and
///   `reduce_bucket_elements` (reduce-scatters); every weight matrix is at least one fetch.
enum class ShardGranularity { PerUnit, Buckets };

struct ShardingKnobs {
  ShardGranularity granularity = ShardGranularity::PerUnit;
  /// DeepSpeed `stage3_prefetch_bucket_size`, default 5e7 elements
  /// (deepspeed/runtime/zero/config.py, DeepSpeedZeroConfig.prefetch_bucket_size = pp_int(5e7)).
  double prefetch_bucket_elements = 5e7;
  /// DeepSpeed `reduce_bucket_size`, default 5e8 elements (same file, reduce_bucket_size = pp_int(5e8)).
  double reduce_bucket_elements = 5e8;
  /// Units (layers) whose all-gather may be in flight ahead of the one computing, where the
  /// framework prefetches at all (forward_prefetch, backward_prefetch below): one, as FSDP's
  /// prefetch and limit_all_gathers=True keep it (torch/distributed/fsdp/fully_sharded_data_parallel.py).
  /// 0 = no prefetch in either pass (every collective exposed).
  int prefetch_depth = 1;
  /// The next unit's forward gather issued before this unit's forward (FSDP1 forward_prefetch=True;
  /// FSDP2, what `--export fsdp` runs, Megatron-FSDP and DeepSpeed prefetch in forward). false: FSDP1's
  /// default (forward_prefetch=False, Composer's too): each unit's gather is issued in its own
  /// pre-forward hook and waits in the open (BackwardPrefetch says why). PerUnit granularity only.
  bool forward_prefetch = true;
  /// FSDP1's backward_prefetch (BackwardPrefetch). PerUnit granularity only.
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  /// FSDP2 (torch.distributed._composable.fsdp.fully_shard, per-parameter sharding; torchtitan): the
  /// all-gather's copy-in / copy-out and the reduce-scatter's copy-in run on the compute stream
  /// (costmodel/fsdp2_copies.h). FSDP1 and DeepSpeed gather into flat buffers the parameters view.
  bool fsdp2_copies = false;
  /// FSDP2 under torch.distributed.pipelining (torchtitan, pp > 1): the blocks are wrapped with
  /// reshard_after_forward=False "to avoid per-microbatch all-gathers" (torchtitan
  /// parallelize_llama.py apply_fsdp), and the pipeline stage runs every backward with gradient sync
  /// and reshard-after-backward off, then calls post_backward on every group after the last one
  /// (torch/distributed/pipelining/stage.py backward_maybe_with_nosync, torch 2.5-2.6): the stage's
  /// weights stay gathered all step, its gradients accumulate unsharded in the reduce dtype and are
  /// reduce-scattered once, after the last backward (costmodel/fsdp2_pipeline.h).
  bool pipeline_keeps_unsharded = false;
};

/// Which fused attention kernel a framework runs (AttentionKind::Fused only).
/// FlashAttention2: Dao 2023's kernel, behind PyTorch SDPA's flash backend (torchtitan, FSDP
///   stacks) and llm-foundry's attn_impl flash with flash-attn 2.x. Cudnn: cuDNN's fused attention,
///   which Transformer Engine (Megatron-Core, NeMo) prefers on Hopper: TE's get_attention_backend,
///   "Select FusedAttention for performance ... device_compute_capability >= (9, 0)"
///   (transformer_engine/pytorch/attention.py). FlashAttention1: flash-attn 1.0.x (Dao et al. 2022),
///   llm-foundry's attn_impl flash before its gpu-flash2 extra. Triton: the FlashAttention algorithm
///   written in Triton (HazyResearch flash_attn/flash_attn_triton.py, copied as llm-foundry's
///   llmfoundry/models/layers/flash_attn_triton.py), llm-foundry's attn_impl triton, the default of
///   its benchmark script until March 2024 (scripts/train/benchmarking/submit_benchmarks.py
///   `--attn_impl` default 'triton', changed to 'flash' in commit 7f0fdae66). It is NOT the kernel that
///   Dao 2023 (FlashAttention-2 paper, Fig. 4) labels "Triton": that one is OpenAI Triton's own fused
///   attention (benchmarks/benchmark_flash_attention.py imports triton.ops.flash_attention), TritonOps here.
///   No speed curve of flash_attn_triton.py is published; its header says "Overall Triton forward +
///   backward is slightly slower than CUDA forward + backward" (the flash-attn 1.x CUDA kernel), so it
///   takes FlashAttention-1's curve (costmodel/attention_speed.h).
/// TritonOps: OpenAI Triton's fused attention (python/triton/ops/flash_attention.py, from the
///   06-fused-attention tutorial), the "Triton" curve of Dao 2023 Fig. 4.
/// Its speed is a property of the GPU: HardwareProfile's attention_kernel_speeds (published
/// forward+backward TFLOP/s by sequence length) and fused_attention_* / cudnn_attention_* (costmodel/
/// attention_speed.h). New values go at the end: plan files and tests name them by text.
enum class FusedAttentionKernel { FlashAttention2, Cudnn, FlashAttention1, Triton, TritonOps };
const char* to_string(FusedAttentionKernel k);
/// "flash2", "cudnn", "flash1", "triton", "triton-ops".
std::optional<FusedAttentionKernel> parse_fused_kernel(const std::string& s);

/// Which cross-entropy kernel runs on the LM head's logits (costmodel/cross_entropy.h counts the bytes
/// of each). Unfused: Megatron-Core's vocab_parallel_cross_entropy, Megatron-LM's default. Fused: the
/// same under jit_fuser (--cross-entropy-loss-fusion; NeMo 2.0 and Megatron-Bridge turn it on). Generic:
/// a six-pass estimate for the frameworks whose loss code is not counted. TorchFp32: PyTorch's
/// F.cross_entropy on logits upcast with .float() (torchtitan). TeInplace: Transformer Engine's Triton
/// kernels (cross_entropy_fusion_impl "te") up to TE 2.17, writing the gradient over the bf16 logits. Te:
/// the same from TE 2.18 on, with an fp32 gradient buffer. FlashXentropy: flash-attn's fused cross entropy
/// (flash_attn.losses.cross_entropy.CrossEntropyLoss: the xentropy_cuda_lib CUDA kernel in 1.0.x, a Triton
/// kernel from 2.x), llm-foundry's default loss_fn "fused_crossentropy". New values go at the end.
enum class CrossEntropyKernel { Generic, Unfused, Fused, TorchFp32, TeInplace, Te, FlashXentropy };
const char* to_string(CrossEntropyKernel k);
/// "generic", "unfused", "fused", "torch_fp32", "te_inplace", "te", "flash_xentropy".
std::optional<CrossEntropyKernel> parse_cross_entropy(const std::string& s);

/// The attention path Transformer Engine takes for the model's head dimensions on the GPU, given the job's
/// TE and cuDNN releases (core/te_attention_backend.h): its cuDNN fused attention, flash-attn 2, or its
/// UnfusedDotProductAttention.
enum class TeAttentionPath { Cudnn, FlashAttention, Unfused };
const char* to_string(TeAttentionPath p);

/// Everything a training framework decides that the cost model needs (issue 12's --framework sets
/// these together; each is also a flag of its own).
struct FrameworkKnobs {
  AttentionKind attention = AttentionKind::Fused;
  ShardingKnobs sharding;
  /// Added for issue 10 (prediction fidelity); costmodel/tp_overlap.h and costmodel/attention.cpp.
  FusedAttentionKernel fused_kernel = FusedAttentionKernel::FlashAttention2;
  /// Where a Megatron-Core / NeMo job's release cannot run TE's cuDNN attention for these head dims
  /// (core/te_attention_backend.h), what it fell back to; `attention` / `fused_kernel` carry the cost.
  TeAttentionPath te_attention = TeAttentionPath::Cudnn;
  /// The routed experts run as one torch._grouped_mm per projection (torchtitan's MoE GroupedExperts),
  /// costed at the profile's measured grouped-GEMM rate (costmodel/moe_cost.h); false: one GEMM per local
  /// expert, Transformer Engine's GroupedLinear on Hopper and Blackwell.
  bool torch_grouped_mm = false;
  /// Megatron --tp-comm-overlap: Transformer Engine splits each TP all-gather / reduce-scatter into
  /// chunks pipelined with the GEMM that consumes / produces it (userbuffers). Off by default, as in
  /// Megatron (megatron/training/arguments.py: action='store_true').
  bool tp_comm_overlap = false;
  /// Megatron --overlap-param-gather (distributed optimizer): the all-gather of the updated 16-bit
  /// weights after the optimizer step runs under the next step's first forward. Off by default.
  bool param_gather_overlap = false;
  /// Megatron-Core DistributedDataParallelConfig.bucket_size: parameters per DDP gradient bucket, whose
  /// edge group (the embedding's) is reduced after the last backward and gathered before the first
  /// forward in the open (costmodel/ddp_edge_bucket.h). 0 = Megatron-Core's default, max(40M, 1M x dp).
  double ddp_bucket_params = 0;
  /// Megatron-Core --fp8-param-gather (Transformer Engine FP8 primary weights; Megatron-Bridge's
  /// performance recipes set it in every FP8 current-scaling and MXFP8 precision config): the linear
  /// layers' weights live only as FP8 tensors, with no 16-bit copy beside the cached FP8 data, and the
  /// distributed optimizer's all-gather sends the FP8 bytes (MXFP8: the 16-bit weights into the
  /// gradient buffer, reuse_grad_buf_for_mxfp8_param_ag). costmodel/fp8_params.h.
  bool fp8_param_gather = false;
  /// Megatron-Core --use-precision-aware-optimizer with --main-params-dtype, --exp-avg-dtype and
  /// --exp-avg-sq-dtype (core/optimizer_states.h): the bytes the optimizer keeps per parameter. All fp32
  /// by default (12 bytes); only Megatron and NeMo run other dtypes.
  OptimizerStates optimizer_states;
  /// Megatron-Core --fp8-dot-product-attention (Transformer Engine's FP8 fused attention; Megatron-Bridge's
  /// MXFP8 "V2" presets for Blackwell set it): with an FP8 recipe, the attention core runs on FP8 inputs,
  /// costed with the profile's measured FP8/16-bit time ratios (costmodel/fp8_attention.h). Off by default.
  bool fp8_attention = false;
  /// Megatron-Core --overlap-moe-expert-parallel-comm (+ --delay-wgrad-compute): the combined 1F1B
  /// schedule hides the expert all-to-all under another micro-batch's compute
  /// (costmodel/moe_a2a_overlap.h). Off by default, as in Megatron-Core.
  bool moe_a2a_overlap = false;
  /// Megatron-Core's token dispatcher of the MoE layers (core/moe_dispatcher.h): alltoall (the
  /// README's recommendation with EP) or the flex dispatcher's DeepEP / HybridEP backend, whose
  /// deduplicated dispatch costmodel/moe_dedup_dispatch.h counts.
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  /// Megatron-Core's --recompute-modules under --recompute-granularity selective (core/recompute_modules.h):
  /// a RecomputeModule bit set, 0 = Megatron's default ["core_attn"] (Korthikanti's selective). Applies
  /// to --recompute selective only, as in Megatron (costmodel/recompute_modules.h).
  uint32_t recompute_modules = 0;
  /// Megatron-Core's CUDA graph scopes (--cuda-graph-impl, --cuda-graph-scope; core/cuda_graphs.h): a
  /// CudaGraphScope bit set, 0 = eager. Graphed scopes cost one host call per replay instead of their
  /// kernels' launches (costmodel/host_launch.h). Off by default, as in Megatron-Core.
  uint32_t cuda_graphs = 0;
  /// Megatron-Core --cpu-offloading --cpu-offloading-num-layers N (activations only, as Megatron-Bridge's
  /// presets set it: cpu_offloading_weights False): Transformer Engine moves the saved activations of the
  /// first N transformer layers to host memory during the forward and reloads them in the backward
  /// (costmodel/activation_offload.h). 0 = off, Megatron-Core's default.
  int activation_offload_layers = 0;
  /// The model code gathers q, k, v into unpadded tensors for flash_attn's varlen kernel and scatters
  /// the output back (llm-foundry's flash_attn_fn): extra element-wise traffic per layer,
  /// costmodel/eager_elementwise.h. A property of the model code, not of FSDP; off by default.
  bool unpad_attention = false;
  /// torchtitan's compile.enable (training.compile before mid-2025): torch.compile (inductor) on each
  /// transformer block, which fuses every element-wise chain (RMSNorm, SiLU * gate) into one kernel, as
  /// costmodel/compute_time.cpp's element-wise bytes assume. false: the Llama block's PyTorch ops run
  /// eagerly, one kernel each, with RMSNorm's fp32 upcasts (costmodel/eager_llama_ops.h). true here (the
  /// fused kernels every other framework runs); torchtitan's default is false (core/framework.cpp).
  bool torch_compile = true;
  /// torchtitan's [model] norm_type = "fused_rmsnorm" (a Triton kernel with its own backward,
  /// torchtitan/models/norms.py FusedRMSNorm at 1ea476e9f): the norms are fused even when eager.
  bool fused_rmsnorm = false;
  /// Tensor parallelism without sequence parallelism: the backward all-reduce of a column-parallel
  /// layer's input gradient runs asynchronously beside its weight-gradient GEMM (Megatron-LM's
  /// LinearWithGradAccumulationAndAsyncAllreduce, on by default since it was added) and hides behind
  /// it. false: the code of 2021-22 forks all-reduced it in the autograd backward of
  /// copy_to_tensor_model_parallel_region, after the layer's backward, in the open (validation files'
  /// `tp_async_allreduce: false`; costmodel/README.md "Synchronous TP all-reduce").
  bool tp_async_allreduce = true;
  /// ZeRO-1 whose gradient reduction is an all-reduce, not a reduce-scatter: DeepSpeed's
  /// BF16_Optimizer (bf16 with ZERO_STAGE=0, Megatron-DeepSpeed's "its own zero stage 1
  /// equivalent") shards the fp32 optimizer state over DP but hands its whole fp32 gradient buffer
  /// to the engine's all-reduce (deepspeed/runtime/bf16_optimizer.py get_grads_for_reduction ->
  /// engine.py allreduce_gradients / buffered_allreduce_fallback). Each rank then updates its shard
  /// and the 16-bit weights are all-gathered, as for ZeRO-1. Off by default (Megatron's distributed
  /// optimizer and DeepSpeed's ZeRO-1 reduce-scatter); set by validation files (`dp_all_reduce`).
  bool dp_all_reduce = false;
  /// Bytes per gradient element that the data-parallel reduction puts on the wire; 0: the
  /// convention's gradient bytes (param_bytes().gradients). DeepSpeed's engine casts the flattened
  /// bucket to its communication_data_type before the all-reduce and back after it
  /// (deepspeed/runtime/engine.py allreduce_bucket), and that type is bf16 under "bf16": {"enabled":
  /// true} (the communication_data_type property), so BF16_Optimizer's fp32 gradients travel as 2 bytes.
  double dp_reduce_bytes = 0;
  /// A pass of its own after every micro-batch's backward adds the 16-bit gradients into an fp32
  /// buffer: DeepSpeed's BF16_Optimizer.update_hp_grads, hp_grad.add_(lp.grad.to(fp32)) per
  /// parameter (deepspeed/runtime/bf16_optimizer.py), 18 bytes per parameter (read 2, write and read
  /// the fp32 copy 4 + 4, read and write the accumulator 4 + 4); costmodel/grad_accumulation.h.
  /// Megatron accumulates in the weight-gradient GEMM (gradient_accumulation_fusion) and FSDP
  /// reduces per micro-batch: false by default.
  bool grad_accumulation_pass = false;
  /// The loss kernel (costmodel/cross_entropy.h): framework_knobs() picks Megatron's unfused one for
  /// megatron and the fused one for nemo; validation files may name it (`cross_entropy`).
  CrossEntropyKernel cross_entropy = CrossEntropyKernel::Generic;
  /// Cross entropies the trainer evaluates again over each micro-batch's logits to update its train
  /// metrics, after the backward, without gradients: Composer (llm-foundry) updates LanguageCrossEntropy
  /// and LanguagePerplexity on every micro-batch (composer/trainer/trainer.py _train_microbatch ->
  /// _eval_train_metrics, v0.15.0 to v0.17.2), each a torch.nn.CrossEntropyLoss that autocast runs in
  /// fp32 (costmodel/cross_entropy.h counts the bytes). 0 for every framework; validation files and
  /// --train-metric-cross-entropies set it.
  int train_metric_cross_entropies = 0;
  /// torchtitan's Llama attention code: the rotary embedding as an fp32 complex multiply and GQA's K
  /// and V copied to the query heads before SDPA (costmodel/torchtitan_attention_ops.h). Set for
  /// torchtitan; other frameworks fuse RoPE into their kernels (TE, flash-attn, inductor).
  bool torchtitan_attention_inputs = false;
  /// IBM's Foundation Model Stack Llama code (fms-fsdp), run eager: its RMSNorm and gated MLP as torchtitan's
  /// eager ops (costmodel/eager_llama_ops.h) and its rotary embedding and GQA expansion
  /// (costmodel/fms_llama_ops.h). Off by default; `--fsdp-model-code fms` and validation files (`model_code: fms`).
  bool fms_model_code = false;
  /// Megatron-Core's own model code: its eager passes for GPT-OSS-style layers (the clamp before the
  /// fused GeGLU, the per-expert bias loop, unfused YaRN RoPE; costmodel/megatron_eager_ops.h) run where
  /// the model has those features; its host launch time (costmodel/host_launch.h) and its DDP buckets
  /// (costmodel/ddp_edge_bucket.h). Set for megatron and nemo.
  bool megatron_core_model_code = false;
  /// Megatron-Core's expert MLP built from Transformer Engine's op fuser (core_v0.18 experts.py with
  /// te.pytorch.ops.ScaledClampedQGeGLU; Megatron-Bridge's cutedsl_fused_grouped_mlp presets): the clamp,
  /// activation and expert biases run inside the fused grouped kernels, so the clamp and bias-loop passes
  /// of costmodel/megatron_eager_ops.h are not run. Off by default; --fused-grouped-mlp and validation files.
  bool fused_grouped_mlp = false;
  /// Megatron-Core <= 0.15 (core_v0.15 rope_utils.py apply_rotary_pos_emb) ran Transformer Engine's fused
  /// RoPE under --apply-rope-fusion whatever YaRN's mscale; from core_v0.16 on mscale != 1 falls back to
  /// the unfused PyTorch code (costmodel/megatron_eager_ops.h). false = the current behaviour.
  bool yarn_rope_fused = false;
  /// Under an FP8 recipe the linear layers save their quantized (1-byte) inputs for the backward,
  /// not the 16-bit ones: Transformer Engine's Linear / LayerNormLinear / LayerNormMLP keep the FP8
  /// copy (or its column-wise / transposed data) they cast for the forward GEMM
  /// (costmodel/fp8.h fp8_stash_delta_bytes). false for torchtitan: torchao's Float8Linear saves the
  /// high-precision input and weight and re-casts them in backward (torchao/float8/float8_linear.py
  /// matmul_with_hp_or_float8_args: ctx.save_for_backward(input_hp, weight_hp_t)).
  bool fp8_saves_quantized_inputs = true;
  /// The optimizer step is PyTorch's foreach AdamW (torchtitan's default, optimizer.fused false at
  /// 9dec370ad): one kernel per arithmetic op, about 80 bytes per fp32 parameter, plus clip_grad_norm_
  /// (costmodel/step.cpp optimizer_time_s). false: a fused Adam (Megatron, DeepSpeed, apex). Set for
  /// torchtitan and for PyTorch FSDP (framework fsdp): torch.optim.AdamW left at foreach=None and fused=None
  /// takes the foreach kernels on CUDA (fms-fsdp's main_training.py at 7746dac builds it so), and Composer's
  /// DecoupledAdamW (llm-foundry) runs the same arithmetic one parameter at a time
  /// (composer/optim/decoupled_weight_decay.py, v0.17.2), its clipping through FSDP's clip_grad_norm_.
  bool foreach_adamw = false;
  /// meshplan's own executor (`meshplan run`, never a --framework): its fp32 element-wise kernels,
  /// one per op, replace the fused framework's element-wise bytes; Fp32Bf16Attention adds the bf16
  /// copies around cuDNN's attention on the CUDA backend (costmodel/executor_ops.h).
  enum class ExecutorOps { None, Fp32, Fp32Bf16Attention };
  ExecutorOps executor_ops = ExecutorOps::None;
  /// meshplan's CUDA executor with `--cuda-gemm bf16-copy` (its default): every GEMM operand, fp32
  /// activations and weights alike, is copied to bf16 before the GEMM (costmodel/executor_ops.h
  /// executor_gemm_copy_bytes, executor_head_copy_bytes).
  bool executor_gemm_copies = false;
  /// meshplan's executor keeps the GEMM-only activations h1, h2 and act in bf16 (the CPU's bf16
  /// emulation and CUDA's bf16-copy, whose GEMMs round them to bf16 anyway; executor/model/
  /// gemm_stash.h): the stash shrinks (costmodel/executor_stash.h) and bf16-copy copies them once
  /// instead of again in backward (executor_gemm_copy_bytes).
  bool executor_bf16_gemm_stash = false;
  /// ... and q, k, v and the attention output in bf16 (the CPU's bf16 emulation, CUDA's cuDNN
  /// attention, which read and write them in bf16 anyway; not under CP): a smaller stash and no
  /// bf16 copies of them around the attention (costmodel/executor_stash.h, executor_ops.h).
  bool executor_bf16_attention_stash = false;
  /// meshplan's executor splits the fp32 logits into vocabulary chunks of at most this many bytes
  /// (core/loss_chunk.h; `meshplan run --loss-chunk-mib`): only one chunk is ever alive, and the
  /// backward recomputes each chunk's logits (one more LM-head GEMM). 0: the whole (tokens, V/tp)
  /// logits live from the forward to the backward, as in every framework's loss (Megatron-Core's
  /// vocab_parallel_cross_entropy, F.cross_entropy).
  uint64_t loss_chunk_bytes = 0;
};

}  // namespace meshplan
