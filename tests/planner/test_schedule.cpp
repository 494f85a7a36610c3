// Schedules as data: golden action lists (P=4, M=8), text round trip, warm-up and in-flight counts.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "planner/schedule.h"

using namespace meshplan;

static std::string read_golden(const std::string& name) {
  std::ifstream in(std::string(MESHPLAN_GOLDEN_DIR) + "/schedules/" + name);
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

static Schedule built(ScheduleKind k, int pp, int v, int m) {
  auto s = build_schedule(k, pp, v, m);
  REQUIRE(s.ok());
  return *s;
}

TEST_CASE("schedule golden: the four kinds at P=4, M=8 match the text files exactly") {
  // Regenerate deliberately (never to silence a failure): format_schedule(build_schedule(...)).
  CHECK(format_schedule(built(ScheduleKind::GPipe, 4, 1, 8)) == read_golden("gpipe_p4_m8.txt"));
  CHECK(format_schedule(built(ScheduleKind::OneFOneB, 4, 1, 8)) == read_golden("1f1b_p4_m8.txt"));
  CHECK(format_schedule(built(ScheduleKind::Interleaved, 4, 2, 8)) == read_golden("interleaved_p4_m8.txt"));
  CHECK(format_schedule(built(ScheduleKind::ZeroBubbleH1, 4, 1, 8)) == read_golden("zb-h1_p4_m8.txt"));
  // DualPipeV at the DualPipe README's figure shape (4 ranks, 8 stages, 10 micro-batches).
  CHECK(format_schedule(built(ScheduleKind::DualPipeV, 4, 2, 10)) == read_golden("dualpipev_p4_m10.txt"));
}

TEST_CASE("schedule golden files parse back to the same schedules") {
  for (const char* f : {"gpipe_p4_m8.txt", "1f1b_p4_m8.txt", "interleaved_p4_m8.txt", "zb-h1_p4_m8.txt",
                        "dualpipev_p4_m10.txt"}) {
    auto s = parse_schedule_text(read_golden(f), f);
    REQUIRE(s.ok());
    CHECK(format_schedule(*s) == read_golden(f));
  }
}

TEST_CASE("schedule text round-trips for many shapes, peers included") {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1,
                 ScheduleKind::DualPipeV})
    for (int pp : {1, 2, 3, 5})
      for (int m : {5, 10}) {
        const int v = k == ScheduleKind::Interleaved ? 3 : k == ScheduleKind::DualPipeV ? 2 : 1;
        if (k == ScheduleKind::Interleaved && m % pp != 0) continue;
        if (k == ScheduleKind::DualPipeV && (pp < 2 || m < 2 * pp)) continue;
        const Schedule s = built(k, pp, v, m);
        auto back = parse_schedule_text(format_schedule(s), "round-trip");
        REQUIRE(back.ok());
        CHECK(back->kind == s.kind);
        CHECK(back->pp == s.pp);
        CHECK(back->virtual_stages == s.virtual_stages);
        CHECK(back->num_micro_batches == s.num_micro_batches);
        CHECK(back->ranks == s.ranks);
      }
}

TEST_CASE("1F1B: rank r runs pp-r-1 warm-up forwards and holds pp-r activations") {
  auto s = make_schedule(ScheduleKind::OneFOneB, 4, 1, 8);
  REQUIRE(s.ok());
  for (int r = 0; r < 4; ++r) {
    int warmup = 0;
    while (s->ranks[r][warmup].kind == ActionKind::Forward) ++warmup;
    CHECK(warmup == 4 - r);  // pp-r-1 warm-up plus the first steady-state forward
  }
  CHECK(max_in_flight(*s) == std::vector<int>{4, 3, 2, 1});
}

TEST_CASE("in-flight counts: GPipe M, interleaved (Megatron) 2(P-r-1)+(v-1)P+1, ZB-H1 P until W") {
  CHECK(max_in_flight(*make_schedule(ScheduleKind::GPipe, 4, 1, 8)) == std::vector<int>{8, 8, 8, 8});
  CHECK(max_in_flight(*make_schedule(ScheduleKind::Interleaved, 4, 2, 8)) == std::vector<int>{11, 9, 7, 5});
  CHECK(max_in_flight(*make_schedule(ScheduleKind::ZeroBubbleH1, 4, 1, 8)) == std::vector<int>{4, 4, 4, 4});
  // Few micro-batches: capped by v*M (all warm-up).
  CHECK(max_in_flight(*make_schedule(ScheduleKind::Interleaved, 8, 2, 8))[0] == 16);
}

