// The event engine: closed-form bubbles, exact step times, the plain twin, ties, deadlocks, stragglers.
#include <catch2/catch.hpp>

#include <cmath>

#include "costmodel/pipeline.h"
#include "simulator/analysis.h"
#include "simulator/durations.h"
#include "simulator/engine.h"
#include "simulator/event_queue.h"
#include "simulator/schedule_check.h"

using namespace meshplan;

static Schedule built(ScheduleKind k, int pp, int v, int m) {
  auto s = build_schedule(k, pp, v, m);
  REQUIRE(s.ok());
  return *s;
}

static SimResult run(const SimInput& in) {
  auto r = simulate_schedule(in);
  INFO((r.ok() ? std::string() : r.error().one_line()));
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("event queue pops by time, then by insertion order") {
  EventQueue q;
  q.push(5, 1);
  q.push(3, 2);
  q.push(5, 3);
  q.push(3, 4);
  q.push(0, 5);
  const int expect[] = {5, 2, 4, 1, 3};
  for (int lane : expect) CHECK(q.pop().lane == lane);
  CHECK(q.empty());
}

TEST_CASE("event queue renumbering its 32-bit sequence keeps the pop order") {
  // The same interleaving of pushes and pops (many equal times) on a queue that renumbers every 3
  // pushes and on one that never does: identical pops, ties included.
  EventQueue plain, renumbered;
  renumbered.set_sequence_limit(3);
  uint32_t x = 12345;
  for (int i = 0; i < 2000; ++i) {
    x = x * 1103515245u + 12345u;
    const Nanoseconds t = (x >> 16) % 7;  // few distinct times: most comparisons are ties
    plain.push(t, i);
    renumbered.push(t, i);
    if ((x >> 8) % 3 == 0) {
      const Event a = plain.pop(), b = renumbered.pop();
      REQUIRE(a.lane == b.lane);
      REQUIRE(a.time_ns == b.time_ns);
    }
  }
  while (!plain.empty()) {
    REQUIRE(!renumbered.empty());
    REQUIRE(plain.pop().lane == renumbered.pop().lane);
  }
  CHECK(renumbered.empty());
}

TEST_CASE("bubble equals the closed form for equal stages and free transfers") {
  // GPipe/1F1B (P-1)/(M+P-1), interleaved (P-1)/(vM+P-1), ZB-H1 (P-1)/(3M+P-1) with F=B=W.
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1})
    for (int pp : {1, 2, 3, 4, 8})
      for (int m : {8, 12, 16, 48})
        for (int v : {1, 2, 3, 4}) {
          if ((k == ScheduleKind::Interleaved) != (v > 1)) continue;
          if (k == ScheduleKind::Interleaved && m % pp != 0) continue;
          INFO(to_string(k) << " P=" << pp << " v=" << v << " M=" << m);
          const SimResult r = run(uniform_sim_input(built(k, pp, v, m), 1'000'000, 2'000'000));
          CHECK(summarize(r).bubble_fraction == Approx(bubble_fraction(k, pp, v, m)).margin(1e-9));
        }
}

TEST_CASE("1F1B and GPipe step is exactly (M+P-1)(f+b) with equal stages") {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB}) {
    const SimResult r = run(uniform_sim_input(built(k, 4, 1, 8), 1000, 2000));
    CHECK(r.step_ns == (8 + 4 - 1) * 3000);
    CHECK(r.lanes[0].peak_in_flight == (k == ScheduleKind::GPipe ? 8 : 4));
  }
}

TEST_CASE("straggler: GPipe at 1.3x on any rank adds M*(k-1)*(f+b)") {
  // GPipe is two flow shops (forwards 0..P-1, then backwards P-1..0) of M identical jobs, joined on
  // the last stage. A flow shop's makespan is sum(stage times) + (M-1)*max(stage time), so
  // step = (P-1)(f+b) + M*k*(f+b): with P=4, M=8, f=1 us, b=2 us, k=1.3: 9000 + 31200 = 40200 ns,
  // wherever the slow rank sits.
  for (int slow = 0; slow < 4; ++slow) {
    SimInput in = uniform_sim_input(built(ScheduleKind::GPipe, 4, 1, 8), 1000, 2000);
    in.compute_factor.assign(4, 1.0);
    in.compute_factor[slow] = 1.3;
    CHECK(run(in).step_ns == 40200);
  }
}

