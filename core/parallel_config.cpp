// Names, parsing and validation of ParallelConfig and Job.
#include "core/parallel_config.h"

#include "core/checked.h"
#include "core/job_features.h"
#include "core/limits.h"
#include "core/moe_config.h"
#include "core/hsdp_config.h"
#include "core/offload_config.h"
#include "core/pipeline_placement.h"

#include <algorithm>
#include <numeric>

namespace meshplan {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const char* to_string(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::GPipe: return "gpipe";
    case ScheduleKind::OneFOneB: return "1f1b";
    case ScheduleKind::Interleaved: return "interleaved";
    case ScheduleKind::ZeroBubbleH1: return "zb-h1";
    case ScheduleKind::DualPipeV: return "dualpipev";
  }
  return "?";
}

const char* to_string(ParamConvention c) {
  switch (c) {
    case ParamConvention::Default16: return "default";
    case ParamConvention::Megatron: return "megatron";
    case ParamConvention::Fp32Grads: return "fp32-grads";
  }
  return "?";
}

std::optional<Recompute> parse_recompute(const std::string& s) {
  for (auto r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (s == to_string(r)) return r;
  return std::nullopt;
}

std::optional<ScheduleKind> parse_schedule(const std::string& s) {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                 ScheduleKind::ZeroBubbleH1, ScheduleKind::DualPipeV})
    if (s == to_string(k)) return k;
  if (s == "zb" || s == "zbh1") return ScheduleKind::ZeroBubbleH1;
  return std::nullopt;
}

std::optional<ParamConvention> parse_param_convention(const std::string& s) {
  for (auto c : {ParamConvention::Default16, ParamConvention::Megatron, ParamConvention::Fp32Grads})
    if (s == to_string(c)) return c;
  if (s == "16") return ParamConvention::Default16;
  return std::nullopt;
}

ParamBytes param_bytes(ParamConvention c) {
  switch (c) {
    case ParamConvention::Default16: return {2.0, 2.0, 12.0};
    case ParamConvention::Megatron: return {2.0, 4.0, 12.0};
    case ParamConvention::Fp32Grads: return {4.0, 4.0, 12.0};
  }
  return {};
}

ParamBytes param_bytes(const Job& job) {
  ParamBytes pb = param_bytes(job.convention);
  // The 16-bit remainder of fp32 master weights (core/optimizer_states.h): bf16 weights that are not FP8
  // primary weights (with those Megatron-Core keeps the fp32 master itself).
  const bool remainders = job.dtype == "bf16" && !fp8_param_gather_on(job);
  pb.optimizer = optimizer_state_bytes(job.knobs.optimizer_states, remainders);
  return pb;
}

std::vector<int> layers_per_chunk(const ModelSpec& m, const ParallelConfig& cfg) {
  const int chunks = cfg.pp * std::max(1, cfg.virtual_stages);
  if (!cfg.layers_per_stage.empty()) return cfg.layers_per_stage;
  std::vector<int> out(chunks, static_cast<int>(m.num_layers / chunks));
  int extra = static_cast<int>(m.num_layers % chunks);
  // Extra layers go to the middle chunks: the first and last also carry embedding and LM head.
  int start = (chunks - extra) / 2;
  for (int i = 0; i < extra; ++i) out[start + i] += 1;
  return out;
}

static std::string str(int64_t v) { return std::to_string(v); }

bool layer_split_ok(const std::vector<int>& split, int64_t chunks, int64_t layers) {
  if (static_cast<int64_t>(split.size()) != chunks) return false;
  int64_t sum = 0;
  for (size_t i = 0; i < split.size(); ++i) {
    // Megatron's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split count the
    // embedding and the loss as pipeline layers: the first chunk may hold only the embedding and the last
    // only the final norm, LM head and loss. Every other chunk needs a transformer layer.
    const bool end = i == 0 || i + 1 == split.size();
    if (split[i] < 0 || (split[i] == 0 && !end)) return false;
    sum += split[i];
  }
  return sum == layers && sum > 0;
}

