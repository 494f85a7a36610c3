// Estimate reports: the meshplan.estimate/1 JSON object, its YAML twin and the human table.
#include "cli/report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "cli/feature_options.h"
#include "cli/feature_report.h"
#include "cli/report_json.h"
#include "core/human_format.h"
#include "core/framework.h"
#include "core/io.h"
#include "core/job_features.h"
#include "core/megatron_overlap.h"
#include "core/cuda_graphs.h"
#include "core/recompute_modules.h"
#include "core/te_attention_backend.h"
#include "costmodel/fp8_attention.h"
#include "costmodel/fp8_params.h"
#include "planner/plan_table.h"
#include "meshplan_version.h"

namespace meshplan::cli {

std::string format_number(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : (v < 0 ? "-inf" : "nan");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string format_gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

ojson report_number(double v) {
  if (!std::isfinite(v)) return nullptr;  // JSON has no inf/nan
  const double x = std::strtod(format_number(v).c_str(), nullptr);
  if (x == std::floor(x) && std::fabs(x) < 1e15) return static_cast<int64_t>(x);
  return x;
}

ojson report_bytes(double bytes) {
  if (!std::isfinite(bytes)) return nullptr;
  return static_cast<int64_t>(std::llround(bytes));
}

ojson job_object(const Job& job) {
  const ParamBytes pb = param_bytes(job);
  ojson bpp = {{"convention", to_string(job.convention)},
               {"weights", report_number(pb.weights)},
               {"gradients", report_number(pb.gradients)},
               {"optimizer", report_number(pb.optimizer)},
               {"total", report_number(pb.weights + pb.gradients + pb.optimizer)}};
  ojson j = {{"gpus", job.gpus},         {"global_batch", job.global_batch},
             {"seq_len", job.seq_len},   {"dtype", job.dtype},
             {"attention", to_string(job.knobs.attention)},
             {"framework", to_string(job.framework)},
             {"bytes_per_param", bpp},   {"allow_tp_across_nodes", job.allow_tp_across_nodes}};
  add_job_features(j, job);  // cp_comm, fp8, grad_compression when set
  return j;
}

ojson config_object(const ParallelConfig& c) {
  ojson j = {{"tp", c.tp},
             {"pp", c.pp},
             {"dp", c.dp},
             {"zero_stage", c.zero_stage},
             {"micro_batch_size", c.micro_batch_size},
             {"num_micro_batches", c.num_micro_batches},
             {"recompute", to_string(c.recompute)},
             {"sequence_parallel", c.sequence_parallel},
             {"schedule", to_string(c.schedule)},
             {"virtual_stages", c.virtual_stages},
             {"dp_overlap", c.dp_overlap}};
  j["layers_per_stage"] = c.layers_per_stage;  // empty = even split (layers_per_chunk)
  add_config_features(j, c);                   // "cp" when > 1
  if (c.ep > 1 || c.etp > 1) {  // expert layouts only, so dense outputs stay byte-identical
    j["ep"] = c.ep;
    j["etp"] = c.etp;
  }
  return j;
}

static ojson memory_object(const StepEstimate& e) {
  const MemoryBreakdown& m = e.memory;
  return {{"peak_bytes", report_bytes(m.peak_bytes)},
          {"weights_bytes", report_bytes(m.weights_bytes)},
          {"gradients_bytes", report_bytes(m.gradients_bytes)},
          {"optimizer_bytes", report_bytes(m.optimizer_bytes)},
          {"activations_bytes", report_bytes(m.activations_bytes)},
          {"other_bytes", report_bytes(m.other_bytes)},
          {"usable_bytes", report_bytes(e.usable_memory_bytes)},
          {"worst_stage", m.worst_stage}};
}

static ojson time_object(const TimeBreakdown& t) {
  ojson j = {{"step_s", report_number(t.step_s)},         {"compute_s", report_number(t.compute_s)},
             {"tp_comm_s", report_number(t.tp_comm_s)},   {"pp_comm_s", report_number(t.pp_comm_s)},
             {"pp_bubble_s", report_number(t.pp_bubble_s)}, {"dp_comm_s", report_number(t.dp_comm_s)},
             {"optimizer_s", report_number(t.optimizer_s)}};
  // Only where the host bounds Megatron-Core's eager layers (costmodel/host_launch.h): a part of compute_s.
  if (t.host_wait_s > 0.0) j["host_wait_s"] = report_number(t.host_wait_s);
  return j;
}

static ojson throughput_object(const Throughput& t) {
  return {{"tokens_per_s", report_number(t.tokens_per_s)},
          {"tflops_per_gpu", report_number(t.tflops_per_gpu)},
          {"mfu", report_number(t.mfu)},
          {"hfu", report_number(t.hfu)}};
}

static std::string fnv1a64_hex(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

ojson provenance_object(const Problem& p) {
  const std::string inputs =
      model_to_json(p.model) + "\n" + hardware_to_yaml(p.hardware) + "\n" + job_object(p.job).dump();
  return {{"tool", "meshplan"},
          {"version", MESHPLAN_VERSION},
          {"git_sha", MESHPLAN_GIT_SHA},
          {"inputs_fnv1a64", fnv1a64_hex(inputs)}};
}

ojson estimate_object(const Problem& p, const StepEstimate& e) {
  ojson j;
  j["schema"] = "meshplan.estimate/1";
  j["model"] = p.model.name;
  j["hardware"] = p.hardware.name;
  // Exact integer counts (validate_model guarantees they fit in int64), not 6-digit roundings.
  j["parameters"] = p.model.exact_parameters().value_or(0);
  j["active_parameters"] = p.model.exact_active_parameters().value_or(0);
  // The MTP modules' own weights (core/model_params.h mtp_module), apart from the main model's count.
  if (p.model.mtp_layers > 0) j["mtp_parameters"] = static_cast<int64_t>(std::llround(p.model.mtp_parameters()));
  j["job"] = job_object(p.job);
  j["config"] = config_object(e.config);
  j["memory"] = memory_object(e);
  j["time"] = time_object(e.time);
  j["throughput"] = throughput_object(e.throughput);
  j["fits"] = e.fits;
  j["bottleneck"] = to_string(e.bottleneck);
  add_estimate_features(j, p, e.config);  // "context_parallel", "grad_compression" when in use
  j["provenance"] = provenance_object(p);
  return j;
}

std::string estimate_json(const Problem& p, const StepEstimate& e) {
  return format_json(estimate_object(p, e).dump());
}

std::string estimate_yaml(const Problem& p, const StepEstimate& e) {
  return json_to_yaml(estimate_object(p, e).dump());
}

std::string json_text_to_yaml(const std::string& json_text) { return json_to_yaml(json_text); }

std::string json_text_pretty(const std::string& json_text) { return format_json(json_text); }

std::string provenance_json(const Problem& p) { return provenance_object(p).dump(); }

// ---- table ----

static std::string row(const std::string& label, const std::string& value, const std::string& extra = "") {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-22s %14s  %s", label.c_str(), value.c_str(), extra.c_str());
  std::string s = buf;
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s + "\n";
}

static std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%5.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

static std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f s", s);
  return buf;
}

// ", optimizer states main/exp_avg/exp_avg_sq" when the precision-aware optimizer's dtypes are not all fp32.
static std::string optimizer_states_text(const Job& job) {
  const OptimizerStates& s = job.knobs.optimizer_states;
  if (default_states(s)) return "";
  return std::string(", optimizer states ") + to_string(s.main_params) + "/" + to_string(s.exp_avg) + "/" +
         to_string(s.exp_avg_sq);
}

static std::string header(const Problem& p, const ParallelConfig& c) {
  std::ostringstream o;
  const ParamBytes pb = param_bytes(p.job);
  o << "meshplan estimate: " << p.model.name << " (" << human_count(p.model.num_parameters(), "params")
    << active_parameters_text(p.model) << ") on " << p.job.gpus << " x " << p.hardware.name << "\n";
  o << "job:    global batch " << p.job.global_batch << " x seq " << p.job.seq_len << " tokens ("
    << human_count(static_cast<double>(p.job.global_batch) * p.job.seq_len, "tokens") << " per step), "
    << p.job.dtype << ", " << format_number(pb.weights + pb.gradients + pb.optimizer)
    << " bytes/param (" << to_string(p.job.convention) << optimizer_states_text(p.job)
    << "), framework " << to_string(p.job.framework)
    << ", " << to_string(p.job.knobs.attention) << " attention"
    << (p.job.fp8 != Fp8Recipe::None ? std::string(", FP8 ") + to_string(p.job.fp8) + " (linear GEMMs)" : "")
    << (p.job.compression != GradCompression::None ? ", grad compression " + grad_compression_text(p.job) : "")
    << (p.job.knobs.moe_a2a_overlap ? ", EP all-to-all overlapped (--moe-a2a-overlap)" : "")
    << (p.job.knobs.moe_dispatcher != MoeDispatcher::AllToAll
            ? std::string(", flex dispatcher (") + to_string(p.job.knobs.moe_dispatcher) + ")"
            : "")
    << (p.job.knobs.activation_offload_layers > 0
            ? ", activations of " + std::to_string(p.job.knobs.activation_offload_layers) + " layers offloaded to host"
            : "")
    << (fp8_primary_weights(p) ? ", FP8 primary weights (--fp8-param-gather)" : "")
    << (!fp8_attention_dtype(p.job).empty() ? ", " + fp8_attention_dtype(p.job) + " attention (--fp8-attention)" : "")
    << (tp_comm_overlap_on(p.job, c) ? ", TP communication under the GEMMs (--tp-comm-overlap)" : "")
    << (param_gather_overlap_on(p.job, c) ? ", weight all-gather under the next forward (--overlap-param-gather)"
                                          : "")
    << "\n";
  o << "config: tp=" << c.tp << " pp=" << c.pp << " dp=" << c.dp << (c.cp > 1 ? " cp=" + std::to_string(c.cp) : "")
    << " zero=" << c.zero_stage << (c.shard_group > 0 ? " shard_group=" + std::to_string(c.shard_group) : "")
    << " micro_batch=" << c.micro_batch_size << " micro_batches=" << c.num_micro_batches
    << " recompute=" << to_string(c.recompute)
    << (c.recompute == Recompute::Selective && p.job.knobs.recompute_modules != 0
            ? "[" + recompute_modules_text(p.job.knobs.recompute_modules) + "]"
            : "")
    << " sp=" << (c.sequence_parallel ? "on" : "off")
    << (p.job.knobs.cuda_graphs != 0 ? " graphs=[" + cuda_graph_scopes_text(p.job.knobs.cuda_graphs) + "]" : "")
    << " schedule=" << to_string(c.schedule) << " v=" << c.virtual_stages
    << (c.layers_per_stage.empty() ? "" : " layers=" + layers_text(c.layers_per_stage))
    << (c.ep > 1 || c.etp > 1 ? " ep=" + std::to_string(c.ep) + " etp=" + std::to_string(c.etp) : "") << "\n";
  return o.str();
}

static std::string memory_table(const StepEstimate& e) {
  const MemoryBreakdown& m = e.memory;
  std::string s = "memory per GPU (worst stage " + std::to_string(m.worst_stage) + "):\n";
  s += row("weights", format_gb(m.weights_bytes));
  s += row("gradients", format_gb(m.gradients_bytes));
  s += row("optimizer", format_gb(m.optimizer_bytes));
  s += row("activations", format_gb(m.activations_bytes));
  s += row("other", format_gb(m.other_bytes));
  s += row("peak", format_gb(m.peak_bytes),
           "of " + format_gb(e.usable_memory_bytes) + " usable: " + (e.fits ? "fits" : "DOES NOT FIT"));
  return s;
}

static std::string time_table(const TimeBreakdown& t) {
  std::string s = "time per step (exposed):\n";
  s += row("compute", seconds(t.compute_s), percent(t.compute_s, t.step_s));
  if (t.host_wait_s > 0.0)  // costmodel/host_launch.h; --cuda-graphs captures it away
    s += row("  of which host wait", seconds(t.host_wait_s), percent(t.host_wait_s, t.step_s));
  s += row("tp communication", seconds(t.tp_comm_s), percent(t.tp_comm_s, t.step_s));
  s += row("pp bubble", seconds(t.pp_bubble_s), percent(t.pp_bubble_s, t.step_s));
  s += row("pp communication", seconds(t.pp_comm_s), percent(t.pp_comm_s, t.step_s));
  s += row("dp communication", seconds(t.dp_comm_s), percent(t.dp_comm_s, t.step_s));
  s += row("optimizer", seconds(t.optimizer_s), percent(t.optimizer_s, t.step_s));
  s += row("step", seconds(t.step_s));
  return s;
}

std::string estimate_table(const Problem& p, const StepEstimate& e) {
  const Throughput& t = e.throughput;
  std::string s = header(p, e.config) + "\n" + memory_table(e) + "\n" + time_table(e.time) + "\n";
  s += "throughput:\n";
  s += row("tokens/s", human_count(t.tokens_per_s));
  s += row("TFLOP/s per GPU", format_number(t.tflops_per_gpu));
  s += row("MFU", percent(t.mfu, 1.0));
  s += row("HFU", percent(t.hfu, 1.0));
  s += "bottleneck: " + std::string(to_string(e.bottleneck)) + "\n";
  // A config that describes MTP modules the run does not train (costmodel/mtp.h): say how to train them.
  if (p.model.checkpoint_mtp_layers > 0 && p.model.mtp_layers == 0)
    s += "note: " + p.model.name + "'s config describes " + std::to_string(p.model.checkpoint_mtp_layers) +
         " multi-token-prediction module(s) (num_nextn_predict_layers), not trained here: --mtp-layers " +
         std::to_string(p.model.checkpoint_mtp_layers) + " trains them (--framework megatron or nemo)\n";
  // A release whose TE has no fused attention for these head dims here (core/te_attention_backend.h).
  if (const std::string te = te_attention_note(p.job.knobs, p.model, p.hardware.compute_capability); !te.empty())
    s += "note: " + te + "\n";
  return s;
}

std::string render_estimate(const Problem& p, const StepEstimate& e, const std::string& format) {
  if (format == "json") return estimate_json(p, e);
  if (format == "yaml") return estimate_yaml(p, e);
  return estimate_table(p, e);
}

}  // namespace meshplan::cli