TEST_CASE("straggler: 1F1B with a slow last stage adds M*(k-1)*(f+b), earlier stages hide part") {
  // Slow last stage: it never waits once F0 arrives (upstream needs b+f = 3000 < k(f+b) = 3900 per
  // micro-batch), so step = (P-1) f + M k (f+b) + (P-1) b = 3000 + 31200 + 6000 = 40200.
  SimInput in = uniform_sim_input(built(ScheduleKind::OneFOneB, 4, 1, 8), 1000, 2000);
  in.compute_factor = {1.0, 1.0, 1.0, 1.3};
  CHECK(run(in).step_ns == 40200);
  // A slow stage s < P-1 absorbs part of its extra work in its own warm-up wait: the step grows by
  // (M - (P-1-s)) (k-1)(f+b) (observed; each earlier stage hides one more micro-batch's worth).
  for (int s = 0; s < 3; ++s) {
    in.compute_factor = {1.0, 1.0, 1.0, 1.0};
    in.compute_factor[s] = 1.3;
    CHECK(run(in).step_ns == 33000 + (8 - (4 - 1 - s)) * 900);
  }
}

TEST_CASE("straggler in one DP replica holds every replica at the DP reduction") {
  SimInput in = uniform_sim_input(built(ScheduleKind::OneFOneB, 4, 1, 8), 1000, 2000);
  for (auto& c : in.chunks) c.dp_reduce_ns = 5000;
  const Nanoseconds alone = run(in).step_ns;  // one replica, no straggler
  in.replicas = 2;
  in.compute_factor = {1.0, 1.0, 1.0, 1.3, 1.0, 1.0, 1.0, 1.0};
  const SimResult r = run(in);
  SimInput slow_alone = in;
  slow_alone.replicas = 1;
  slow_alone.compute_factor = {1.0, 1.0, 1.0, 1.3};
  // The collective starts when the slow replica's rank is ready, so the fast replica ends with it.
  CHECK(r.step_ns == run(slow_alone).step_ns);
  CHECK(r.step_ns > alone);
  CHECK(r.lanes[7].end_ns == r.lanes[3].end_ns);
  CHECK(r.lanes[7].dp_wait_ns > r.lanes[3].dp_wait_ns);
}

static SimInput rich_input(ScheduleKind k, int pp, int v, int m, int replicas, int zero3_layers) {
  SimInput in = uniform_sim_input(built(k, pp, v, m), 0, 0);
  for (int g = 0; g < static_cast<int>(in.chunks.size()); ++g) {
    ChunkTimes& c = in.chunks[g];
    c.forward_ns = 900 + 37 * g;  // uneven stages
    c.backward_ns = has_weight_actions(in.schedule) ? 1000 + 11 * g : 1900 + 50 * g;
    c.weight_ns = has_weight_actions(in.schedule) ? 800 : 0;
    c.tp_forward_ns = 100;
    c.dp_reduce_ns = zero3_layers > 0 ? 0 : 3000 + 100 * g;
    c.reduce_per_micro_batch_ns = zero3_layers > 0 ? 700 : 0;  // ZeRO-3 reduce-scatters per micro-batch
    c.layers = zero3_layers > 0 ? zero3_layers : 3;
    c.gather_ns = zero3_layers > 0 ? 350 : 0;
    // DeepSpeed re-fetches: every layer of even chunks, half of odd ones (every-2-layers).
    c.refetch_layers = zero3_layers > 0 ? (g % 2 == 0 ? zero3_layers : zero3_layers / 2) : 0;
    c.activation_bytes = 1e6 * (g + 1);
  }
  in.p2p_ns = 250;
  in.optimizer_ns = 4000;
  in.after_gather_ns.assign(pp, zero3_layers > 0 ? 0 : 1500);
  in.replicas = replicas;
  in.compute_factor.assign(static_cast<size_t>(replicas) * pp, 1.0);
  in.link_factor.assign(static_cast<size_t>(replicas) * pp, 1.0);
  in.compute_factor[pp / 2] = 1.3;
  in.link_factor[0] = 2.5;
  return in;
}

