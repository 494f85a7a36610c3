// MoE terms after Megatron-Core's alltoall dispatcher: permutation HBM traffic (permute, sort_chunks,
// unsort, unpermute), FP8 expert GEMMs and the FP8 casts of the routed rows, with hand-computed numbers.
#include <catch2/catch.hpp>

#include "costmodel/compute_time.h"
#include "costmodel/fp8.h"
#include "costmodel/mlp_gemm_elements.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_dispatch_traffic.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ParallelConfig cfg_of(int tp, int ep, int etp) {
  ParallelConfig c;
  c.tp = tp; c.pp = 1; c.dp = 8 / tp; c.ep = ep; c.etp = etp; c.zero_stage = 1;
  c.sequence_parallel = tp > 1;
  c.micro_batch_size = 1;
  return c;
}
Problem small_problem() {
  Problem p = meshplan_test::problem(meshplan_test::small_moe(), 8, 64, 1024);
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}
}  // namespace

TEST_CASE("dispatcher traffic: permute + unpermute always, sort + unsort with several local experts") {
  // 1000 routed rows of h = 7 bf16 elements plus one probability each: (7 + 1) * 2 = 16 bytes a row,
  // read + write = 32,000 bytes per pass.
  const DispatchTraffic one_local = dispatch_traffic_bytes(1000, 7, 1, 1, 2.0);
  CHECK(one_local.forward_bytes == Approx(2.0 * 32000));  // permute 1 + unpermute
  CHECK(one_local.backward_bytes == Approx(one_local.forward_bytes));
  CHECK(dispatch_traffic_bytes(1000, 7, 1, 4, 2.0).forward_bytes == Approx(4.0 * 32000));  // + sort, unsort
  // ETP 2 all-gathers the rows before the sort: the sort and unsort move twice the rows.
  CHECK(dispatch_traffic_bytes(1000, 7, 2, 4, 2.0).forward_bytes == Approx(6.0 * 32000));
  CHECK(dispatch_traffic_bytes(0, 7, 1, 4, 2.0).forward_bytes == 0.0);
}

TEST_CASE("MoE layer compute: expert GEMMs at the FP8 peak, router in 16 bits, permutations memory bound") {
  Problem p = small_problem();
  p.hardware.peak_flops["fp8"] = 624e12;
  const ParallelConfig c = cfg_of(1, 4, 1);
  // small_moe: h 1024, 16 experts of 704 (gated), top-2, 7 of 8 layers MoE. T = 1024 tokens; EP4:
  // 4 local experts of 2 * 1024 * 4 / 16 = 512 tokens each.
  const double r = 7.0 / 8.0;
  const double up = 2.0 * 2.0 * 512 * 1024 * 704, down = 2.0 * 512 * 704 * 1024, router = 2.0 * 1024 * 1024 * 16;
  const double hbm = 2039e9 * 0.8;
  // Permutations: 2048 routed rows of (1024 + 1) * 2 bytes, 4 passes of read + write = 33,587,200;
  // activation function 6 bytes x 2048 rows x 704 = 8,650,752.
  const double perm = 4.0 * 2.0 * 2048 * 1025 * 2.0, act = 6.0 * 2048 * 704;
  for (bool fp8 : {false, true}) {
    p.job.fp8 = fp8 ? Fp8Recipe::Delayed : Fp8Recipe::None;
    const double expert_peak = fp8 ? 624e12 : 312e12;
    LayerCompute lc;
    add_expert_compute(p, c, lc);
    const double gemms = 4.0 * (gemm_time_s(p.hardware, expert_peak, up) + gemm_time_s(p.hardware, expert_peak, down)) +
                         gemm_time_s(p.hardware, 312e12, router);
    CHECK(lc.dx_gemm_s == Approx(r * gemms));
    CHECK(lc.forward_s - lc.dx_gemm_s == Approx(r * (perm + act) / hbm));
    CHECK(lc.backward_input_s - lc.dx_gemm_s == Approx(r * (perm + 2.0 * act) / hbm));
  }
}

TEST_CASE("MoE layer compute under ETP: sort/unsort and the activation see the etp-gathered rows") {
  Problem p = small_problem();
  const ParallelConfig c = cfg_of(2, 4, 2);
  // TP 2 with SP: 512 tokens a rank, top-2 -> 1024 routed rows; ETP 2 gathers them to 2048 rows of
  // f_e/2 = 352. Permutations: 2 passes on 1024 rows + 2*2 passes (sort, unsort) = 6 passes of
  // 2 * 1024 * (1024 + 1) * 2 bytes; activation 6 bytes x 2048 rows x 352.
  const double perm = 6.0 * 2.0 * 1024 * 1025 * 2.0, act = 6.0 * 2048 * 352;
  LayerCompute lc;
  add_expert_compute(p, c, lc);
  CHECK(lc.forward_s - lc.dx_gemm_s == Approx(7.0 / 8.0 * (perm + act) / (2039e9 * 0.8)));
}

TEST_CASE("FP8 casts of an MoE layer cover the routed rows, not a dense MLP") {
  Problem p = small_problem();
  const ParallelConfig c = cfg_of(2, 4, 1);
  // 1024 tokens, TP 2 (sequence parallel: 512 tokens a rank dispatch), top-2 -> 1024 routed rows.
  const GemmElements e = mlp_gemm_elements(p, c, 1024);
  // Dense layer (1 of 8): in 1024 * (1024 + 2816/2) = 2,490,368, out 1024 * (2 * 1408 + 1024) = 3,932,160.
  // Shared expert f_s 1408: in 1024 * (1024 + 704) = 1,769,472, out 1024 * (2 * 704 + 1024) = 2,490,368.
  // Routed rows: in 1024 * (1024 + 704) = 1,769,472, out 1024 * (2 * 704 + 1024) = 2,490,368.
  CHECK(e.inputs == Approx(2490368.0 / 8 + 7.0 / 8 * (1769472.0 + 1769472.0)));
  CHECK(e.outputs == Approx(3932160.0 / 8 + 7.0 / 8 * (2490368.0 + 2490368.0)));
  // Dense models keep the dense MLP's elements.
  Problem dense = p;
  dense.model.moe = MoeSpec{};
  const GemmElements d = mlp_gemm_elements(dense, c, 1024);
  CHECK(d.inputs == Approx(2490368.0));
  CHECK(d.outputs == Approx(3932160.0));
  // fp8_cast_bytes (delayed: 3 bytes per input element forward) adds the attention GEMMs'
  // 1024 * (1024 + 1024/2) inputs to them.
  p.job.fp8 = Fp8Recipe::Delayed;
  CHECK(fp8_cast_bytes(p, c, 1024).forward_bytes == Approx(3.0 * (1024.0 * 1536 + e.inputs)));
}
