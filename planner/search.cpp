// The fast search (bounds on memory and time) and its plain twin (evaluate everything).
#include "planner/search.h"

#include <algorithm>
#include <cassert>

#include "planner/cp_space.h"
#include "planner/moe_space.h"
#include "planner/pareto.h"

namespace meshplan {

namespace {

// Everything one search run accumulates.
struct Collector {
  explicit Collector(const SearchOptions& o) : opt(o), top(o.top_k) {}
  const SearchOptions& opt;
  TopK top;
  ParetoFront front;
  SearchResult result;

  void keep(const StepEstimate& e) {
    if (opt.reference && estimate_better(e, *opt.reference)) ++result.better_than_reference;
    top.offer(e);
    if (opt.pareto) front.offer(e);
  }
  // A sibling whose step time is at least `step_lb_s` and whose peak is `peak_bytes` can be
  // skipped: it cannot enter the top K (strictly slower than the K-th) nor the Pareto front, nor be
  // better than the reference (strictly slower than it: estimate_better compares step time first).
  bool can_skip(double step_lb_s, double peak_bytes) const {
    if (!top.full() || !(step_lb_s > top.worst_step_s())) return false;
    if (opt.reference && !(step_lb_s > opt.reference->time.step_s)) return false;
    return !opt.pareto || front.dominates(peak_bytes, step_lb_s);
  }
  SearchResult finish() {
    result.top = top.best();
    result.pareto = front.points();
    return std::move(result);
  }
};

// Rules met at the schedule level (after the batch rule), in classify_config's order.
Reason schedule_rule(const Problem& p, const LayoutDims& d, const ScheduleChoice& sc, int64_t M) {
  const bool interleaved = sc.kind == ScheduleKind::Interleaved;
  const bool dualpipev = sc.kind == ScheduleKind::DualPipeV;
  if (dualpipev ? (d.pp < 2 || sc.virtual_stages != 2)
                : interleaved ? (d.pp < 2 || sc.virtual_stages < 2) : sc.virtual_stages != 1)
    return Reason::InterleavedNeedsPp;
  const int64_t chunks = static_cast<int64_t>(d.pp) * sc.virtual_stages;
  if (sc.layers_per_chunk.empty() ? chunks > p.model.num_layers
                                  : !layer_split_ok(sc.layers_per_chunk, chunks, p.model.num_layers))
    return Reason::PpExceedsLayers;
  if (interleaved && M % d.pp != 0) return Reason::InterleavedMicroBatches;
  if (dualpipev && M < 2 * static_cast<int64_t>(d.pp)) return Reason::DualPipeVMicroBatches;
  return Reason::None;
}

double static_bytes_of(const MemoryBreakdown& m) {
  return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.other_bytes;
}

// Search state of one layout: memory bounds carried from smaller micro-batches to larger ones.
class LayoutSearch {
 public:
  LayoutSearch(const Problem& p, const LayoutDims& d, Collector& c)
      : p_(p), d_(d), c_(c), usable_(p.hardware.usable_memory_bytes()),
        nsc_(d.schedules.size()), nsp_(d.sequence_parallel.size()), nrc_(d.recomputes.size()),
        nz_(d.shardings.size()),
        static_lb_(nsc_ * nz_, 0.0),
        failed_(nsc_ * nsp_ * nrc_ * nz_, 0) {}

  void run() {
    for (int64_t mb : d_.micro_batches) micro_batch(mb);
  }

 private:
  void reject(Reason r, int64_t n) { c_.result.rejected.add(r, n); }

  void micro_batch(int64_t mb) {
    const int64_t per_step = d_.dp * mb;
    if (p_.job.global_batch % per_step != 0) {
      reject(Reason::Batch, count_per_micro_batch(d_));
      return;
    }
    const int64_t M = p_.job.global_batch / per_step;
    const int64_t per_schedule = static_cast<int64_t>(nsp_) * nrc_ * nz_ * d_.dp_overlaps.size();
    for (size_t si = 0; si < nsc_; ++si) {
      const Reason r = schedule_rule(p_, d_, d_.schedules[si], M);
      if (r != Reason::None) {
        reject(r, per_schedule);
        continue;
      }
      for (size_t spi = 0; spi < nsp_; ++spi) {
        if (d_.sequence_parallel[spi] && d_.tp == 1) {
          reject(Reason::SequenceParallelNeedsTp, per_schedule / nsp_);
          continue;
        }
        for (size_t rci = 0; rci < nrc_; ++rci) group(mb, si, spi, rci);
      }
    }
  }