TEST_CASE("the event engine equals its plain sweep twin, span for span") {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1})
    for (int replicas : {1, 2})
      for (int zero3 : {0, 4}) {
        const int v = k == ScheduleKind::Interleaved ? 2 : 1;
        INFO(to_string(k) << " replicas=" << replicas << " zero3 layers=" << zero3);
        SimInput in = rich_input(k, 4, v, 8, replicas, zero3);
        // Compute slowed by concurrent DP traffic: order-independent with one replica per rank.
        if (replicas == 1) in.overlap_slowdown = 0.25;
        auto fast = simulate_schedule(in);
        auto plain = simulate_reference(in);
        REQUIRE(fast.ok());
        REQUIRE(plain.ok());
        CHECK(fast->step_ns == plain->step_ns);
        for (size_t l = 0; l < fast->lanes.size(); ++l) {
          CHECK(fast->lanes[l].end_ns == plain->lanes[l].end_ns);
          CHECK(fast->lanes[l].bubble_ns == plain->lanes[l].bubble_ns);
          CHECK(fast->lanes[l].p2p_wait_ns == plain->lanes[l].p2p_wait_ns);
          CHECK(fast->lanes[l].dp_wait_ns == plain->lanes[l].dp_wait_ns);
          CHECK(fast->lanes[l].gather_wait_ns == plain->lanes[l].gather_wait_ns);
          CHECK(fast->lanes[l].peak_activation_bytes == plain->lanes[l].peak_activation_bytes);
        }
        // Same spans (the engine records them in time order, the twin lane by lane).
        auto key = [](const Span& s) {
          return std::make_tuple(s.lane, static_cast<int>(s.stream), s.start_ns, s.end_ns, static_cast<int>(s.kind),
                                 s.micro_batch, s.chunk, s.piece);
        };
        std::vector<decltype(key(Span{}))> a, b;
        for (const Span& s : fast->spans) a.push_back(key(s));
        for (const Span& s : plain->spans) b.push_back(key(s));
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        CHECK(a == b);
        CHECK(verify_order(in.schedule, *fast).ok);
      }
}

TEST_CASE("ZeRO-3: B gathers a second time for its refetch layers only, one gradient bucket per layer") {
  Nanoseconds previous = 0;
  for (int refetch : {0, 1, 2, 4}) {
    INFO("refetch layers " << refetch);
    SimInput in = uniform_sim_input(built(ScheduleKind::OneFOneB, 1, 1, 2), 400, 800);
    ChunkTimes& c = in.chunks[0];
    c.layers = 4;
    c.gather_ns = 1000;  // gather-bound: each piece waits for its gather
    c.refetch_layers = refetch;
    c.reduce_per_micro_batch_ns = 100;
    const SimResult r = run(in);
    int forward = 0, backward = 0, buckets = 0;
    Nanoseconds reduced = 0;
    for (const Span& s : r.spans) {
      if (s.stream != Stream::Dp) continue;
      forward += s.kind == ActionKind::Forward;
      backward += s.kind == ActionKind::Backward;
      if (s.kind == ActionKind::ReduceGrads) ++buckets, reduced += s.end_ns - s.start_ns;
    }
    CHECK(forward == 2 * 4);
    CHECK(backward == 2 * (4 + refetch));
    CHECK(buckets == 2 * 4);
    CHECK(reduced == 2 * 100);
    if (refetch > 0) CHECK(r.step_ns > previous);
    previous = r.step_ns;
  }
}

TEST_CASE("critical lane: compute + waits + optimizer add up to the step exactly") {
  for (int zero3 : {0, 4}) {
    const SimResult r = run(rich_input(ScheduleKind::OneFOneB, 4, 1, 8, 2, zero3));
    const SimSummary s = summarize(r);
    const LaneStats& l = r.lanes[s.critical_lane];
    CHECK(l.compute_ns + l.optimizer_ns + l.bubble_ns + l.p2p_wait_ns + l.dp_wait_ns + l.gather_wait_ns == r.step_ns);
  }
}

TEST_CASE("same input, same result: deterministic spans") {
  const SimInput in = rich_input(ScheduleKind::Interleaved, 4, 2, 8, 2, 0);
  const SimResult a = run(in), b = run(in);
  REQUIRE(a.spans.size() == b.spans.size());
  for (size_t i = 0; i < a.spans.size(); ++i) {
    CHECK(a.spans[i].start_ns == b.spans[i].start_ns);
    CHECK(a.spans[i].lane == b.spans[i].lane);
  }
  CHECK(a.events == b.events);
}

