// The cost of meshplan's vocabulary-chunked loss (FrameworkKnobs::loss_chunk_bytes): no logits kept
// per micro-batch, one chunk alive once per last stage, and one more LM-head GEMM in the backward.
#include <catch2/catch.hpp>

#include "core/loss_chunk.h"
#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/memory.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("a chunked loss keeps no logits with the micro-batch and holds one chunk") {
  ModelSpec m = meshplan_test::llama2_7b();  // V = 32000
  m.dropout = false;
  const double s = 2048, b = 8, h = 4096, T = s * b;  // 16,384 rows
  const uint64_t budget = kDefaultLossChunkBytes;     // 4,096 columns
  CHECK(head_activation_bytes(m, b, s, 1, false, 4.0, 0) == Approx(8 * T * h + 4 * T * 32000));
  CHECK(head_activation_bytes(m, b, s, 1, false, 4.0, budget) == Approx(8 * T * h));
  CHECK(loss_chunk_working_bytes(m, b, s, 1, budget) == Approx(4 * T * 4096));
  CHECK(loss_chunk_working_bytes(m, b, s, 1, 0) == 0);
  // A budget the whole logits fit in is one chunk: kept, as without a budget.
  CHECK(head_activation_bytes(m, b, s, 1, false, 4.0, uint64_t{4} << 30) ==
        Approx(head_activation_bytes(m, b, s, 1, false, 4.0, 0)));
  CHECK(loss_chunk_working_bytes(m, b, s, 1, uint64_t{4} << 30) == 0);
}

TEST_CASE("GPipe keeps every micro-batch's head stash but only one loss chunk") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 2048);
  p.model.dropout = false;
  ParallelConfig c;
  c.pp = 2; c.dp = 4; c.micro_batch_size = 1; c.num_micro_batches = 8; c.schedule = ScheduleKind::GPipe;
  const double whole = stage_memory(p, c, 1).activations_bytes;
  p.job.knobs.loss_chunk_bytes = uint64_t{1} << 20;  // 128 columns of 2,048 rows
  const double chunked = stage_memory(p, c, 1).activations_bytes;
  const double logits = 4.0 * 2048 * 32000, chunk = 4.0 * 2048 * 128;
  CHECK(whole - chunked == Approx(8 * logits - chunk));
  CHECK(estimate_memory(p, c).activations_bytes == Approx(stage_memory(p, c, 1).activations_bytes));  // fast = reference
}

TEST_CASE("a chunked loss runs each LM-head GEMM in chunks and recomputes the logits once") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 8, 64, 2048);
  ParallelConfig c;
  c.dp = 8; c.micro_batch_size = 8; c.num_micro_batches = 1;
  const EndsCompute whole = ends_compute(p, c);
  p.job.knobs.loss_chunk_bytes = kDefaultLossChunkBytes;  // 8 chunks of 4,096 columns
  const EndsCompute chunked = ends_compute(p, c);
  // Chunked GEMMs are smaller, so no faster than the whole one; the backward adds one recompute.
  const double gemm_whole = whole.head_backward_weight_s, gemm_chunked = chunked.head_backward_weight_s;
  CHECK(gemm_chunked >= gemm_whole);
  CHECK(chunked.head_forward_s - whole.head_forward_s == Approx(gemm_chunked - gemm_whole));
  CHECK(chunked.head_backward_input_s - whole.head_backward_input_s == Approx(2 * gemm_chunked - gemm_whole));
  p.job.knobs.loss_chunk_bytes = uint64_t{64} << 30;  // fits: one chunk, nothing changes
  CHECK(ends_compute(p, c).head_backward_input_s == Approx(whole.head_backward_input_s));
}
