// trace_json: Chrome / Perfetto trace-event JSON written by hand (the simulator uses no JSON library).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/pipeline_placement.h"
#include "simulator/analysis.h"
#include "simulator/timeline_text.h"

namespace meshplan {

namespace {

// Microseconds with nanosecond precision, e.g. 1234567 ns -> "1234.567"; integer arithmetic
// keeps the text byte-identical across runs and platforms.
void append_us(std::string& out, Nanoseconds ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  out += buf;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

const char* category(const Span& s) {
  if (s.stream == Stream::P2p) return "pp_comm";
  if (s.stream == Stream::Dp) return s.kind == ActionKind::ReduceGrads ? "dp_reduce" : "zero_gather";
  switch (s.kind) {
    case ActionKind::Forward: return "forward";
    case ActionKind::Backward: return "backward";
    case ActionKind::BackwardWeight: return "weight_grad";
    case ActionKind::OptimizerStep: return "optimizer";
    default: return "other";
  }
}

std::string span_name(const Span& s) {
  std::string n = to_string(s.kind);
  if (s.stream == Stream::Dp) {
    if (s.kind == ActionKind::ReduceGrads)  // per step (R) or, ZeRO-2/3, per micro-batch (RS)
      return s.micro_batch < 0 ? "R." + std::to_string(s.chunk)
                               : "RS" + std::to_string(s.micro_batch) + "." + std::to_string(s.chunk);
    if (s.kind == ActionKind::OptimizerStep) return "AG weights";
    n = "AG " + n;  // ZeRO-3 gather for that pass
  }
  if (s.kind == ActionKind::OptimizerStep) return n;
  return n + std::to_string(s.micro_batch) + "." + std::to_string(s.chunk);
}

void metadata(std::string& out, const char* what, int pid, int tid, const std::string& name) {
  out += "{\"name\":\"";
  out += what;
  out += "\",\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"args\":{\"name\":\"" + escape(name) + "\"}},\n";
}

// Stashed activations per lane over time: + at each forward's start, - at the end of the op that
// releases it (B, or W when the backward is split; the end of its last ZeRO-3 piece), as the
// engine counts them.
void activation_counters(std::string& out, const SimResult& r) {
  const ActionKind release = r.split_backward ? ActionKind::BackwardWeight : ActionKind::Backward;
  std::vector<std::vector<std::pair<Nanoseconds, double>>> ev(r.lanes.size());
  std::map<std::tuple<int, int, int>, Nanoseconds> release_end;  // (lane, chunk, mb) -> last piece end
  for (const Span& s : r.spans) {
    if (s.stream != Stream::Compute) continue;
    if (s.kind == ActionKind::Forward && s.piece == 0)
      ev[s.lane].push_back({s.start_ns, r.chunk_activation_bytes[placed_chunk(r.kind, r.pp, s.lane % r.pp, s.chunk)]});
    if (s.kind == release) {
      Nanoseconds& e = release_end[{s.lane, s.chunk, s.micro_batch}];
      e = std::max(e, s.end_ns);
    }
  }
  for (const auto& [key, end] : release_end) {
    const auto [lane, chunk, mb] = key;
    (void)mb;
    ev[lane].push_back({end, -r.chunk_activation_bytes[placed_chunk(r.kind, r.pp, lane % r.pp, chunk)]});
  }
  for (size_t lane = 0; lane < ev.size(); ++lane) {
    auto& e = ev[lane];
    // At equal times a release comes first: the engine frees a stash before the next forward starts.
    std::stable_sort(e.begin(), e.end(), [](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && a.second < 0 && b.second >= 0);
    });
    double live = 0;
    for (const auto& [t, d] : e) {
      live += d;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6f", std::max(0.0, live) / 1e9);
      out += "{\"name\":\"activations (GB)\",\"ph\":\"C\",\"pid\":" + std::to_string(lane) + ",\"ts\":";
      append_us(out, t);
      out += ",\"args\":{\"stashed\":" + std::string(buf) + "}},\n";
    }
  }
}

}  // namespace

std::string trace_json(const SimResult& r, const std::string& title) {
  std::string out = "{\"traceEvents\":[\n";
  out.reserve(r.spans.size() * 140 + 4096);
  static const char* streams[] = {"compute", "p2p", "dp"};
  for (int lane = 0; lane < static_cast<int>(r.lanes.size()); ++lane) {
    metadata(out, "process_name", lane, 0, lane_name(r, lane));
    out += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + std::to_string(lane) +
           ",\"tid\":0,\"args\":{\"sort_index\":" + std::to_string(lane) + "}},\n";
    for (int t = 0; t < 3; ++t) metadata(out, "thread_name", lane, t, streams[t]);
  }
  for (const Span& s : r.spans) {
    out += "{\"name\":\"" + span_name(s) + "\",\"cat\":\"" + category(s) + "\",\"ph\":\"X\",\"ts\":";
    append_us(out, s.start_ns);
    out += ",\"dur\":";
    append_us(out, s.end_ns - s.start_ns);
    out += ",\"pid\":" + std::to_string(s.lane) + ",\"tid\":" + std::to_string(static_cast<int>(s.stream)) +
           ",\"args\":{\"micro_batch\":" + std::to_string(s.micro_batch) + ",\"chunk\":" + std::to_string(s.chunk) +
           "}},\n";
  }
  activation_counters(out, r);
  out += "{\"name\":\"step end\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":";
  append_us(out, r.step_ns);
  out += "}\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"schema\":\"meshplan.trace/1\",\"title\":\"" +
         escape(title) + "\",\"step_ns\":" + std::to_string(r.step_ns) + "}}\n";
  return out;
}

}  // namespace meshplan
