// simulate_cp_ring / cp_ring_check: context-parallel ring attention as events (cp_ring.h).
#include "simulator/cp_ring.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"

namespace meshplan {

namespace {
int mod(int a, int n) { return ((a % n) + n) % n; }

struct RankState {
  Nanoseconds compute_free = 0;  // end of this rank's last compute
  Nanoseconds link_free = 0;     // end of this rank's last send
};

// Forward: returns the end of the last compute over all ranks.
Nanoseconds forward_ring(int cp, Nanoseconds c, Nanoseconds h, CpRingResult& out) {
  std::vector<RankState> st(cp);
  std::vector<Nanoseconds> have(cp, 0);  // when rank r holds its chunk of the current step
  Nanoseconds end = 0;
  for (int i = 0; i < cp; ++i) {
    std::vector<Nanoseconds> next(cp, 0);
    for (int r = 0; r < cp; ++r) {
      const Nanoseconds start = std::max(st[r].compute_free, have[r]);
      st[r].compute_free = start + c;
      out.spans.push_back({r, i, mod(r - i, cp), false, false, false, start, start + c});
      end = std::max(end, start + c);
      if (i + 1 < cp) {  // pass the held chunk on; posted with the step's compute
        const Nanoseconds send = std::max(start, st[r].link_free);
        st[r].link_free = send + h;
        out.spans.push_back({r, i, mod(r - i, cp), false, true, false, send, send + h});
        next[mod(r + 1, cp)] = send + h;
      }
    }
    have = next;
  }
  return end;
}

// Backward: K/V ring as in forward plus the dK/dV accumulator following each step's compute.
Nanoseconds backward_ring(int cp, Nanoseconds c, Nanoseconds h, CpRingResult& out) {
  std::vector<RankState> st(cp);
  std::vector<Nanoseconds> have(cp, 0), grads(cp, 0);  // K/V and dK/dV arrival for this step
  Nanoseconds end = 0;
  for (int i = 0; i < cp; ++i) {
    std::vector<Nanoseconds> next(cp, 0), next_grads(cp, 0);
    for (int r = 0; r < cp; ++r) {
      const int chunk = mod(r - i, cp);
      const Nanoseconds start = std::max(st[r].compute_free, have[r]);
      const Nanoseconds done = std::max(start + c, grads[r]);  // accumulate into the arrived dK/dV
      st[r].compute_free = done;
      out.spans.push_back({r, i, chunk, true, false, false, start, done});
      if (i + 1 < cp) {
        const Nanoseconds send = std::max(start, st[r].link_free);
        st[r].link_free = send + h;
        out.spans.push_back({r, i, chunk, true, true, false, send, send + h});
        next[mod(r + 1, cp)] = send + h;
      }
      // The updated dK/dV of `chunk` moves on (after the last step: back to its owner, rank chunk).
      const Nanoseconds gsend = std::max(done, st[r].link_free);
      st[r].link_free = gsend + h;
      out.spans.push_back({r, i, chunk, true, true, true, gsend, gsend + h});
      next_grads[mod(r + 1, cp)] = gsend + h;
      end = std::max(end, i + 1 < cp ? done : gsend + h);
    }
    have = next;
    grads = next_grads;
  }
  return end;
}

std::string fmt_ms(Nanoseconds ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g ms", static_cast<double>(ns) / 1e6);
  return buf;
}
}  // namespace

CpRingResult simulate_cp_ring(int cp, Nanoseconds c_f, Nanoseconds c_b, Nanoseconds h) {
  CpRingResult out;
  if (cp < 2) return out;
  out.forward_ns = forward_ring(cp, c_f, h, out);
  out.backward_ns = backward_ring(cp, c_b, h, out);
  out.events = static_cast<int64_t>(out.spans.size());
  return out;
}

// Structural checks: causality of every compute, each rank sees each chunk once, dK/dV go home.
static std::string ring_defect(const CpRingResult& r, int cp) {
  for (bool bwd : {false, true}) {
    std::vector<std::vector<int>> seen(cp, std::vector<int>(cp, 0));
    std::vector<std::vector<Nanoseconds>> arrive(cp, std::vector<Nanoseconds>(cp, 0));  // [rank][step]
    for (const CpRingSpan& s : r.spans)
      if (s.backward == bwd && s.transfer && !s.grads && s.step + 1 < cp) arrive[mod(s.rank + 1, cp)][s.step + 1] = s.end_ns;
    for (const CpRingSpan& s : r.spans) {
      if (s.backward != bwd || s.transfer) continue;
      ++seen[s.rank][s.chunk];
      if (s.start_ns < arrive[s.rank][s.step])
        return "rank " + std::to_string(s.rank) + " step " + std::to_string(s.step) + " computes before its K/V arrived";
    }
    for (int a = 0; a < cp; ++a)
      for (int b = 0; b < cp; ++b)
        if (seen[a][b] != 1) return "rank " + std::to_string(a) + " saw chunk " + std::to_string(b) + " " +
                                    std::to_string(seen[a][b]) + " times";
  }
  for (const CpRingSpan& s : r.spans)
    if (s.grads && s.step == cp - 1 && mod(s.rank + 1, cp) != s.chunk)
      return "the dK/dV of chunk " + std::to_string(s.chunk) + " does not return to its owner";
  return "";
}

Check cp_ring_check(const Problem& p, const ParallelConfig& cfg) {
  const CpAttention a = cp_attention(p, cfg, job_peak_flops(p), activation_element_bytes(p.job.dtype));
  const Nanoseconds cf = seconds_to_ns(a.step.forward_s), cb = seconds_to_ns(a.step.backward_s);
  const Nanoseconds h = seconds_to_ns(a.step_comm_forward_s);
  const CpRingResult r = simulate_cp_ring(cfg.cp, cf, cb, h);
  // The closed form in the same integer nanoseconds.
  const Nanoseconds cp = cfg.cp;
  const Nanoseconds model_f = cp * cf + (cp - 1) * std::max<Nanoseconds>(0, h - cf);
  const Nanoseconds model_b = cp * cb + (cp - 1) * std::max<Nanoseconds>(0, 2 * h - cb) + h;
  Check c{"cp_ring", true, ""};
  const std::string defect = ring_defect(r, cfg.cp);
  const Nanoseconds slack = cp;  // rounding of the per-step durations
  const bool fwd_ok = r.forward_ns >= model_f - slack && r.forward_ns <= model_f + slack;
  // Backward: the closed form charges every step the steady-state period max(c, 2h); the first
  // step has no dK/dV to wait for, so the events may finish up to one such period earlier.
  const Nanoseconds first_step = std::max(cb, 2 * h);
  const bool bwd_ok = r.backward_ns >= model_b - first_step - slack && r.backward_ns <= model_b + slack;
  c.ok = defect.empty() && fwd_ok && bwd_ok;
  c.detail = "ring of " + std::to_string(cfg.cp) + " ranks, " + std::to_string(r.events) + " events per layer: forward " +
             fmt_ms(r.forward_ns) + " (closed form " + fmt_ms(model_f) + "), backward " + fmt_ms(r.backward_ns) +
             " (closed form " + fmt_ms(model_b) + ")" + (defect.empty() ? "" : "; " + defect);
  return c;
}

}  // namespace meshplan
