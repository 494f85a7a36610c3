// Megatron-Core's edge DDP bucket group (costmodel/ddp_edge_bucket.h): its size from the bucket walk,
// the collectives of it no compute hides, and the whole gradient buffer's zeroing in the optimizer step.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/io.h"
#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/ddp_edge_bucket.h"
#include "costmodel/estimate.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

using meshplan_test::config;

namespace {

// Llama 3 8B on 64 GPUs at TP 1, one micro-batch of one sequence per rank: Megatron-Core's DDP with the
// distributed optimizer and both overlaps, as MLPerf's Llama 3.1 8B runs it.
Problem megatron_8b() {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 64, 64, 8192);
  p.job.knobs.megatron_core_model_code = true;
  p.job.knobs.param_gather_overlap = true;
  return p;
}

ParallelConfig zero1(int tp, int pp, int dp, int64_t M) {
  ParallelConfig c = config(tp, pp, dp, 1, M);
  c.zero_stage = 1;
  return c;
}

// Llama 3 8B per GPU at TP 1 (h 4096, 8 KV heads of 128, gated MLP 14336, vocab 128256, RMSNorm).
constexpr double kAttention = 4096.0 * (4096 + 1024 + 1024 + 4096);  // q, k, v, o
constexpr double kMlp = 3.0 * 4096 * 14336;
constexpr double kNorms = 2.0 * 4096;
constexpr double kEmbedding = 128256.0 * 4096;
constexpr double kHead = 4096.0 + 128256.0 * 4096;  // final norm + untied output layer

}  // namespace

TEST_CASE("the DDP bucket is Megatron-Core's max(40M, 1M x dp) unless the job sets it") {
  Problem p = megatron_8b();
  CHECK(ddp_bucket_params(p, zero1(1, 1, 8, 8)) == 40e6);
  CHECK(ddp_bucket_params(p, zero1(1, 1, 64, 1)) == 64e6);
  ParallelConfig cp = zero1(1, 1, 16, 1);
  cp.cp = 4;  // dp without CP, as Megatron-Core sizes it
  CHECK(ddp_bucket_params(p, cp) == 40e6);
  p.job.knobs.ddp_bucket_params = 768e6;
  CHECK(ddp_bucket_params(p, zero1(1, 1, 64, 1)) == 768e6);
}

TEST_CASE("the edge bucket is what the reverse walk leaves with the embedding") {
  Problem p = megatron_8b();
  const ParallelConfig c = zero1(1, 1, 64, 1);
  // 64M buckets: the head closes one, every MLP closes one, so the last layer's attention (with its norms)
  // is open when the embedding joins it.
  const EdgeBucket e = edge_bucket(p, c);
  CHECK(e.params == Approx(kAttention + kNorms + kEmbedding));
  CHECK(e.gather_bytes == Approx(2.0 * e.params));  // 16-bit weights
  CHECK(e.reduce_bytes == Approx(2.0 * e.params));  // the default convention's 16-bit gradients
  p.job.convention = ParamConvention::Megatron;     // fp32 gradients
  CHECK(edge_bucket(p, c).reduce_bytes == Approx(4.0 * e.params));
}

TEST_CASE("under FP8 primary weights every 16-bit bucket joins the last FP8 bucket's group") {
  Problem p = megatron_8b();
  p.job.fp8 = Fp8Recipe::Current;
  p.job.knobs.fp8_param_gather = true;
  const ParallelConfig c = zero1(1, 1, 64, 1);
  const double wide = kHead + 32 * kNorms + kEmbedding;  // 1,050,939,392: embedding, output layer, norms
  CHECK(wide == 1050939392.0);
  EdgeBucket e = edge_bucket(p, c);
  CHECK(e.params == Approx(kAttention + wide));  // the last FP8 bucket is the first layer's attention
  CHECK(e.gather_bytes == Approx(kAttention * 1.0 + wide * 2.0));
  // MLPerf's 768M buckets: 830,472,192 (3 layers and an MLP), then 872,415,232 each, and a 41,943,040 tail.
  p.job.knobs.ddp_bucket_params = 768e6;
  e = edge_bucket(p, c);
  CHECK(e.params == Approx(kAttention + wide));
  CHECK(3 * (kMlp + kAttention) + kMlp == 830472192.0);
  // MXFP8 gathers the 16-bit weights (fp8_params.h).
  p.job.fp8 = Fp8Recipe::Mxfp8;
  CHECK(edge_bucket(p, c).gather_bytes == Approx(2.0 * e.params));
}