static std::string divisors_of(int64_t n, int64_t limit) {
  std::string s;
  for (int64_t d = 1; d <= n && d <= limit; ++d)
    if (n % d == 0) s += (s.empty() ? "" : ",") + str(d);
  return "{" + s + "}";
}

ErrorList validate_job(const Job& job, const std::string& where) {
  ErrorList e;
  limits::check_int(e, where, "--gpus", job.gpus, 1, limits::kMaxGpus, "e.g. --gpus 8");
  limits::check_int(e, where, "--global-batch", job.global_batch, 1, limits::kMaxGlobalBatch,
                    "sequences per optimizer step, e.g. 1024");
  limits::check_int(e, where, "--seq", job.seq_len, 1, limits::kMaxSeq, "e.g. 4096");
  if (e.empty() && !product_within({job.global_batch, job.seq_len}, limits::kMaxTokensPerStep))
    e.push_back(make_error(where, "--global-batch", str(job.global_batch),
                           "times --seq " + str(job.seq_len) + " exceeds " +
                               str(limits::kMaxTokensPerStep) + " tokens per step (accepted 1.." +
                               str(limits::kMaxTokensPerStep) + ")",
                           "tokens per step = global batch x sequence length"));
  return e;
}

static void check_tp(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  const ModelSpec& m = p.model;
  if (m.num_heads % c.tp != 0 || m.num_kv_heads % c.tp != 0)
    e.push_back(make_error(w, "--tp", str(c.tp),
                           "must divide num_attention_heads=" + str(m.num_heads) +
                               " and num_key_value_heads=" + str(m.num_kv_heads),
                           "try tp in " + divisors_of(std::gcd(m.num_heads, m.num_kv_heads), 64)));
  // TP stays inside one NVLink domain (a node on HGX; the whole rack on GB200 NVL72).
  const int domain = p.hardware.nvlink_domain();
  const std::string domain_name = p.hardware.nvlink_domain_gpus > 0 ? "nvlink_domain_gpus=" : "gpus_per_node=";
  if (c.tp > domain && !p.job.allow_tp_across_nodes)
    e.push_back(make_error(w, "--tp", str(c.tp),
                           "exceeds " + domain_name + str(domain) + " of " + p.hardware.name,
                           "keep TP inside a node, or pass --allow-tp-across-nodes"));
  else if (domain % c.tp != 0 && !p.job.allow_tp_across_nodes)
    // TP groups are blocks of tp consecutive ranks: unless tp divides the node, some straddle two.
    e.push_back(make_error(w, "--tp", str(c.tp),
                           "does not divide " + domain_name + str(domain) +
                               ", so some TP groups would straddle two nodes",
                           "use a tp that divides the node, or pass --allow-tp-across-nodes"));
  if (c.sequence_parallel && c.tp == 1)
    e.push_back(make_error(w, "--sequence-parallel", "true", "needs tp > 1",
                           "drop --sequence-parallel or raise --tp"));
}

