// Names, parsing and layout rules of context parallelism, FP8 recipes and gradient compression.
#include "core/job_features.h"

#include <cstdlib>

#include "core/checked.h"
#include "core/megatron_overlap.h"
#include "core/cuda_graphs.h"
#include "core/recompute_modules.h"

namespace meshplan {

const char* to_string(CpComm c) {
  switch (c) {
    case CpComm::P2p: return "p2p";
    case CpComm::AllGather: return "all_gather";
    case CpComm::AllToAll: return "a2a";
    case CpComm::TorchAllGather: return "torch_all_gather";
  }
  return "?";
}

const char* to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::None: return "none";
    case Fp8Recipe::Delayed: return "delayed";
    case Fp8Recipe::Current: return "current";
    case Fp8Recipe::Blockwise: return "blockwise";
    case Fp8Recipe::Mxfp8: return "mxfp8";
    case Fp8Recipe::Rowwise: return "rowwise";
  }
  return "?";
}

const char* to_string(GradCompression g) {
  switch (g) {
    case GradCompression::None: return "none";
    case GradCompression::PowerSgd: return "powersgd";
    case GradCompression::OneBitAdam: return "onebit-adam";
    case GradCompression::OneBitLamb: return "onebit-lamb";
    case GradCompression::TopK: return "topk";
  }
  return "?";
}

std::optional<CpComm> parse_cp_comm(const std::string& s) {
  for (auto c : {CpComm::P2p, CpComm::AllGather, CpComm::AllToAll, CpComm::TorchAllGather})
    if (s == to_string(c)) return c;
  if (s == "all-gather") return CpComm::AllGather;
  return std::nullopt;
}

std::optional<Fp8Recipe> parse_fp8_recipe(const std::string& s) {
  for (auto r : {Fp8Recipe::None, Fp8Recipe::Delayed, Fp8Recipe::Current, Fp8Recipe::Blockwise, Fp8Recipe::Mxfp8,
                 Fp8Recipe::Rowwise})
    if (s == to_string(r)) return r;
  return std::nullopt;
}

static bool parse_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

Result<bool> parse_grad_compression(const std::string& s, const std::string& where, const std::string& field,
                                    Job& job) {
  const std::string hint = "use none, powersgd:RANK, onebit-adam, onebit-lamb or topk:FRACTION, e.g. powersgd:4";
  const auto colon = s.find(':');
  const std::string kind = s.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : s.substr(colon + 1);
  double v = 0.0;
  job.powersgd_rank = 0;
  job.topk_fraction = 0.0;
  if ((kind == "none" || kind == "onebit-adam" || kind == "onebit-lamb") && colon == std::string::npos) {
    job.compression = kind == "none"          ? GradCompression::None
                      : kind == "onebit-adam" ? GradCompression::OneBitAdam
                                              : GradCompression::OneBitLamb;
    return true;
  }
  if (kind == "powersgd") {
    if (!parse_number(arg, v) || v != static_cast<double>(static_cast<int64_t>(v)) || v < 1 || v > 1024)
      return make_error(where, field, s, "PowerSGD needs an integer rank in 1..1024", "e.g. powersgd:4");
    job.compression = GradCompression::PowerSgd;
    job.powersgd_rank = static_cast<int64_t>(v);
    return true;
  }
  if (kind == "topk") {
    if (!parse_number(arg, v) || !(v > 0.0 && v < 1.0))
      return make_error(where, field, s, "top-k needs the fraction of entries sent, in (0, 1)", "e.g. topk:0.01");
    job.compression = GradCompression::TopK;
    job.topk_fraction = v;
    return true;
  }
  return make_error(where, field, s, "unknown gradient compression", hint);
}

std::string grad_compression_text(const Job& job) {
  switch (job.compression) {
    case GradCompression::PowerSgd: return "powersgd:" + std::to_string(job.powersgd_rank);
    case GradCompression::TopK: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "topk:%g", job.topk_fraction);
      return buf;
    }
    default: return to_string(job.compression);
  }
}

int64_t batch_dp(const Job& job, int tp, int cp, int pp) {
  const auto mp = checked_product({int64_t{tp}, int64_t{cp}, int64_t{pp}});
  return mp && *mp >= 1 && job.gpus % *mp == 0 ? job.gpus / *mp : 0;
}

bool fp8_param_gather_on(const Job& job) {
  return job.knobs.fp8_param_gather && job.fp8 != Fp8Recipe::None && job.fp8 != Fp8Recipe::Rowwise;
}

std::string fp8_param_gather_zero_rule(const Job& job, int zero) {
  if (!fp8_param_gather_on(job) || zero >= 1) return "";
  return "needs Megatron-Core's distributed optimizer (ZeRO 1) or Megatron-FSDP (ZeRO 3); ZeRO 0 runs no "
         "sharded all-gather of FP8 weights";
}