TEST_CASE("interleaved follows Megatron's chunk/micro-batch mapping") {
  auto s = make_schedule(ScheduleKind::Interleaved, 4, 2, 8);
  REQUIRE(s.ok());
  const auto& r0 = s->ranks[0];
  // Warm-up on rank 0: 2*(4-0-1) + (2-1)*4 = 10 forwards: mb 0-3 chunk 0, mb 0-3 chunk 1, mb 4-5 chunk 0.
  const int mbs[] = {0, 1, 2, 3, 0, 1, 2, 3, 4, 5};
  const int chunks[] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 0};
  for (int i = 0; i < 10; ++i) {
    CHECK(r0[i].kind == ActionKind::Forward);
    CHECK(r0[i].micro_batch == mbs[i]);
    CHECK(r0[i].chunk == chunks[i]);
  }
  // The first backward runs the last chunk first (chunk 1 of micro-batch 0).
  CHECK(r0[11].kind == ActionKind::Backward);
  CHECK(r0[11].chunk == 1);
  CHECK(r0[11].micro_batch == 0);
}

TEST_CASE("ZB-H1 splits backward: rank r runs (F x, B x-(P-1-r), W x-(P-1))") {
  auto s = make_schedule(ScheduleKind::ZeroBubbleH1, 4, 1, 8);
  REQUIRE(s.ok());
  // Rank 1: F0 F1 F2 B0 F3 B1 W0 ... (first W deferred by P-1-... as in Qi et al.'s figure 3).
  const auto& r1 = s->ranks[1];
  auto code = [](const Action& a) { return std::string(to_string(a.kind)) + std::to_string(a.micro_batch); };
  std::string head;
  for (int i = 0; i < 8; ++i) head += code(r1[i]) + " ";
  CHECK(head == "F0 F1 F2 B0 F3 B1 W0 F4 ");
  CHECK(has_weight_actions(*s));
  CHECK_FALSE(has_weight_actions(*make_schedule(ScheduleKind::OneFOneB, 4, 1, 8)));
}

TEST_CASE("R follows each chunk's last backward piece and O ends every rank") {
  for (auto k : {ScheduleKind::GPipe, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1}) {
    const int v = k == ScheduleKind::Interleaved ? 2 : 1;
    auto s = make_schedule(k, 4, v, 8);
    REQUIRE(s.ok());
    for (const auto& acts : s->ranks) {
      CHECK(acts.back().kind == ActionKind::OptimizerStep);
      int reduces = 0;
      for (size_t i = 0; i < acts.size(); ++i) {
        if (acts[i].kind != ActionKind::ReduceGrads) continue;
        ++reduces;
        for (size_t j = i + 1; j < acts.size(); ++j) {
          const bool backward = acts[j].kind == ActionKind::Backward || acts[j].kind == ActionKind::BackwardWeight;
          CHECK_FALSE((backward && acts[j].chunk == acts[i].chunk));
        }
      }
      CHECK(reduces == v);
    }
  }
}

TEST_CASE("add_communication: a receive before every F/B fed by another rank, a send after") {
  const Schedule s = built(ScheduleKind::Interleaved, 4, 2, 8);
  int sends = 0, recvs = 0;
  for (int r = 0; r < 4; ++r) {
    const auto& acts = s.ranks[r];
    for (size_t i = 0; i < acts.size(); ++i) {
      const Action& a = acts[i];
      const int g = model_chunk(s, r, a.chunk);
      if (a.kind == ActionKind::Forward && g > 0) {
        REQUIRE(i > 0);
        CHECK(acts[i - 1].kind == ActionKind::RecvForward);
        CHECK(acts[i - 1].peer == (r + 3) % 4);
      }
      if (a.kind == ActionKind::Backward && g < 7) CHECK(acts[i - 1].kind == ActionKind::RecvBackward);
      sends += a.kind == ActionKind::SendForward || a.kind == ActionKind::SendBackward;
      recvs += a.kind == ActionKind::RecvForward || a.kind == ActionKind::RecvBackward;
    }
  }
  CHECK(sends == recvs);
  CHECK(sends == 2 * 7 * 8);  // 7 boundaries between 8 model chunks, both directions, 8 micro-batches
  // One rank: nobody to talk to.
  const Schedule single = built(ScheduleKind::OneFOneB, 1, 1, 4);
  for (const auto& a : single.ranks[0]) CHECK_FALSE(is_p2p(a.kind));
}

TEST_CASE("schedule errors name the field and give a hint") {
  auto bad = make_schedule(ScheduleKind::Interleaved, 4, 2, 6);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "num_micro_batches");
  CHECK_FALSE(bad.error().hint.empty());
  CHECK_FALSE(make_schedule(ScheduleKind::OneFOneB, 4, 2, 8).ok());
  CHECK_FALSE(make_schedule(ScheduleKind::GPipe, 0, 1, 8).ok());
  auto p = parse_schedule_text("rank 0: F0.0 X1.0\n", "my.txt");
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().file == "my.txt");
  CHECK(p.error().value == "X1.0");
  CHECK(p.error().field.find("line 1") != std::string::npos);
  CHECK_FALSE(parse_schedule_text("rank 1: F0.0\n", "x").ok());  // ranks numbered from 0
  CHECK_FALSE(parse_schedule_text("rank 0: F0\n", "x").ok());    // missing chunk
  CHECK_FALSE(parse_schedule_text("# meshplan schedule: kind=foo\nrank 0: O\n", "x").ok());
}