  // One (micro-batch, schedule, SP, recompute) group: its ZeRO x overlap siblings share compute,
  // TP, bubble and p2p time, except that DP traffic hidden behind backward may slow the compute.
  void group(int64_t mb, size_t si, size_t spi, size_t rci) {
    const int64_t nov = static_cast<int64_t>(d_.dp_overlaps.size());
    std::vector<double> peak(nz_, -1.0);  // peak bytes of each fitting ZeRO variant, -1 = no fit
    for (size_t zi = 0; zi < nz_; ++zi) peak[zi] = fitting_peak(mb, si, spi, rci, zi, nov);
    // The floor comes from a sibling with nothing hidden (overlap off, or dp = 1): its compute is
    // the bare compute, which no sibling undercuts.
    const int bare_overlap = d_.dp == 1 ? d_.dp_overlaps.front() : (has_overlap_off() ? 0 : -1);
    double floor_s = -1.0;
    size_t bare_z = nz_;
    if (bare_overlap >= 0) {
      for (size_t zi = 0; zi < nz_ && bare_z == nz_; ++zi)
        if (peak[zi] >= 0) bare_z = zi;
      if (bare_z < nz_) floor_s = pipeline_floor_s(evaluate(mb, si, spi, rci, bare_z, bare_overlap));
    }
    for (size_t zi = 0; zi < nz_; ++zi) {
      if (peak[zi] < 0) continue;
      for (int ov : d_.dp_overlaps) {
        if (zi == bare_z && ov == bare_overlap) continue;  // already estimated
        if (floor_s >= 0 && c_.can_skip(floor_s, peak[zi])) {
          ++c_.result.pruned;
          continue;
        }
        evaluate(mb, si, spi, rci, zi, ov);
      }
    }
  }

  bool has_overlap_off() const {
    return std::find(d_.dp_overlaps.begin(), d_.dp_overlaps.end(), 0) != d_.dp_overlaps.end();
  }

  // Peak bytes of one ZeRO variant when it fits (memory bounds first, then estimate_memory);
  // -1 after counting its overlap variants as memory rejections.
  double fitting_peak(int64_t mb, size_t si, size_t spi, size_t rci, size_t zi, int64_t nov) {
    double& static_lb = static_lb_[si * nz_ + zi];
    char& failed = failed_[((si * nsp_ + spi) * nrc_ + rci) * nz_ + zi];
    if (failed || static_lb > usable_) {
      reject(Reason::Memory, nov);
      return -1.0;
    }
    const MemoryBreakdown mem = estimate_memory(p_, candidate(mb, si, spi, rci, zi, d_.dp_overlaps.front()));
    ++c_.result.memory_checks;
    static_lb = std::max(static_lb, static_bytes_of(mem));
    if (!(mem.peak_bytes <= usable_)) {
      failed = 1;  // larger micro-batches of this variant do not fit either
      reject(Reason::Memory, nov);
      return -1.0;
    }
    return mem.peak_bytes;
  }

  ParallelConfig candidate(int64_t mb, size_t si, size_t spi, size_t rci, size_t zi, int ov) const {
    return make_candidate(p_, d_, mb, d_.schedules[si], d_.shardings[zi], d_.sequence_parallel[spi],
                          d_.recomputes[rci], ov);
  }

  StepEstimate evaluate(int64_t mb, size_t si, size_t spi, size_t rci, size_t zi, int ov) {
    StepEstimate e = estimate_step(p_, candidate(mb, si, spi, rci, zi, ov));
    ++c_.result.evaluated;
    assert(e.fits && "estimate_step and estimate_memory agree on memory");
    c_.keep(e);
    return e;
  }

  const Problem& p_;
  const LayoutDims& d_;
  Collector& c_;
  const double usable_;
  const size_t nsc_, nsp_, nrc_, nz_;
  std::vector<double> static_lb_;  // [schedule][zero]: static bytes seen, a lower bound on peak
  std::vector<char> failed_;       // [schedule][sp][recompute][zero]: did not fit at a smaller mb
};

}  // namespace

double pipeline_floor_s(const StepEstimate& e) {
  return e.time.compute_s + e.time.tp_comm_s + e.time.pp_bubble_s + e.time.pp_comm_s;
}

SearchResult search(const Problem& p, const SearchOptions& opt) {
  Collector c(opt);
  c.result.space = count_space(p, opt.space);
  int64_t done = 0;
  const std::vector<int> cps = cp_domain(p, opt.space);  // {1} unless sequences are long
  for (int tp : tp_domain(p, opt.space)) {
    for (int cp : cps) {
      for (int pp : pp_domain(p, opt.space, tp * cp)) {
        LayoutDims d = layout_dims(p, opt.space, tp, pp, cp);
        const int64_t n = count_layout_all_experts(p, opt.space, d);
        const Reason r = d.dp == 0 ? Reason::GpusDivisible : check_layout(p, tp, pp, cp);
        if (r != Reason::None) c.result.rejected.add(r, n);
        else
          for (const ExpertChoice& ec : expert_domain(p, opt.space, tp, d.dp, cp)) {  // {1, 1} for dense models
            d.ep = ec.ep;
            d.etp = ec.etp;
            LayoutSearch(p, d, c).run();
          }
        done += n;
        if (opt.progress) opt.progress(done, c.result.space);
      }
    }
  }
  return c.finish();
}

SearchResult search_reference(const Problem& p, const SearchOptions& opt) {
  Collector c(opt);
  const double usable = p.hardware.usable_memory_bytes();
  for_each_config(p, opt.space, [&](const ParallelConfig& cfg, Reason r, int64_t n) {
    c.result.space += n;
    if (r != Reason::None) {
      c.result.rejected.add(r, n);
      return;
    }
    const StepEstimate e = estimate_step(p, cfg);
    ++c.result.evaluated;
    if (!(e.memory.peak_bytes <= usable)) {
      c.result.rejected.add(Reason::Memory, 1);
      return;
    }
    c.keep(e);
  });
  return c.finish();
}

}  // namespace meshplan
