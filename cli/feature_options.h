// CLI flags of the issue-11 features (--cp, --cp-comm, --fp8, --grad-compression), their JSON in
// reports and plan files, kept apart so the shared option and report code only calls in.
#pragma once
#include <string>

#include "cli/fsdp_options.h"
#include "cli/megatron_list_options.h"
#include "cli/moe_load_options.h"
#include "cli/optimizer_state_options.h"
#include "cli/report_json.h"
#include "core/error.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

struct FeatureOptions {
  std::string cp_comm = "p2p";           // --cp-comm p2p|all_gather|a2a|torch_all_gather
  std::string fp8 = "none";              // --fp8 none|delayed|current|blockwise|mxfp8
  std::string grad_compression = "none"; // --grad-compression none|powersgd:R|onebit-adam|onebit-lamb|topk:F
  std::string attention_kernel;          // --attention-kernel flash2|flash1|triton|cudnn ("" = the framework's)
  std::string cudnn_version;             // --cudnn-version 9.17.0 ("" = the profile's newest cudnn curve)
  std::string te_version;                // --te-version 2.2 ("" = today's: core/te_attention_backend.h)
  std::string ac_policy = "megatron";    // --ac-policy megatron|torchtitan-op|every-N-layers
  std::string torch_compile;             // --torch-compile on|off ("" = the framework's: off for torchtitan)
  std::string cross_entropy;             // --cross-entropy unfused|fused|generic ("" = the framework's)
  int train_metric_cross_entropies = 0;  // --train-metric-cross-entropies (Composer's train metrics: 2)
  bool moe_a2a_overlap = false;          // --moe-a2a-overlap (Megatron-Core --overlap-moe-expert-parallel-comm)
  std::string moe_dispatcher = "alltoall";  // --moe-dispatcher alltoall|deepep|hybridep (core/moe_dispatcher.h)
  int activation_offload_layers = 0;     // --activation-offload-layers (Megatron-Core --cpu-offloading-num-layers)
  bool fp8_param_gather = false;         // --fp8-param-gather (Megatron-Core: FP8 primary weights)
  bool fp8_attention = false;            // --fp8-attention (Megatron-Core --fp8-dot-product-attention)
  bool tp_comm_overlap = false;          // --tp-comm-overlap (Megatron-Core: TE userbuffers TP overlap)
  bool overlap_param_gather = false;     // --overlap-param-gather (Megatron-Core: distributed optimizer)
  bool fused_grouped_mlp = false;        // --fused-grouped-mlp (Megatron-Core: TE op-fuser expert MLP)
  int64_t ddp_bucket_size = 0;           // --ddp-bucket-size (Megatron-Core DDP bucket, parameters; cli/ddp_bucket_option.h)
  MegatronListOptions lists;             // --recompute-modules, --cuda-graphs (cli/megatron_list_options.h)
  FsdpOptions fsdp;                      // --fsdp-forward-prefetch, --fsdp-backward-prefetch (cli/fsdp_options.h)
  OptimizerStateOptions states;          // --main-params-dtype, --exp-avg-dtype, --exp-avg-sq-dtype
  MoeLoadOptions moe_load;               // --moe-imbalance, --moe-capacity-factor (cli/moe_load_options.h)
  CLI::App* app = nullptr;
};

/// Adds --cp-comm, --fp8, --grad-compression, --attention-kernel, --ac-policy, --torch-compile,
/// --cross-entropy, --train-metric-cross-entropies, --moe-a2a-overlap, --moe-dispatcher, --activation-offload-layers, --fp8-param-gather, --tp-comm-overlap,
/// --overlap-param-gather, --fused-grouped-mlp, --ddp-bucket-size, --recompute-modules and --cuda-graphs (job-level flags), FSDP's prefetch flags (cli/fsdp_options.h)
/// and the precision-aware optimizer's state dtypes (cli/optimizer_state_options.h).
void add_feature_options(CLI::App* sub, FeatureOptions& o);
/// Adds --cp (a configuration flag) bound to `cp`.
void add_cp_option(CLI::App* sub, int& cp);
/// Parses the flags into the job; one Error naming the flag otherwise.
Result<bool> apply_feature_options(const FeatureOptions& o, Job& job);
/// Flags given on the command line that override a plan file's job.
Result<bool> apply_feature_overrides(const FeatureOptions& o, Job& job);

/// Adds "cp" (and the CP exchange) to a config object when cp > 1, and the job's FP8 recipe and
/// gradient compression when set: cp = 1 / no FP8 / no compression leave the JSON unchanged; the
/// fused attention kernel ("attention_kernel"), "torch_compile" and "cross_entropy" only where they
/// differ from the framework's; "train_metric_cross_entropies" when above 0; "moe_dispatcher" when not alltoall; "moe_a2a_overlap", "activation_offload_layers", "fp8_param_gather", "fp8_attention",
/// "tp_comm_overlap", "overlap_param_gather" and "fused_grouped_mlp" only when on, "ddp_bucket_size" when set, "recompute_modules"
/// and "cuda_graphs" (lists of names) when given.
void add_config_features(ojson& config, const ParallelConfig& c);
void add_job_features(ojson& job_json, const Job& job);
/// Reads the job's features back from a plan file's job object (absent keys: the defaults);
/// the first bad value as an Error naming `at`.<key>.
Result<bool> read_job_features(const ojson& j, const std::string& file, const std::string& at, Job& job);

}  // namespace meshplan::cli