static Schedule parse(const std::string& text) {
  auto s = parse_schedule_text(text, "hand.txt");
  REQUIRE(s.ok());
  return *s;
}

TEST_CASE("a cycle of waiting ranks is a deadlock error naming ranks and actions, not a hang") {
  // Rank 0 waits for B0's gradient before sending F0's activation; rank 1 waits for that activation.
  const Schedule s = parse(
      "rank 0: F0.0 RB0.0 SF0.0 B0.0 R.0 O\n"
      "rank 1: RF0.0 F0.0 B0.0 SB0.0 R.0 O\n");
  for (int twin = 0; twin < 2; ++twin) {
    auto r = twin ? simulate_reference(uniform_sim_input(s, 1000, 2000), "hand.txt")
                  : simulate_schedule(uniform_sim_input(s, 1000, 2000), "hand.txt");
    REQUIRE_FALSE(r.ok());
    const std::string line = r.error().one_line();
    INFO(line);
    CHECK(r.error().field == "deadlock");
    CHECK(line.find("hand.txt") != std::string::npos);
    CHECK(line.find("rank 0 blocks at RB0.0") != std::string::npos);
    CHECK(line.find("rank 1 blocks at RF0.0") != std::string::npos);
    CHECK(line.find("cycle") != std::string::npos);
  }
}

TEST_CASE("a receive without its send is rejected before simulating, naming both ranks") {
  const Schedule s = parse(
      "rank 0: F0.0 F1.0 SF1.0 RB0.0 B0.0 RB1.0 B1.0 R.0 O\n"
      "rank 1: RF0.0 F0.0 B0.0 SB0.0 RF1.0 F1.0 B1.0 SB1.0 R.0 O\n");
  auto r = simulate_schedule(uniform_sim_input(s, 1000, 2000), "hand.txt");
  REQUIRE_FALSE(r.ok());
  const std::string line = r.error().one_line();
  INFO(line);
  CHECK(line.find("rank 1") != std::string::npos);
  CHECK(line.find("RF0.0") != std::string::npos);
  CHECK(line.find("receive without send") != std::string::npos);
  CHECK(line.find("SF0.0 on rank 0") != std::string::npos);
}

TEST_CASE("schedule checks: duplicates, missing backward, backward before forward") {
  auto err = [](const std::string& text) {
    auto r = simulate_schedule(uniform_sim_input(parse(text), 1000, 2000), "hand.txt");
    REQUIRE_FALSE(r.ok());
    return r.error().one_line();
  };
  CHECK(err("rank 0: F0.0 F0.0 B0.0 R.0 O\n").find("more than once") != std::string::npos);
  CHECK(err("rank 0: F0.0 F1.0 B0.0 R.0 O\n").find("B1.0") != std::string::npos);
  CHECK(err("rank 0: B0.0 F0.0 R.0 O\n").find("backward runs before its forward") != std::string::npos);
  CHECK(err("rank 0: F0.0 B0.0 O\n").find("R.0") != std::string::npos);
  CHECK(err("rank 0: F0.0 R.0 B0.0 O\n").find("before the chunk's last backward") != std::string::npos);
}

TEST_CASE("every generated schedule, P 1-9, M 1-20, v 2-4, runs deadlock-free, in order, as its twin") {
  int shapes = 0;
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1})
    for (int pp = 1; pp <= 9; ++pp)
      for (int m = 1; m <= 20; ++m)
        for (int v = 1; v <= 4; ++v) {
          if ((k == ScheduleKind::Interleaved) != (v > 1)) continue;
          auto s = build_schedule(k, pp, v, m);
          if (!s) continue;  // interleaved needs M % P == 0
          INFO(to_string(k) << " P=" << pp << " v=" << v << " M=" << m);
          SimInput in = uniform_sim_input(*s, 1000, 2000);
          in.p2p_ns = 77;
          const SimResult r = run(in);
          CHECK(verify_order(*s, r).ok);
          auto twin = simulate_reference(in);
          REQUIRE(twin.ok());
          CHECK(twin->step_ns == r.step_ns);
          ++shapes;
        }
  CHECK(shapes == 702);
}

