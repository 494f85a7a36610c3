// DeepSpeed BF16_Optimizer's habits (costmodel/grad_accumulation.h): the DP reduction's bytes on the
// wire, and the fp32 accumulation pass after every micro-batch's backward, in the closed form and in
// step_costs (the simulator's input) alike.
#include <catch2/catch.hpp>

#include <algorithm>

#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/grad_accumulation.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

using meshplan_test::config;

TEST_CASE("dp_reduce_bytes sets what the gradient reduction sends, the convention otherwise") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 64, 512, 4096);
  p.job.convention = ParamConvention::Megatron;  // fp32 gradients: 4 bytes
  CHECK(grad_reduce_bytes_per_param(p) == 4.0);
  p.job.knobs.dp_reduce_bytes = 2.0;
  CHECK(grad_reduce_bytes_per_param(p) == 2.0);
  ParallelConfig c = config(1, 1, 64, 2, 4);
  c.zero_stage = 1;
  c.dp_overlap = false;
  p.job.knobs.dp_all_reduce = true;
  const GroupPlacement g = place_group(p.hardware, 64, 1);
  const double P = p.model.num_parameters();
  auto total = [&](double bytes) {
    p.job.knobs.dp_reduce_bytes = bytes;
    return dp_comm(p, c, 0, stage_times(p, c, 0)).total_s;
  };
  // Only the all-reduce changes; the bf16 weight all-gather after the optimizer stays.
  CHECK(total(4.0) - total(2.0) == Approx(all_reduce_s(p.hardware, g, 4 * P) - all_reduce_s(p.hardware, g, 2 * P)));
  CHECK(total(0.0) == Approx(total(4.0)));
  p.job.knobs.dp_reduce_bytes = 2.0;
  CHECK(step_costs(p, c).chunks[0].dp_reduce_s == Approx(all_reduce_s(p.hardware, g, 2 * P)));
}

TEST_CASE("the fp32 accumulation pass adds 18 bytes per parameter to every micro-batch's backward") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(12288, 96, 96), 64, 64, 2048);
  ParallelConfig c = config(8, 8, 1, 1, 16);
  const StepEstimate off = estimate_step(p, c);
  CHECK(grad_accumulation_pass_s(p, c, 3) == 0.0);
  p.job.knobs.grad_accumulation_pass = true;
  const double pass = grad_accumulation_pass_s(p, c, 3);  // a middle stage: 12 layers, no ends
  CHECK(pass == Approx(memory_bound_time_s(p.hardware, 18.0 * chunk_parameters_per_gpu(p.model, c, 3))));
  CHECK(pass > 0);
  const StepEstimate on = estimate_step(p, c);
  // Every stage's backward grows by its own pass: the worst stage's M times, the others' once in the bubble.
  double sum = 0, worst = 0, worst_total = 0;
  for (int s = 0; s < c.pp; ++s) {
    const double x = grad_accumulation_pass_s(p, c, s);
    sum += x;
    const double total = stage_times(p, c, s).total();
    if (total > worst_total) { worst_total = total; worst = x; }
  }
  CHECK(on.time.compute_s - off.time.compute_s == Approx(c.num_micro_batches * worst).epsilon(1e-6));
  CHECK(on.time.pp_bubble_s - off.time.pp_bubble_s == Approx(sum - worst).epsilon(1e-6));
  // step_costs carries the same pass per chunk (the simulator's backward).
  ParallelConfig c0 = c;
  Problem q = p;
  q.job.knobs.grad_accumulation_pass = false;
  for (int k = 0; k < c.pp; ++k)
    CHECK(step_costs(p, c).chunks[k].backward_weight_s - step_costs(q, c0).chunks[k].backward_weight_s ==
          Approx(grad_accumulation_pass_s(p, c, k)));
}