TEST_CASE("the edge bucket's collectives apply to Megatron-Core's DDP at ZeRO 0-1 only") {
  Problem p = megatron_8b();
  ParallelConfig c = zero1(1, 1, 64, 1);
  CHECK(edge_bucket_applies(p, c));
  const GroupPlacement g = zero_shard_group(p.hardware, c);
  const EdgeBucket e = edge_bucket(p, c);
  EdgeExposure x = edge_bucket_exposure(p, c, g);
  CHECK(x.reduce_s == Approx(reduce_scatter_s(p.hardware, g, e.reduce_bytes)));
  CHECK(x.gather_s == Approx(all_gather_s(p.hardware, g, e.gather_bytes)));
  p.job.knobs.param_gather_overlap = false;  // the whole gather is exposed already: no edge term
  CHECK(edge_bucket_exposure(p, c, g).gather_s == 0.0);
  c.zero_stage = 0;  // DDP all-reduces
  CHECK(edge_bucket_exposure(p, c, g).reduce_s == Approx(all_reduce_s(p.hardware, g, e.reduce_bytes)));
  c.zero_stage = 3;
  CHECK_FALSE(edge_bucket_applies(p, c));
  c = zero1(1, 1, 64, 1);
  c.dp_overlap = false;
  CHECK_FALSE(edge_bucket_applies(p, c));
  CHECK_FALSE(edge_bucket_applies(p, zero1(8, 1, 1, 1)));  // one rank: nothing to reduce
  p.job.knobs.megatron_core_model_code = false;            // FSDP, DeepSpeed, torchtitan
  CHECK_FALSE(edge_bucket_applies(p, zero1(1, 1, 64, 1)));
  CHECK(edge_bucket_exposure(p, zero1(1, 1, 64, 1), g).reduce_s == 0.0);
}

TEST_CASE("one micro-batch per step exposes the edge bucket on the first stage only") {
  Problem p = megatron_8b();
  const ParallelConfig c = zero1(1, 1, 64, 1);
  const StageTimes st = stage_times(p, c, 0);
  const DpComm with = dp_comm(p, c, 0, st);
  const EdgeExposure x = edge_bucket_exposure(p, c, zero_shard_group(p.hardware, c));
  CHECK(x.reduce_s > 0);
  CHECK(x.gather_s > 0);
  p.job.knobs.megatron_core_model_code = false;
  const DpComm without = dp_comm(p, c, 0, st);
  CHECK(without.exposed_s == 0.0);  // the whole reduction hides behind the backward, as before
  CHECK(with.exposed_s == Approx(x.reduce_s + x.gather_s));
  CHECK(with.total_s == Approx(without.total_s));  // the traffic is the same, only its exposure moves
  // The last pipeline stage finishes its backward earlier: no edge term there.
  p.job.knobs.megatron_core_model_code = true;
  p.job.global_batch = 512;
  const ParallelConfig pp2 = zero1(1, 2, 32, 16);
  CHECK(dp_comm(p, pp2, 1, stage_times(p, pp2, 1)).exposed_s == 0.0);
  CHECK(dp_comm(p, pp2, 0, stage_times(p, pp2, 0)).exposed_s > 0.0);
}

TEST_CASE("Megatron-Core's optimizer step zeroes the whole gradient buffer") {
  Problem p = megatron_8b();
  const ParallelConfig c = zero1(1, 1, 64, 1);
  p.job.knobs.megatron_core_model_code = false;
  const double shard_only = optimizer_time_s(p, c, 0);
  p.job.knobs.megatron_core_model_code = true;
  const double whole = optimizer_time_s(p, c, 0);
  const ParamBytes pb = param_bytes(p.job);
  const double params = stage_parameters_per_gpu(p.model, c, 0);
  const double local = params / 64;
  CHECK(shard_only == Approx(memory_bound_time_s(p.hardware, local * (2 * pb.optimizer + 3 * pb.gradients + pb.weights))));
  CHECK(whole == Approx(memory_bound_time_s(
                     p.hardware, local * (2 * pb.optimizer + 3 * pb.gradients + pb.weights) + (params - local) * pb.gradients)));
}

TEST_CASE("a validation file's ddp_bucket_size reaches the job and is refused outside Megatron-Core") {
  const std::string models =
      "models:\n  m: {model_type: llama, hidden_size: 4096, num_hidden_layers: 32, num_attention_heads: 32, "
      "num_key_value_heads: 8, intermediate_size: 14336, vocab_size: 128256}\n";
  const std::string run = "runs:\n  - {model: m, gpus: 64, dp: 64, zero: 1, global_batch: 64, micro_batch: 1, "
                          "seq: 8192, iteration_s: 1";
  auto file = parse_validation("hardware: b200\nframework: nemo\nddp_bucket_size: 134217728\n" + models + run +
                                   "}\n  - {model: m, gpus: 64, dp: 64, zero: 1, global_batch: 64, micro_batch: 1, "
                                   "seq: 8192, iteration_s: 1, ddp_bucket_size: 768000000}\n",
                               "f.yaml");
  REQUIRE(file.ok());
  CHECK(file.value().runs[0].ddp_bucket_size == 134217728);  // the file's
  CHECK(file.value().runs[1].ddp_bucket_size == 768000000);  // the run's own
  CHECK(run_framework(file.value().runs[1]).ddp_bucket_params == 768e6);
  auto fsdp = parse_validation("hardware: b200\nframework: fsdp\n" + models + run + ", ddp_bucket_size: 5}\n", "b.yaml");
  REQUIRE_FALSE(fsdp.ok());
  CHECK(fsdp.error().field == "runs[0].ddp_bucket_size");
  auto negative = parse_validation("hardware: b200\nframework: nemo\n" + models + run + ", ddp_bucket_size: -1}\n", "n.yaml");
  REQUIRE_FALSE(negative.ok());
}