// DualPipeV (V-shaped placement: the turn at rank P-1 hands over in memory, rank 0 holds both ends).
TEST_CASE("DualPipeV: bubble equals (P-1)/(6M+P-1) with F = B = W for P 2-8 and M 2P-6P") {
  for (int pp : {2, 3, 4, 8})
    for (int m : {2 * pp, 2 * pp + 1, 3 * pp, 6 * pp}) {
      INFO("P=" << pp << " M=" << m);
      const SimResult r = run(uniform_sim_input(built(ScheduleKind::DualPipeV, pp, 2, m), 1'000'000, 2'000'000));
      CHECK(summarize(r).bubble_fraction == Approx(bubble_fraction(ScheduleKind::DualPipeV, pp, 2, m)).margin(1e-9));
      for (const LaneStats& l : r.lanes) CHECK(l.peak_in_flight == 2 * pp + 1);
    }
}

TEST_CASE("DualPipeV: every shape P 2-9 and M 2P-20 runs deadlock-free and in order as its twin (also uneven and with DP)") {
  int shapes = 0;
  for (int pp = 2; pp <= 9; ++pp)
    for (int m = 2 * pp; m <= 20; ++m) {
      auto s = build_schedule(ScheduleKind::DualPipeV, pp, 2, m);
      REQUIRE(s.ok());
      REQUIRE(check_schedule(*s, "dualpipev").ok());
      INFO("P=" << pp << " M=" << m);
      SimInput in = uniform_sim_input(*s, 1000, 2000);
      in.p2p_ns = 77;
      const SimResult r = run(in);
      CHECK(verify_order(*s, r).ok);
      auto twin = simulate_reference(in);
      REQUIRE(twin.ok());
      CHECK(twin->step_ns == r.step_ns);
      ++shapes;
    }
  CHECK(shapes == 80);
  for (int replicas : {1, 2}) {  // uneven chunks, DP reductions, a slow rank and link
    SimInput in = rich_input(ScheduleKind::DualPipeV, 4, 2, 8, replicas, 0);
    auto fast = simulate_schedule(in);
    auto plain = simulate_reference(in);
    REQUIRE(fast.ok());
    REQUIRE(plain.ok());
    CHECK(fast->step_ns == plain->step_ns);
    CHECK(verify_order(in.schedule, *fast).ok);
  }
}

TEST_CASE("DualPipeV: a slower rank 0 (embedding and LM head) never waits") {
  // The cost model drops the fill/drain bubble when rank 0 is the slowest (costmodel/step.cpp).
  SimInput in = uniform_sim_input(built(ScheduleKind::DualPipeV, 4, 2, 16), 1000, 2000);
  for (int g : {0, 7}) {  // rank 0's two chunks, 10 % more work
    in.chunks[g].forward_ns = 1100;
    in.chunks[g].backward_ns = 1100;
    in.chunks[g].weight_ns = 1100;
  }
  const SimResult r = run(in);
  CHECK(r.lanes[0].end_ns == r.step_ns);
  CHECK(r.step_ns == 16 * 2 * 3300);  // rank 0 busy from start to end
}

TEST_CASE("schedule checks: DualPipeV's turn on the last rank hands over in memory and in order") {
  auto err = [](const std::string& text) {
    auto r = simulate_schedule(uniform_sim_input(parse(text), 1000, 2000), "hand.txt");
    REQUIRE_FALSE(r.ok());
    return r.error().one_line();
  };
  const std::string good = format_schedule(built(ScheduleKind::DualPipeV, 2, 2, 4));
  REQUIRE(simulate_schedule(uniform_sim_input(parse(good), 1000, 2000), "hand.txt").ok());
  const std::string turn = "rank 1: RF0.0 F0.0 F0.1 SF0.1";
  REQUIRE(good.find(turn) != std::string::npos);
  auto with = [&](const std::string& rank1) {
    std::string t = good;
    return t.replace(t.find(turn), turn.size(), rank1);
  };
  CHECK(err(with("rank 1: RF0.0 F0.0 RF0.1 F0.1 SF0.1")).find("receives from its own rank") != std::string::npos);
  CHECK(err(with("rank 1: F0.1 RF0.0 F0.0 SF0.1")).find("uses the other chunk's output before computing it") !=
        std::string::npos);
}
