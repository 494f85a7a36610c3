// The context-parallel ring as events vs the closed form (cp steps of compute + exposed exchange).
#include <catch2/catch.hpp>

#include "simulator/cp_ring.h"

using namespace meshplan;

TEST_CASE("cp ring events: exchange hidden behind attention and closed form exact") {
  // c = 1000 ns per step, h = 300 ns per hop: 2h <= c, only the final dK/dV hop is exposed.
  const CpRingResult r = simulate_cp_ring(4, 1000, 2000, 300);
  CHECK(r.forward_ns == 4 * 1000);
  CHECK(r.backward_ns == 4 * 2000 + 300);
  // 4 ranks x (4 computes + 3 K/V sends) forward, x (4 computes + 3 K/V + 4 dK/dV sends) backward.
  CHECK(r.events == 4 * 7 + 4 * 11);
}

TEST_CASE("cp ring events: a slow link exposes (comm - compute) per step") {
  // h = 5000 > c = 1000: forward period h after the first step.
  const CpRingResult r = simulate_cp_ring(8, 1000, 2000, 5000);
  CHECK(r.forward_ns == 8 * 1000 + 7 * (5000 - 1000));
  // Backward: the closed form 8*2000 + 7*(10000-2000) + 5000 charges the first step like the rest;
  // the events are at most one steady-state period (2h) faster.
  const Nanoseconds model = 8 * 2000 + 7 * (10000 - 2000) + 5000;
  CHECK(r.backward_ns <= model);
  CHECK(r.backward_ns >= model - 10000);
}

TEST_CASE("cp ring events: every rank computes on every chunk once and after it arrived") {
  const int cp = 5;
  const CpRingResult r = simulate_cp_ring(cp, 700, 1500, 900);
  for (bool bwd : {false, true}) {
    std::vector<std::vector<int>> seen(cp, std::vector<int>(cp, 0));
    for (const CpRingSpan& s : r.spans)
      if (s.backward == bwd && !s.transfer) ++seen[s.rank][s.chunk];
    for (int a = 0; a < cp; ++a)
      for (int b = 0; b < cp; ++b) CHECK(seen[a][b] == 1);
  }
  // The K/V a rank computes on at step i > 0 was sent by its left neighbour at step i-1.
  for (const CpRingSpan& s : r.spans) {
    if (s.transfer || s.step == 0) continue;
    bool found = false;
    for (const CpRingSpan& t : r.spans)
      if (t.transfer && !t.grads && t.backward == s.backward && t.step == s.step - 1 && (t.rank + 1) % cp == s.rank) {
        found = true;
        CHECK(t.end_ns <= s.start_ns);
        CHECK(t.chunk == s.chunk);
      }
    CHECK(found);
  }
}

TEST_CASE("cp ring: cp = 1 has no events") {
  CHECK(simulate_cp_ring(1, 1000, 2000, 300).events == 0);
}