// The order torch.distributed.pipelining's ScheduleDualPipeV builds (_calculate_single_rank_operations):
// rank r's eight steps, local chunk 0 = model chunk r, chunk 1 = 2P-1-r.
TEST_CASE("DualPipeV: PyTorch's eight steps on rank 0 and the last rank of P=4 M=10") {
  auto s = make_schedule(ScheduleKind::DualPipeV, 4, 2, 10);
  REQUIRE(s.ok());
  auto head = [&](int r, int n) {
    std::string t;
    for (int i = 0; i < n; ++i) {
      const Action& a = s->ranks[r][i];
      t += std::string(to_string(a.kind)) + std::to_string(a.micro_batch) + "." + std::to_string(a.chunk) + " ";
    }
    return t;
  };
  // Rank 0: 2(P-1) = 6 forwards of chunk 0; one (F0 F1) pair; then (B1 W1 F1) x 3 with zero bubble.
  CHECK(head(0, 14) == "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F2.1 ");
  // The last rank: no warm-up, four (F0 F1) pairs, then its first (F0, full B1) not overlapped.
  CHECK(head(3, 12) == "F0.0 F0.1 F1.0 F1.1 F2.0 F2.1 F3.0 F3.1 F4.0 B0.1 W0.1 F4.1 ");
  for (int r = 0; r < 4; ++r) {
    CHECK(model_chunk(*s, r, 0) == r);
    CHECK(model_chunk(*s, r, 1) == 7 - r);
  }
  CHECK(has_weight_actions(*s));
}

TEST_CASE("DualPipeV holds 2P + 1 chunk activations on every rank whatever M") {
  for (int pp : {2, 3, 4, 8})
    for (int m : {2 * pp, 2 * pp + 1, 5 * pp}) {
      auto s = make_schedule(ScheduleKind::DualPipeV, pp, 2, m);
      REQUIRE(s.ok());
      INFO("P=" << pp << " M=" << m);
      for (int peak : max_in_flight(*s)) CHECK(peak == 2 * pp + 1);
      for (const auto& acts : s->ranks) {  // every F, B and W once per chunk and micro-batch
        int counts[3][2] = {};
        for (const Action& a : acts)
          if (is_compute(a.kind)) ++counts[static_cast<int>(a.kind)][a.chunk];
        for (auto& k : counts) CHECK((k[0] == m && k[1] == m));
      }
    }
}

TEST_CASE("DualPipeV communication: the turn on the last rank hands over in memory") {
  const Schedule s = built(ScheduleKind::DualPipeV, 4, 2, 8);
  int sends = 0, recvs = 0;
  for (int r = 0; r < 4; ++r)
    for (const Action& a : s.ranks[r]) {
      if (!is_p2p(a.kind)) continue;
      const bool send = a.kind == ActionKind::SendForward || a.kind == ActionKind::SendBackward;
      sends += send;
      recvs += !send;
      CHECK(a.peer != r);
      // Down the V on chunk 0 (r -> r+1), back up on chunk 1 (r -> r-1).
      if (a.kind == ActionKind::SendForward) CHECK(a.peer == (a.chunk == 0 ? r + 1 : r - 1));
      if (a.kind == ActionKind::SendBackward) CHECK(a.peer == (a.chunk == 0 ? r - 1 : r + 1));
    }
  CHECK(sends == recvs);
  CHECK(sends == 2 * 6 * 8);  // 7 boundaries between 8 model chunks, one of them local; both directions
}

TEST_CASE("DualPipeV errors: two chunks per rank and pp >= 2 and at least 2 pp micro-batches") {
  auto v = make_schedule(ScheduleKind::DualPipeV, 4, 1, 8);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().field == "--virtual-stages");
  auto m = make_schedule(ScheduleKind::DualPipeV, 4, 2, 7);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().field == "num_micro_batches");
  CHECK(m.error().message.find("2pp=8") != std::string::npos);
  CHECK_FALSE(make_schedule(ScheduleKind::DualPipeV, 1, 2, 4).ok());
  auto t = parse_schedule_text("# meshplan schedule: kind=dualpipev pp=2 virtual_stages=3\nrank 0: F0.2 O\nrank 1: O\n", "v.txt");
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().field == "virtual_stages");
}