std::string compression_zero_rule(GradCompression g, int zero) {
  if (g == GradCompression::None || zero == 0) return "";
  switch (g) {
    case GradCompression::PowerSgd:
    case GradCompression::TopK:
      return "is a PyTorch DDP communication hook that replaces DDP's all-reduce; ZeRO " + std::to_string(zero) +
             " reduce-scatters gradients instead";
    case GradCompression::OneBitAdam:
    case GradCompression::OneBitLamb:
      return "is a DeepSpeed optimizer with its own compressed all-reduce, which does not support ZeRO " +
             std::to_string(zero);
    default: return "";
  }
}

static std::string str(int64_t v) { return std::to_string(v); }

static void check_cp(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  if (c.cp <= 1) return;
  const int64_t chunks = 2 * static_cast<int64_t>(c.cp);
  if (p.job.seq_len % chunks != 0)
    e.push_back(make_error(w, "--cp", str(c.cp),
                           "needs --seq " + str(p.job.seq_len) + " divisible by 2*cp=" + str(chunks) +
                               " (causal load balancing splits each sequence into 2*cp chunks)",
                           "choose cp so that seq % (2*cp) == 0"));
  if (p.job.knobs.attention != AttentionKind::Fused)
    e.push_back(make_error(w, "--cp", str(c.cp), "needs a fused attention kernel (Transformer Engine runs CP "
                                                 "only in its flash/cuDNN attention)",
                           "drop --attention materialized or use --cp 1"));
  if (p.job.cp_comm == CpComm::AllToAll && c.tp >= 1 &&
      ((p.model.num_heads / c.tp) % c.cp != 0 || (p.model.num_kv_heads / c.tp) % c.cp != 0))
    e.push_back(make_error(w, "--cp", str(c.cp),
                           "a2a scatters heads: heads/tp=" + str(p.model.num_heads / c.tp) +
                               " and kv heads/tp=" + str(p.model.num_kv_heads / c.tp) + " must be multiples of cp",
                           "use --cp-comm p2p or all_gather"));
}

void validate_features(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  check_cp(p, c, w, e);
  if (p.job.fp8 != Fp8Recipe::None && p.hardware.peak_flops_for("fp8") <= 0.0)
    e.push_back(make_error(w, "--fp8", to_string(p.job.fp8),
                           "hardware profile " + p.hardware.name + " lists no fp8 peak (no FP8 tensor cores)",
                           "drop --fp8, or use a Hopper/Blackwell profile such as h100-80gb-sxm"));
  // torchao's row-wise recipe is costed from a measured speedup table, not from a GEMM rate.
  if (p.job.fp8 == Fp8Recipe::Rowwise && p.hardware.fp8_rowwise_speedup.empty())
    e.push_back(make_error(w, "--fp8", "rowwise",
                           "hardware profile " + p.hardware.name + " has no measured gpu.fp8_rowwise_speedup table "
                           "(torchao row-wise linears are costed from it)",
                           "use an H100/H200 profile, add the table (hardware-profiles/README.md), or --fp8 current"));
  check_ac_policy(p, c, w, e);
  check_recompute_modules(p, w, e);
  check_cuda_graphs(p, c, w, e);
  const std::string why = compression_zero_rule(p.job.compression, c.zero_stage);
  if (!why.empty())
    e.push_back(make_error(w, "--grad-compression", grad_compression_text(p.job), why, "use --zero 0"));
  if (const std::string fp8 = fp8_param_gather_zero_rule(p.job, c.zero_stage); !fp8.empty())
    e.push_back(make_error(w, "--fp8-param-gather", "true", fp8, "use --zero 1 (or 3), or drop --fp8-param-gather"));
  if (const std::string pa = precision_aware_zero_rule(p.job.knobs.optimizer_states, c.zero_stage); !pa.empty())
    e.push_back(make_error(w, "--precision-aware-optimizer", "true", pa,
                           "use --zero 1 (or 2, 3), or drop the optimizer-state dtypes"));
  if (const std::string tp = tp_comm_overlap_rule(p.job, c); !tp.empty())
    e.push_back(make_error(w, "--tp-comm-overlap", "true", tp, "add --sequence-parallel, or drop --tp-comm-overlap"));
  if (const std::string pg = param_gather_overlap_rule(p.job, c); !pg.empty())
    e.push_back(make_error(w, "--overlap-param-gather", "true", pg,
                           c.zero_stage != 1 ? "use --zero 1, or drop --overlap-param-gather"
                                             : "drop --no-dp-overlap, or drop --overlap-param-gather"));
}

}  // namespace meshplan