static void check_pp(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  const int64_t L = p.model.num_layers;
  const int v = c.virtual_stages;
  if (c.schedule == ScheduleKind::DualPipeV) {
    check_dualpipev(c, w, e);  // core/pipeline_placement.h
  } else if (c.schedule != ScheduleKind::Interleaved && v != 1) {
    e.push_back(make_error(w, "--virtual-stages", str(v), "only the interleaved schedule uses it",
                           "use --schedule interleaved or --virtual-stages 1"));
  }
  if (c.schedule == ScheduleKind::Interleaved) {
    if (v < 2)
      e.push_back(make_error(w, "--virtual-stages", str(v), "interleaved needs v >= 2",
                             "e.g. --virtual-stages 2"));
    if (c.pp < 2)
      e.push_back(make_error(w, "--schedule", "interleaved", "needs pp >= 2", "use 1f1b"));
    if (c.num_micro_batches % c.pp != 0)
      e.push_back(make_error(w, "--micro-batch", str(c.micro_batch_size),
                             "interleaved needs micro-batches (" + str(c.num_micro_batches) +
                                 ") to be a multiple of pp=" + str(c.pp),
                             "change the micro-batch size or the global batch"));
  }
  const int64_t chunks = static_cast<int64_t>(c.pp) * std::max(1, v);
  if (c.layers_per_stage.empty() && chunks > L)
    e.push_back(make_error(w, "--pp", str(c.pp),
                           "pp*v=" + str(chunks) + " exceeds num_hidden_layers=" + str(L),
                           std::string("each pipeline chunk of an even split needs at least one layer") +
                               ((L + 2) % chunks == 0 && c.pp >= 2
                                    ? "; --pipeline-split embedding-loss gives the first chunk the embedding alone "
                                      "and the last the loss alone (Llama 3 405B's 126 layers over pp 16 x v 8)"
                                    : "")));
  if (!c.layers_per_stage.empty() && !layer_split_ok(c.layers_per_stage, chunks, L))
    e.push_back(make_error(w, "layers_per_stage",
                           str(std::accumulate(c.layers_per_stage.begin(), c.layers_per_stage.end(), int64_t{0})),
                           "needs pp*v=" + str(chunks) + " entries summing to " + str(L) +
                               ", positive except the first and the last chunk",
                           "omit it for an even split; 0 is allowed first (embedding only) and last (LM head "
                           "and loss only)"));
}

ErrorList validate_config(const Problem& p, const ParallelConfig& c, const std::string& w) {
  ErrorList e;
  if (c.tp < 1 || c.pp < 1 || c.dp < 1 || c.cp < 1) {
    e.push_back(make_error(w, "--tp/--pp", str(c.tp) + "/" + str(c.pp), "degrees must be >= 1",
                           "e.g. --tp 8 --pp 1"));
    return e;
  }
  // DP = gpus / (tp * cp * pp) (core/job_features.h batch_dp).
  const int64_t model_parallel = static_cast<int64_t>(c.tp) * c.pp * c.cp;
  const std::string mp_name = c.cp > 1 ? "tp*cp*pp=" : "tp*pp=";
  if (p.job.gpus % model_parallel != 0 || static_cast<int64_t>(c.dp) * model_parallel != p.job.gpus)
    e.push_back(make_error(w, "--gpus", str(p.job.gpus),
                           "not divisible by " + mp_name + str(model_parallel),
                           c.cp > 1 ? "use a GPU count that is a multiple of tp*cp*pp, or change tp/cp/pp"
                                    : "use a GPU count that is a multiple of tp*pp, or change tp/pp"));
  if (c.zero_stage < 0 || c.zero_stage > 3)
    e.push_back(make_error(w, "--zero", str(c.zero_stage), "must be 0, 1, 2 or 3", ""));
  if (c.micro_batch_size < 1 || c.num_micro_batches < 1)
    e.push_back(make_error(w, "--micro-batch", str(c.micro_batch_size), "must be >= 1", ""));
  else if (checked_product({c.micro_batch_size, c.num_micro_batches, c.dp}) != p.job.global_batch)
    e.push_back(make_error(w, "--global-batch", str(p.job.global_batch),
                           "not divisible by dp*micro_batch=" + str(c.dp) + "*" +
                               str(c.micro_batch_size),
                           "global batch must equal micro_batch x micro_batches x dp"));
  check_tp(p, c, w, e);
  check_pp(p, c, w, e);
  validate_features(p, c, w, e);
  for (Error& x : validate_moe_config(p, c, w)) e.push_back(std::move(x));  // EP/ETP (core/moe_config.h)
  for (Error& x : validate_offload_config(p, c, w)) e.push_back(std::move(x));  // core/offload_config.h
  for (Error& x : validate_hsdp_config(c, w)) e.push_back(std::move(x));          // core/hsdp_config.h
  return e;
}

}  // namespace meshplan
