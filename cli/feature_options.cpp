// --cp, --cp-comm, --fp8, --grad-compression, --attention-kernel, --ac-policy, --torch-compile,
// --cross-entropy, --moe-a2a-overlap, --activation-offload-layers: flags,
// report JSON and plan-file reading.
#include "cli/feature_options.h"

#include <tuple>
#include <utility>

#include "cli/feature_report.h"

#include <CLI/CLI.hpp>

#include "cli/help_text.h"
#include "core/attention_library.h"
#include "core/te_attention_backend.h"
#include "core/framework.h"
#include "core/job_features.h"
#include "cli/ddp_bucket_option.h"
#include "cli/megatron_list_options.h"
#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/grad_compression.h"

namespace meshplan::cli {

static const char* kCmd = "command line";

void add_feature_options(CLI::App* sub, FeatureOptions& o) {
  o.app = sub;
  allowed_values(sub->add_option("--cp-comm", o.cp_comm,
                                 "Context-parallel K/V exchange (Megatron-Core --cp-comm-type): p2p (ring attention, "
                                 "overlapped with attention), all_gather (K/V all-gathered; GQA), a2a (Ulysses), "
                                 "torch_all_gather (PyTorch's context_parallel as torchtitan runs it: K/V gathered "
                                 "at the query heads' width, fp32 dK/dV ring; needs --framework torchtitan) "
                                 "(default p2p; torch_all_gather under --framework torchtitan, what it runs)"),
                 {"p2p", "all_gather", "a2a", "torch_all_gather"});
  allowed_values(sub->add_option("--fp8", o.fp8,
                                 "FP8 recipe of the linear-layer GEMMs: delayed, current, blockwise, mxfp8 "
                                 "(Transformer Engine), rowwise (torchao's dynamic row-wise scaling, torchtitan: "
                                 "costed from the profile's measured speedup table) (default none); needs an fp8 "
                                 "peak in the profile"),
                 {"none", "delayed", "current", "blockwise", "mxfp8", "rowwise"});
  sub->add_option("--grad-compression", o.grad_compression,
                  "Compressed DP gradient reduction: none, powersgd:RANK, onebit-adam, onebit-lamb, topk:FRACTION "
                  "(default none; ZeRO 0 only)");
  allowed_values(sub->add_option("--attention-kernel", o.attention_kernel,
                                 "Fused attention kernel, whose published speed by sequence length the profile "
                                 "lists: flash2 (FlashAttention-2, PyTorch SDPA), flash1 (flash-attn 1.x), triton "
                                 "(flash-attn's Triton kernel, llm-foundry attn_impl triton: costed with flash1's "
                                 "curve), triton-ops (OpenAI Triton's fused attention), cudnn (Transformer "
                                 "Engine on Hopper) (default: the framework's: cudnn for megatron and nemo, else "
                                 "flash2)"),
                 {"flash2", "flash1", "triton", "triton-ops", "cudnn"});
  sub->add_option("--cudnn-version", o.cudnn_version,
                  "cuDNN release the job runs: its fused attention is costed with the profile's cudnn curve of "
                  "that release, or of the newest measured release before it (cuDNN's SDPA got 1.5x faster on "
                  "GB200 from 9.13 to 9.22) (default: the profile's newest)");
  sub->add_option("--te-version", o.te_version,
                  "Transformer Engine release a megatron or nemo job runs: with --cudnn-version it decides whether "
                  "TE's cuDNN attention takes the model's head dims on this GPU (Blackwell before TE 2.5 / cuDNN "
                  "9.11: nothing above 128, so MLA's 192/128 runs TE's unfused attention, costed as materialized; "
                  "equal dims up to 256 run flash-attn 2) (default: today's release, which takes them)");
  sub->add_option("--ac-policy", o.ac_policy,
                  "How --recompute is carried out: megatron (selective = attention core, full = every layer), "
                  "torchtitan-op (selective = torchtitan's op-level SAC: every other matmul, SDPA and "
                  "reduce-scatter outputs saved, the rest recomputed), every-N-layers (full = torchtitan's "
                  "layer SAC: every N-th layer checkpointed whole, the others keep everything); the torchtitan ones need "
                  "--framework torchtitan (default megatron)");
  allowed_values(sub->add_option("--torch-compile", o.torch_compile,
                                 "torchtitan's compile.enable: on = torch.compile fuses each block's RMSNorm and "
                                 "SwiGLU into single kernels, off = they run eager, one kernel per op with fp32 "
                                 "norm upcasts (more HBM traffic); needs --framework torchtitan (default off, "
                                 "torchtitan's default)"),
                 {"on", "off"});
  allowed_values(sub->add_option("--cross-entropy", o.cross_entropy,
                                 "Loss kernel over the LM head's logits: unfused (Megatron-Core's "
                                 "vocab_parallel_cross_entropy, 38 + 14 bytes per logit), fused (Megatron's "
                                 "--cross-entropy-loss-fusion, 22 + 14), torch_fp32 (F.cross_entropy on .float() logits, "
                                 "torchtitan: 14 + 22), te (Transformer Engine's Triton kernels, cross_entropy_fusion_impl te, "
                                 "TE 2.18 on: 8 + 14), te_inplace (the same up to TE 2.17, gradient written over the "
                                 "bf16 logits: 6 + 4), flash_xentropy (flash-attn's fused CrossEntropyLoss, "
                                 "llm-foundry's loss: 2 + 4), generic (12 + 12) (default: the framework's: unfused "
                                 "for megatron, fused for nemo, torch_fp32 for torchtitan, else generic)"),
                 {"unfused", "fused", "torch_fp32", "te", "te_inplace", "flash_xentropy", "generic"});
  sub->add_option("--train-metric-cross-entropies", o.train_metric_cross_entropies,
                  "Cross entropies the trainer evaluates again over each micro-batch's logits for its train "
                  "metrics, without gradients, 14 bytes per logit each (fp32 under autocast): Composer / "
                  "llm-foundry updates LanguageCrossEntropy and LanguagePerplexity on every micro-batch, 2 "
                  "(default 0)");
  sub->add_flag("--moe-a2a-overlap", o.moe_a2a_overlap,
                "Megatron-Core's --overlap-moe-expert-parallel-comm (+ --delay-wgrad-compute): the MoE expert "
                "all-to-all of one micro-batch hidden under another's compute (combined 1F1B); needs "
                "--framework megatron or nemo, a MoE model with --ep > 1, no full recompute and, with "
                "--pp > 1, the interleaved schedule; plan keeps only such layouts (default off)");
  allowed_values(sub->add_option("--moe-dispatcher", o.moe_dispatcher,
                                 "Megatron-Core's MoE token dispatcher: alltoall (every token-expert pair sent, its "
                                 "routing weights after), deepep or hybridep (the flex dispatcher's backends: a token "
                                 "crosses the network once per destination node and reaches each destination GPU "
                                 "once; HybridEP also over multi-node NVLink, GB200 NVL72); the flex ones need "
                                 "--framework megatron or nemo and --etp 1 (default alltoall)"),
                 {"alltoall", "deepep", "hybridep"});
  sub->add_option("--activation-offload-layers", o.activation_offload_layers,
                  "Megatron-Core's --cpu-offloading --cpu-offloading-num-layers N (activations only): the saved "
                  "activations of the first N transformer layers wait in host memory between forward and "
                  "backward, copied over the profile's node.host_link under the next layers' compute; needs "
                  "--framework megatron or nemo, N < layers, --pp 1 and --recompute none; plan keeps only such "
                  "layouts (default 0: off)");
  sub->add_flag("--fp8-param-gather", o.fp8_param_gather,
                "Megatron-Core's --fp8-param-gather (FP8 primary weights, as Megatron-Bridge's FP8 recipes set "
                "it): the linear layers' weights are kept only as FP8, with no 16-bit copy, and the distributed "
                "optimizer gathers them in FP8 (MXFP8: in 16 bits); needs --framework megatron or nemo, "
                "--fp8 delayed, current, blockwise or mxfp8, and --zero 1 or more (plan keeps those) (default off)");
  sub->add_flag("--fp8-attention", o.fp8_attention,
                "Megatron-Core's --fp8-dot-product-attention (Transformer Engine's FP8 fused attention, as "
                "Megatron-Bridge's MXFP8 presets for Blackwell set it): the attention core runs on FP8 inputs, "
                "costed with the hardware profile's measured FP8 / 16-bit time ratio for the shape "
                "(fp8_attention_speedup; unmeasured shapes cost as 16-bit); needs --framework megatron or nemo "
                "and --fp8 delayed, current, blockwise or mxfp8 (default off)");
  sub->add_flag("--tp-comm-overlap", o.tp_comm_overlap,
                "Megatron-Core's --tp-comm-overlap (Transformer Engine userbuffers, as Megatron-Bridge's recipes "
                "set it): each sequence-parallel TP all-gather / reduce-scatter runs in chunks under the GEMM that "
                "consumes / produces it; needs --framework megatron or nemo and, at TP > 1, --sequence-parallel "
                "(plan keeps those layouts; at TP 1 there is nothing to overlap) (default off)");
  sub->add_flag("--overlap-param-gather", o.overlap_param_gather,
                "Megatron-Core's --overlap-param-gather: the distributed optimizer's all-gather of the updated "
                "weights runs under the next step's first forward instead of after the optimizer step; needs "
                "--framework megatron or nemo, --zero 1 and the DP overlap (no --no-dp-overlap; plan keeps "
                "those) (default off: the launch scripts add it only when asked, as costed)");
  sub->add_flag("--fused-grouped-mlp", o.fused_grouped_mlp,
                "Megatron-Core's expert MLP built from Transformer Engine's op fuser (Megatron-Bridge's "
                "cutedsl_fused_grouped_mlp): a clamped GLU (GPT-OSS) and expert biases run inside the fused "
                "grouped kernels instead of as eager PyTorch passes; needs --framework megatron or nemo "
                "(default off)");
  add_ddp_bucket_option(sub, o.ddp_bucket_size);  // cli/ddp_bucket_option.h
  add_megatron_list_options(sub, o.lists);  // --recompute-modules, --cuda-graphs
  add_fsdp_options(sub, o.fsdp);
  add_optimizer_state_options(sub, o.states);
  add_moe_load_options(sub, o.moe_load);
}

void add_cp_option(CLI::App* sub, int& cp) {
  sub->add_option("--cp", cp, "Context-parallel degree: each sequence split over C GPUs (default 1)");
}

static bool given(CLI::App* app, const char* flag) { return app && app->count(flag) > 0; }

// Megatron-Core's --overlap-moe-expert-parallel-comm and --cpu-offloading: only Megatron-LM and NeMo run them.

// FP8 primary weights and FP8 attention are Megatron-Core options under one of Transformer Engine's recipes.
static Result<bool> check_te_fp8_option(const Job& job, const std::string& where, const std::string& field,
                                        const char* megatron_flag, const char* needs, const char* cli_flag) {
  if (!runs_megatron_core_option(job.framework))
    return make_error(where, field, "true",
                      std::string("is Megatron-Core's ") + megatron_flag + "; framework " +
                          to_string(job.framework) + " does not run it",
                      std::string("add --framework megatron or nemo, or drop ") + cli_flag);
  if (job.fp8 == Fp8Recipe::None || job.fp8 == Fp8Recipe::Rowwise)
    return make_error(where, field, "true", std::string(needs) + "; --fp8 is " + to_string(job.fp8),
                      std::string("add --fp8 current, delayed, blockwise or mxfp8, or drop ") + cli_flag);
  return true;
}

static Result<bool> check_fp8_param_gather(const Job& job, const std::string& where, const std::string& field) {
  return check_te_fp8_option(job, where, field, "--fp8-param-gather", "needs Transformer Engine FP8 weights",
                             "--fp8-param-gather");
}

// FP8 attention is Transformer Engine's DotProductAttention on FP8 inputs, as Megatron-Core runs it.
static Result<bool> check_fp8_attention(const Job& job, const std::string& where, const std::string& field) {
  return check_te_fp8_option(job, where, field, "--fp8-dot-product-attention",
                             "needs a Transformer Engine FP8 recipe", "--fp8-attention");
}

static Result<bool> apply(const FeatureOptions& o, Job& job, bool only_given) {
  if (!only_given || given(o.app, "--cp-comm")) {
    auto c = parse_cp_comm(o.cp_comm);
    if (!c)
      return make_error(kCmd, "--cp-comm", o.cp_comm, "unknown CP exchange",
                        "use p2p, all_gather, a2a or torch_all_gather");
    // PyTorch's context_parallel is what torchtitan runs; Megatron-Core/NeMo run the other three.
    if (*c == CpComm::TorchAllGather && job.framework != Framework::Torchtitan)
      return make_error(kCmd, "--cp-comm", o.cp_comm, "is PyTorch's context_parallel (torchtitan)",
                        "add --framework torchtitan, or use p2p, all_gather or a2a");
    job.cp_comm = *c;
    // torchtitan runs PyTorch's context_parallel, rotate_method "allgather" by default
    // (costmodel/cp_torch_allgather.h): that is its exchange unless another is asked for.
    if (!given(o.app, "--cp-comm") && job.framework == Framework::Torchtitan) job.cp_comm = CpComm::TorchAllGather;
  }
  if (!only_given || given(o.app, "--fp8")) {
    auto r = parse_fp8_recipe(o.fp8);
    if (!r)
      return make_error(kCmd, "--fp8", o.fp8, "unknown FP8 recipe",
                        "use none, delayed, current, blockwise, mxfp8 or rowwise");
    job.fp8 = *r;
  }
  if (!o.cudnn_version.empty() && !valid_library_version(o.cudnn_version))
    return make_error(kCmd, "--cudnn-version", o.cudnn_version, "not a release number",
                      "dot-separated integers, e.g. 9.17.0");
  if (!o.te_version.empty() && !valid_library_version(o.te_version))
    return make_error(kCmd, "--te-version", o.te_version, "not a release number", "dot-separated integers, e.g. 2.2");
  // No default of its own: the framework's kernel (core/framework.cpp) stands unless the flag is given.
  if (given(o.app, "--attention-kernel")) {
    auto k = parse_fused_kernel(o.attention_kernel);
    if (!k)
      return make_error(kCmd, "--attention-kernel", o.attention_kernel, "unknown attention kernel",
                        "use flash2, flash1, triton, triton-ops or cudnn");
    job.knobs.fused_kernel = *k;
  }
  if (!only_given || given(o.app, "--ac-policy")) {
    auto a = parse_ac_policy(o.ac_policy);
    if (!a)
      return make_error(kCmd, "--ac-policy", o.ac_policy, "unknown activation-checkpoint policy",
                        "use megatron, torchtitan-op or every-N-layers (e.g. every-2-layers)");
    job.ac_policy = *a;
    // Both policies are torchtitan's rules: another framework (meshplan's executor included) would
    // not run what is costed.
    if (job.ac_policy.kind != AcPolicyKind::Megatron && job.framework != Framework::Torchtitan)
      return make_error(kCmd, "--ac-policy", o.ac_policy, "is torchtitan's activation checkpointing",
                        "add --framework torchtitan, or use --ac-policy megatron");
  }
  // No default of its own either: torchtitan's compile.enable = false (core/framework.cpp) stands.
  if (given(o.app, "--torch-compile")) {
    if (o.torch_compile != "on" && o.torch_compile != "off")
      return make_error(kCmd, "--torch-compile", o.torch_compile, "must be on or off",
                        "on = torch.compile'd blocks, off = eager (torchtitan's default)");
    if (job.framework != Framework::Torchtitan)
      return make_error(kCmd, "--torch-compile", o.torch_compile, "is torchtitan's compile option",
                        "add --framework torchtitan (the other frameworks' kernels are costed fused)");
    job.knobs.torch_compile = o.torch_compile == "on";
  }
  // No default of its own: the framework's loss kernel (core/framework.cpp) stands unless given.
  if (given(o.app, "--cross-entropy")) {
    auto k = parse_cross_entropy(o.cross_entropy);
    if (!k)
      return make_error(kCmd, "--cross-entropy", o.cross_entropy, "unknown cross-entropy kernel",
                        "use unfused, fused, torch_fp32, te_inplace, te, flash_xentropy or generic");
    job.knobs.cross_entropy = *k;
  }
  if (given(o.app, "--train-metric-cross-entropies")) {
    if (o.train_metric_cross_entropies < 0 || o.train_metric_cross_entropies > 1000)
      return make_error(kCmd, "--train-metric-cross-entropies", std::to_string(o.train_metric_cross_entropies),
                        "must be a count from 0 to 1000", "0, or 2 for Composer's LanguageCrossEntropy and LanguagePerplexity");
    job.knobs.train_metric_cross_entropies = o.train_metric_cross_entropies;
  }
  if (given(o.app, "--moe-a2a-overlap")) {
    if (!runs_megatron_core_option(job.framework))
      return make_error(kCmd, "--moe-a2a-overlap", "true",
                        std::string("is Megatron-Core's --overlap-moe-expert-parallel-comm; framework ") +
                            to_string(job.framework) + " does not run it",
                        "add --framework megatron or nemo, or drop --moe-a2a-overlap");
    job.knobs.moe_a2a_overlap = o.moe_a2a_overlap;
  }
  if (given(o.app, "--moe-dispatcher")) {
    auto d = parse_moe_dispatcher(o.moe_dispatcher);
    if (!d) return make_error(kCmd, "--moe-dispatcher", o.moe_dispatcher, "unknown dispatcher", "use alltoall, deepep or hybridep");
    if (*d != MoeDispatcher::AllToAll && !runs_megatron_core_option(job.framework))
      return make_error(kCmd, "--moe-dispatcher", o.moe_dispatcher,
                        std::string("is Megatron-Core's flex dispatcher; framework ") + to_string(job.framework) +
                            " does not run it",
                        "add --framework megatron or nemo, or use --moe-dispatcher alltoall");
    job.knobs.moe_dispatcher = *d;
  }
  if (given(o.app, "--activation-offload-layers")) {
    const std::string n = std::to_string(o.activation_offload_layers);
    if (o.activation_offload_layers < 0)
      return make_error(kCmd, "--activation-offload-layers", n, "must not be negative", "e.g. 40, or 0 for off");
    if (o.activation_offload_layers > 0 && !runs_megatron_core_option(job.framework))
      return make_error(kCmd, "--activation-offload-layers", n,
                        std::string("is Megatron-Core's --cpu-offloading-num-layers; framework ") +
                            to_string(job.framework) + " does not run it",
                        "add --framework megatron or nemo, or drop --activation-offload-layers");
    job.knobs.activation_offload_layers = o.activation_offload_layers;
  }
  for (const auto& [flag, on, knob] : {std::tuple{"--tp-comm-overlap", o.tp_comm_overlap, &job.knobs.tp_comm_overlap},
                                        std::tuple{"--overlap-param-gather", o.overlap_param_gather,
                                                   &job.knobs.param_gather_overlap},
                                        std::tuple{"--fused-grouped-mlp", o.fused_grouped_mlp,
                                                   &job.knobs.fused_grouped_mlp}}) {
    if (!given(o.app, flag)) continue;
    if (!runs_megatron_core_option(job.framework))
      return make_error(kCmd, flag, "true",
                        std::string("is Megatron-Core's ") + flag + "; framework " + to_string(job.framework) +
                            " does not run it",
                        std::string("add --framework megatron or nemo, or drop ") + flag);
    *knob = on;
  }
  if (auto r = apply_ddp_bucket_option(o.ddp_bucket_size, o.app, job); !r) return r.error();  // cli/ddp_bucket_option.h
  if (auto r = apply_megatron_list_options(o.lists, o.app, job); !r) return r.error();  // cli/megatron_list_options.h
  if (given(o.app, "--fp8-param-gather")) {
    if (auto ok = check_fp8_param_gather(job, kCmd, "--fp8-param-gather"); !ok) return ok.error();
    job.knobs.fp8_param_gather = o.fp8_param_gather;
  }
  if (given(o.app, "--fp8-attention")) {
    if (auto ok = check_fp8_attention(job, kCmd, "--fp8-attention"); !ok) return ok.error();
    job.knobs.fp8_attention = o.fp8_attention;
  }
  if (!only_given || given(o.app, "--grad-compression"))
    if (auto r = parse_grad_compression(o.grad_compression, kCmd, "--grad-compression", job); !r) return r.error();
  if (auto r = apply_optimizer_state_options(o.app, o.states, job); !r) return r.error();
  apply_moe_load_options(o.app, o.moe_load, job);
  return apply_fsdp_options(o.app, o.fsdp, job);
}

Result<bool> apply_feature_options(const FeatureOptions& o, Job& job) { return apply(o, job, false); }
Result<bool> apply_feature_overrides(const FeatureOptions& o, Job& job) {
  // A plan file embeds the profile with the attention curve its cuDNN release chose; a later flag cannot pick
  // another (the other releases' curves are not in the file).
  if (given(o.app, "--cudnn-version"))
    return make_error(kCmd, "--cudnn-version", o.cudnn_version, "does not apply to --plan",
                      "the plan file keeps the curve it was made with: re-run plan or estimate with --cudnn-version");
  // The attention path the release took is in the plan file's job (its attention and kernel).
  if (given(o.app, "--te-version"))
    return make_error(kCmd, "--te-version", o.te_version, "does not apply to --plan",
                      "the plan file keeps the attention path it was made with: re-run plan or estimate with --te-version");
  return apply(o, job, true);
}

void add_config_features(ojson& config, const ParallelConfig& c) {
  if (c.cp > 1) config["cp"] = c.cp;
  if (c.shard_group > 0) config["shard_group"] = c.shard_group;  // HSDP (core/hsdp_config.h)
}

void add_job_features(ojson& j, const Job& job) {
  if (job.cp_comm != CpComm::P2p) j["cp_comm"] = to_string(job.cp_comm);
  if (job.fp8 != Fp8Recipe::None) j["fp8"] = to_string(job.fp8);
  if (job.ac_policy != AcPolicy{}) j["ac_policy"] = to_string(job.ac_policy);
  if (job.compression != GradCompression::None) {
    j["grad_compression"] = grad_compression_text(job);
  }
  if (job.knobs.fused_kernel != framework_knobs(framework_spec(job.framework)).fused_kernel)
    j["attention_kernel"] = to_string(job.knobs.fused_kernel);
  if (job.knobs.torch_compile != framework_knobs(framework_spec(job.framework)).torch_compile)
    j["torch_compile"] = job.knobs.torch_compile;
  if (job.knobs.cross_entropy != framework_knobs(framework_spec(job.framework)).cross_entropy)
    j["cross_entropy"] = to_string(job.knobs.cross_entropy);
  if (job.knobs.train_metric_cross_entropies > 0) j["train_metric_cross_entropies"] = job.knobs.train_metric_cross_entropies;
  if (job.knobs.moe_a2a_overlap) j["moe_a2a_overlap"] = true;
  if (job.knobs.moe_dispatcher != MoeDispatcher::AllToAll) j["moe_dispatcher"] = to_string(job.knobs.moe_dispatcher);
  // The release's fallback (core/te_attention_backend.h): the cost is in "attention" / "attention_kernel", this says why.
  if (job.knobs.te_attention != TeAttentionPath::Cudnn) j["te_attention"] = to_string(job.knobs.te_attention);
  if (job.knobs.activation_offload_layers > 0) j["activation_offload_layers"] = job.knobs.activation_offload_layers;
  // Only with a Transformer Engine recipe (costmodel/fp8_params.h), so that the file reads back.
  if (fp8_param_gather_on(job)) j["fp8_param_gather"] = true;
  if (job.knobs.fp8_attention) j["fp8_attention"] = true;
  if (job.knobs.tp_comm_overlap) j["tp_comm_overlap"] = true;
  if (job.knobs.param_gather_overlap) j["overlap_param_gather"] = true;
  if (job.knobs.fused_grouped_mlp) j["fused_grouped_mlp"] = true;
  add_ddp_bucket_json(j, job);
  add_megatron_list_json(j, job);  // recompute_modules, cuda_graphs
  add_fsdp_job_json(j, job);
  add_optimizer_state_json(j, job);
  add_moe_load_json(j, job);
}

void add_estimate_features(ojson& j, const Problem& p, const ParallelConfig& c) {
  if (c.cp > 1) {
    const CpAttention a = cp_attention(p, c, job_peak_flops(p), activation_element_bytes(p.job.dtype));
    j["context_parallel"] = {{"cp", c.cp},
                             {"cp_comm", to_string(p.job.cp_comm)},
                             {"kv_chunk_bytes", report_bytes(a.kv_chunk_bytes)},
                             {"ring_steps", a.steps},
                             {"step_attention_forward_s", report_number(a.step.forward_s)},
                             {"step_comm_forward_s", report_number(a.step_comm_forward_s)},
                             {"layer_exposed_forward_s", report_number(a.forward_exposed_s)},
                             {"layer_exposed_backward_s", report_number(a.backward_exposed_s)}};
  }
  if (p.job.compression != GradCompression::None && c.zero_stage == 0) {
    const CompressedReduction r = compressed_reduction(p, c, 0, grad_group(p.hardware, c));
    j["grad_compression"] = {{"method", grad_compression_text(p.job)},
                             {"bytes_sent", report_bytes(r.bytes_sent)},
                             {"uncompressed_bytes", report_bytes(r.uncompressed_bytes)},
                             {"comm_s", report_number(r.comm_s)},
                             {"compute_s", report_number(r.compute_s)},
                             {"warmup_steps", r.warmup_steps}};
  }
}

Result<bool> read_job_features(const ojson& j, const std::string& file, const std::string& at, Job& job) {
  auto text = [&](const char* key, std::string& out) -> Result<bool> {
    if (!j.is_object() || !j.contains(key)) return true;
    if (!j[key].is_string()) return make_error(file, at + "." + key, j[key].dump(), "must be a string", "");
    out = j[key].get<std::string>();
    return true;
  };
  std::string cp_comm = "p2p", fp8 = "none", gc = "none", kernel, acp = "megatron", loss;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"cp_comm", &cp_comm}, {"fp8", &fp8},
                          {"grad_compression", &gc}, {"attention_kernel", &kernel}, {"ac_policy", &acp},
                          {"cross_entropy", &loss}})
    if (auto r = text(key, *out); !r) return r.error();
  if (!loss.empty()) {
    auto k = parse_cross_entropy(loss);
    if (!k) return make_error(file, at + ".cross_entropy", loss, "unknown cross-entropy kernel", "unfused, fused, torch_fp32, te_inplace, te, flash_xentropy or generic");
    job.knobs.cross_entropy = *k;
  }
  if (j.is_object() && j.contains("train_metric_cross_entropies")) {
    const ojson& v = j["train_metric_cross_entropies"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000)
      return make_error(file, at + ".train_metric_cross_entropies", v.dump(), "must be a count from 0 to 1000", "e.g. 2");
    job.knobs.train_metric_cross_entropies = static_cast<int>(v.get<int64_t>());
  }
  if (!kernel.empty()) {
    auto k = parse_fused_kernel(kernel);
    if (!k) return make_error(file, at + ".attention_kernel", kernel, "unknown attention kernel", "flash2, flash1, triton, triton-ops or cudnn");
    job.knobs.fused_kernel = *k;
  }
  if (j.is_object() && j.contains("torch_compile")) {
    if (!j["torch_compile"].is_boolean())
      return make_error(file, at + ".torch_compile", j["torch_compile"].dump(), "must be true or false", "");
    if (job.framework != Framework::Torchtitan)
      return make_error(file, at + ".torch_compile", j["torch_compile"].dump(), "is torchtitan's compile option",
                        "framework torchtitan, or drop the key");
    job.knobs.torch_compile = j["torch_compile"].get<bool>();
  }
  if (j.is_object() && j.contains("moe_a2a_overlap")) {
    if (!j["moe_a2a_overlap"].is_boolean())
      return make_error(file, at + ".moe_a2a_overlap", j["moe_a2a_overlap"].dump(), "must be true or false", "");
    job.knobs.moe_a2a_overlap = j["moe_a2a_overlap"].get<bool>();
    if (job.knobs.moe_a2a_overlap && !runs_megatron_core_option(job.framework))
      return make_error(file, at + ".moe_a2a_overlap", "true",
                        "is Megatron-Core's overlap; framework " + std::string(to_string(job.framework)) + " does not run it",
                        "framework megatron or nemo, or drop the key");
  }
  if (j.is_object() && j.contains("moe_dispatcher")) {
    const ojson& v = j["moe_dispatcher"];
    const auto d = v.is_string() ? parse_moe_dispatcher(v.get<std::string>()) : std::nullopt;
    if (!d) return make_error(file, at + ".moe_dispatcher", v.dump(), "unknown dispatcher", "alltoall, deepep or hybridep");
    if (*d != MoeDispatcher::AllToAll && !runs_megatron_core_option(job.framework))
      return make_error(file, at + ".moe_dispatcher", v.dump(),
                        "is Megatron-Core's flex dispatcher; framework " + std::string(to_string(job.framework)) +
                            " does not run it",
                        "framework megatron or nemo, or drop the key");
    job.knobs.moe_dispatcher = *d;
  }
  if (j.is_object() && j.contains("te_attention")) {
    const ojson& v = j["te_attention"];
    const auto t = v.is_string() ? parse_te_attention_path(v.get<std::string>()) : std::nullopt;
    if (!t) return make_error(file, at + ".te_attention", v.dump(), "unknown attention path", "cudnn, flash_attn or unfused");
    if (*t != TeAttentionPath::Cudnn && !runs_megatron_core_option(job.framework))
      return make_error(file, at + ".te_attention", v.dump(),
                        "is Transformer Engine's attention path; framework " + std::string(to_string(job.framework)) +
                            " does not attend through it",
                        "framework megatron or nemo, or drop the key");
    job.knobs.te_attention = *t;
  }
  if (j.is_object() && j.contains("activation_offload_layers")) {
    const ojson& v = j["activation_offload_layers"];
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
      return make_error(file, at + ".activation_offload_layers", v.dump(), "must be a layer count >= 0", "e.g. 40");
    job.knobs.activation_offload_layers = static_cast<int>(v.get<int64_t>());
    if (job.knobs.activation_offload_layers > 0 && !runs_megatron_core_option(job.framework))
      return make_error(file, at + ".activation_offload_layers", v.dump(),
                        "is Megatron-Core's CPU offloading; framework " + std::string(to_string(job.framework)) +
                            " does not run it",
                        "framework megatron or nemo, or drop the key");
  }
  for (const auto& [key, knob] : {std::pair{"tp_comm_overlap", &job.knobs.tp_comm_overlap},
                                   std::pair{"overlap_param_gather", &job.knobs.param_gather_overlap},
                                   std::pair{"fused_grouped_mlp", &job.knobs.fused_grouped_mlp}}) {
    if (!j.is_object() || !j.contains(key)) continue;
    if (!j[key].is_boolean()) return make_error(file, at + "." + key, j[key].dump(), "must be true or false", "");
    *knob = j[key].get<bool>();
    if (*knob && !runs_megatron_core_option(job.framework))
      return make_error(file, at + "." + key, "true",
                        "is Megatron-Core's overlap; framework " + std::string(to_string(job.framework)) + " does not run it",
                        "framework megatron or nemo, or drop the key");
  }
  if (auto r = read_ddp_bucket_json(j, file, at, job); !r) return r.error();  // cli/ddp_bucket_option.h
  if (auto r = read_megatron_list_json(j, file, at, job); !r) return r.error();  // recompute_modules, cuda_graphs
  auto c = parse_cp_comm(cp_comm);
  if (!c) return make_error(file, at + ".cp_comm", cp_comm, "unknown CP exchange", "p2p, all_gather, a2a or torch_all_gather");
  job.cp_comm = *c;
  auto f = parse_fp8_recipe(fp8);
  if (!f)
    return make_error(file, at + ".fp8", fp8, "unknown FP8 recipe", "none, delayed, current, blockwise, mxfp8 or rowwise");
  job.fp8 = *f;
  if (j.is_object() && j.contains("fp8_param_gather")) {  // after the recipe, which it needs
    if (!j["fp8_param_gather"].is_boolean())
      return make_error(file, at + ".fp8_param_gather", j["fp8_param_gather"].dump(), "must be true or false", "");
    job.knobs.fp8_param_gather = j["fp8_param_gather"].get<bool>();
    if (job.knobs.fp8_param_gather)
      if (auto ok = check_fp8_param_gather(job, file, at + ".fp8_param_gather"); !ok) return ok.error();
  }
  if (j.is_object() && j.contains("fp8_attention")) {  // after the recipe, which it needs
    if (!j["fp8_attention"].is_boolean())
      return make_error(file, at + ".fp8_attention", j["fp8_attention"].dump(), "must be true or false", "");
    job.knobs.fp8_attention = j["fp8_attention"].get<bool>();
    if (job.knobs.fp8_attention)
      if (auto ok = check_fp8_attention(job, file, at + ".fp8_attention"); !ok) return ok.error();
  }
  auto a = parse_ac_policy(acp);
  if (!a) return make_error(file, at + ".ac_policy", acp, "unknown activation-checkpoint policy",
                            "megatron, torchtitan-op or every-N-layers");
  job.ac_policy = *a;
  if (auto r = read_fsdp_job_json(j, file, at, job); !r) return r.error();
  if (auto r = read_optimizer_state_json(j, file, at, job); !r) return r.error();
  if (auto r = read_moe_load_json(j, file, at, job); !r) return r.error();
  return parse_grad_compression(gc, file, at + ".grad_compression", job);
}

}  // namespace meshplan::cli
