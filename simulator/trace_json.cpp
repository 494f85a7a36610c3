// trace_json: Chrome / Perfetto trace-event JSON written by hand (the simulator uses no JSON library).
#include <cstdio>
#include <string>

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
  out += "{\"name\":\"step end\",\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":";
  append_us(out, r.step_ns);
  out += "}\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"schema\":\"meshplan.trace/1\",\"title\":\"" +
         escape(title) + "\",\"step_ns\":" + std::to_string(r.step_ns) + "}}\n";
  return out;
}

}  // namespace meshplan
