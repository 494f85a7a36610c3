// Text form of a Schedule: "rank r: F0.0 RF1.0 ..." lines (format_schedule) and its parser.
#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>

#include "core/checked.h"
#include "core/limits.h"
#include "core/pipeline_placement.h"
#include "planner/schedule.h"

namespace meshplan {

namespace {

constexpr const char* kHeader = "# meshplan schedule:";

std::string action_text(const Action& a) {
  std::string t = to_string(a.kind);
  if (a.kind == ActionKind::OptimizerStep) return t;
  if (a.kind != ActionKind::ReduceGrads) t += std::to_string(a.micro_batch);
  return t + "." + std::to_string(a.chunk);
}

// Peer implied by the pipeline: forward data flows to rank r+1, gradients to rank r-1 (mod pp); under a
// V-shaped placement to the rank of the neighbouring model chunk (core/pipeline_placement.h).
int implied_peer(const Schedule& s, const Action& a, int rank) {
  const int pp = s.pp;
  const bool to_next = a.kind == ActionKind::SendForward || a.kind == ActionKind::RecvBackward;
  const bool to_prev = a.kind == ActionKind::RecvForward || a.kind == ActionKind::SendBackward;
  if (!to_next && !to_prev) return -1;
  if (!v_shaped(s.kind)) return to_next ? (rank + 1) % pp : (rank + pp - 1) % pp;
  const int g = placed_chunk(s.kind, pp, rank, a.chunk) + (to_next ? 1 : -1);
  return g < 0 || g >= 2 * pp ? -1 : chunk_rank(s.kind, pp, g);
}

struct Reader {
  std::string file;
  int line = 0;
  Error error(const std::string& field, const std::string& value, const std::string& message,
              const std::string& hint) const {
    return make_error(file, "line " + std::to_string(line) + (field.empty() ? "" : " " + field),
                      value, message, hint);
  }
};

bool parse_int(const std::string& s, int& out) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  out = std::stoi(s);
  return true;
}

// One token: CODE [micro-batch] '.' chunk, or "O".
Result<Action> parse_token(const std::string& tok, const Reader& rd) {
  const std::string hint = "write e.g. F3.0, B3.1, W3.0, SF3.0, RB3.0, R.0 or O";
  size_t i = 0;
  while (i < tok.size() && std::isupper(static_cast<unsigned char>(tok[i]))) ++i;
  const std::string code = tok.substr(0, i);
  static const ActionKind kinds[] = {
      ActionKind::Forward,      ActionKind::Backward,    ActionKind::BackwardWeight,
      ActionKind::SendForward,  ActionKind::RecvForward, ActionKind::SendBackward,
      ActionKind::RecvBackward, ActionKind::ReduceGrads, ActionKind::OptimizerStep};
  Action a;
  bool known = false;
  for (ActionKind k : kinds)
    if (code == to_string(k)) a.kind = k, known = true;
  if (!known) return rd.error("action", tok, "unknown action code '" + code + "'", hint);
  if (a.kind == ActionKind::OptimizerStep) {
    if (i != tok.size()) return rd.error("action", tok, "O takes no numbers", hint);
    return a;
  }
  const size_t dot = tok.find('.', i);
  if (dot == std::string::npos) return rd.error("action", tok, "missing '.<chunk>'", hint);
  const std::string mb = tok.substr(i, dot - i);
  const std::string chunk = tok.substr(dot + 1);
  if (!parse_int(chunk, a.chunk)) return rd.error("action", tok, "bad chunk number", hint);
  if (a.kind == ActionKind::ReduceGrads) {
    if (!mb.empty()) return rd.error("action", tok, "R takes only a chunk (R.<chunk>)", hint);
    return a;
  }
  if (!parse_int(mb, a.micro_batch)) return rd.error("action", tok, "bad micro-batch number", hint);
  return a;
}

// "# meshplan schedule: kind=1f1b pp=4 virtual_stages=1 micro_batches=8"
Result<bool> parse_header(const std::string& text, Schedule& s, bool& has_pp, const Reader& rd) {
  std::istringstream in(text.substr(std::string(kHeader).size()));
  std::string kv;
  while (in >> kv) {
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    const std::string val = eq == std::string::npos ? "" : kv.substr(eq + 1);
    int n = 0;
    if (key == "kind") {
      auto k = parse_schedule(val);
      if (!k) return rd.error("kind", val, "unknown schedule kind", "gpipe, 1f1b, interleaved, zb-h1 or dualpipev");
      s.kind = *k;
    } else if ((key == "pp" || key == "virtual_stages" || key == "micro_batches") && parse_int(val, n)) {
      if (key == "pp") s.pp = n, has_pp = true;
      if (key == "virtual_stages") s.virtual_stages = n;
      if (key == "micro_batches") s.num_micro_batches = n;
    } else {
      return rd.error("header", kv, "unknown or malformed header entry",
                      "kind=<k> pp=<n> virtual_stages=<n> micro_batches=<n>");
    }
  }
  return true;
}

// Fills in pp, v, M from the contents when the header did not give them and checks ranges.
Result<bool> finish(Schedule& s, bool header_pp, const std::string& file) {
  int max_chunk = 0, max_mb = 0;
  for (const auto& acts : s.ranks)
    for (const Action& a : acts) {
      max_chunk = std::max(max_chunk, a.chunk);
      max_mb = std::max(max_mb, a.micro_batch);
    }
  if (s.ranks.empty())
    return make_error(file, "rank lines", "", "no 'rank <r>: ...' lines", "see format_schedule output");
  if (header_pp && s.pp != static_cast<int>(s.ranks.size()))
    return make_error(file, "pp", std::to_string(s.pp),
                      "header says pp=" + std::to_string(s.pp) + " but the file has " +
                          std::to_string(s.ranks.size()) + " rank lines",
                      "write one line per pipeline rank");
  s.pp = static_cast<int>(s.ranks.size());
  s.virtual_stages = std::max(s.virtual_stages, max_chunk + 1);
  s.num_micro_batches = std::max(s.num_micro_batches, max_mb + 1);
  // Indices and header counts up to 999,999,999 parse; the passes they imply must stay simulable.
  if (!product_within({s.pp, s.virtual_stages, s.num_micro_batches}, limits::kMaxSimulatedPasses))
    return make_error(file, "micro_batches",
                      "pp*v*M=" + std::to_string(s.pp) + "*" + std::to_string(s.virtual_stages) + "*" +
                          std::to_string(s.num_micro_batches),
                      "is too large (accepted 1.." + std::to_string(limits::kMaxSimulatedPasses) +
                          " micro-batch passes, from the header and the largest indices)",
                      "number micro-batches and chunks from 0 and keep the header counts small");
  if (v_shaped(s.kind) && s.virtual_stages != 2)
    return make_error(file, "virtual_stages", std::to_string(s.virtual_stages),
                      std::string(to_string(s.kind)) + " places exactly two chunks per rank (.0 and .1)",
                      "number the chunks 0 and 1");
  for (int r = 0; r < s.pp; ++r)
    for (Action& a : s.ranks[r]) a.peer = implied_peer(s, a, r);
  return true;
}

}  // namespace

std::string format_schedule(const Schedule& s) {
  std::string out = std::string(kHeader) + " kind=" + to_string(s.kind) +
                    " pp=" + std::to_string(s.pp) +
                    " virtual_stages=" + std::to_string(s.virtual_stages) +
                    " micro_batches=" + std::to_string(s.num_micro_batches) + "\n";
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    out += "rank " + std::to_string(r) + ":";
    for (const Action& a : s.ranks[r]) out += " " + action_text(a);
    out += "\n";
  }
  return out;
}

Result<Schedule> parse_schedule_text(const std::string& text, const std::string& file) {
  Schedule s;
  s.num_micro_batches = 0;
  s.virtual_stages = 0;
  bool header_pp = false;
  Reader rd{file, 0};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    ++rd.line;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(kHeader, 0) == 0) {
      auto h = parse_header(line, s, header_pp, rd);
      if (!h) return h.error();
      continue;
    }
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream ls(line);
    std::string word, rank_tok;
    ls >> word >> rank_tok;
    int r = -1;
    if (word != "rank" || rank_tok.empty() || rank_tok.back() != ':' ||
        !parse_int(rank_tok.substr(0, rank_tok.size() - 1), r))
      return rd.error("", line.substr(0, 40), "expected 'rank <r>: <actions>'", "e.g. rank 0: F0.0 B0.0 R.0 O");
    if (r != static_cast<int>(s.ranks.size()))
      return rd.error("rank", std::to_string(r),
                      "rank lines must be numbered 0, 1, ... in order (expected " +
                          std::to_string(s.ranks.size()) + ")",
                      "renumber the rank lines");
    s.ranks.emplace_back();
    std::string tok;
    while (ls >> tok) {
      auto a = parse_token(tok, rd);
      if (!a) return a.error();
      s.ranks.back().push_back(*a);
    }
  }
  auto ok = finish(s, header_pp, file);
  if (!ok) return ok.error();
  return s;
}

}  // namespace meshplan
