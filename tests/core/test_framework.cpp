// Tests of the framework table: what each framework admits, its convention, and the errors.
#include <catch2/catch.hpp>

#include "core/framework.h"

using namespace meshplan;

namespace {

Problem llama_on(int64_t gpus, Framework f, int64_t layers = 32) {
  Problem p;
  p.model.hidden_size = 4096; p.model.num_layers = layers; p.model.num_heads = 32;
  p.model.num_kv_heads = 8; p.model.intermediate_size = 11008; p.model.vocab_size = 32000;
  p.hardware.name = "test"; p.hardware.gpus_per_node = 8;
  p.job.gpus = gpus; p.job.global_batch = 64; p.job.seq_len = 4096; p.job.framework = f;
  return p;
}

ParallelConfig config(int tp, int pp, int dp, int zero, ScheduleKind s = ScheduleKind::OneFOneB) {
  ParallelConfig c;
  c.tp = tp; c.pp = pp; c.dp = dp; c.zero_stage = zero; c.schedule = s;
  c.micro_batch_size = 1; c.num_micro_batches = 64 / dp;
  c.sequence_parallel = tp > 1;
  return c;
}

std::string first_field(const ErrorList& e) { return e.empty() ? "" : e.front().field; }

}  // namespace

TEST_CASE("framework names round-trip and unknown names are refused") {
  for (auto f : {Framework::Meshplan, Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp,
                 Framework::Torchtitan, Framework::Nemo}) {
    REQUIRE(parse_framework(to_string(f)).has_value());
    CHECK(*parse_framework(to_string(f)) == f);
    CHECK(framework_spec(f).id == f);
  }
  CHECK_FALSE(parse_framework("jax").has_value());
}

TEST_CASE("megatron: fp32 main grads (18 B/param), dropout 0.1 by default, no ZB-H1 or ZeRO-2/3") {
  const FrameworkSpec& m = framework_spec(Framework::Megatron);
  const ParamBytes pb = param_bytes(m.convention);
  CHECK(pb.weights + pb.gradients + pb.optimizer == 18.0);
  CHECK(pb.gradients == 4.0);
  CHECK(m.default_dropout == 0.1);
  const Problem p = llama_on(16, Framework::Megatron);
  CHECK(validate_framework(p, config(2, 2, 4, 1), "t").empty());
  CHECK(validate_framework(p, config(2, 2, 4, 1, ScheduleKind::ZeroBubbleH1), "t").size() == 1);
  CHECK(first_field(validate_framework(p, config(2, 2, 4, 1, ScheduleKind::GPipe), "t")) == "--schedule");
  CHECK(first_field(validate_framework(p, config(2, 2, 4, 2), "t")) == "--zero");
  CHECK(first_field(validate_framework(p, config(2, 2, 4, 3), "t")) == "--zero");
  // Uneven splits are fine: the export writes --pipeline-model-parallel-layout.
  CHECK(validate_framework(llama_on(16, Framework::Megatron, 30), config(2, 4, 2, 1), "t").empty());
}

TEST_CASE("deepspeed: ZeRO-2/3 only without pipeline parallelism, no sequence parallelism") {
  const Problem p = llama_on(16, Framework::DeepSpeed);
  ParallelConfig c = config(1, 1, 16, 3);
  CHECK(validate_framework(p, c, "t").empty());
  c = config(2, 2, 4, 2);
  c.sequence_parallel = false;
  CHECK(first_field(validate_framework(p, c, "t")) == "--zero");
  c.zero_stage = 1;
  CHECK(validate_framework(p, c, "t").empty());
  c.sequence_parallel = true;
  CHECK(first_field(validate_framework(p, c, "t")) == "--sequence-parallel");
  CHECK(param_bytes(framework_spec(Framework::DeepSpeed).convention).gradients == 2.0);
}

TEST_CASE("fsdp: no tensor or pipeline parallelism, no ZeRO-1, and torchtitan: SP with every TP") {
  const Problem f = llama_on(16, Framework::Fsdp);
  CHECK(validate_framework(f, config(1, 1, 16, 3), "t").empty());
  CHECK(validate_framework(f, config(1, 1, 16, 2), "t").empty());
  CHECK(first_field(validate_framework(f, config(1, 1, 16, 1), "t")) == "--zero");
  CHECK(first_field(validate_framework(f, config(2, 1, 8, 3), "t")) == "--tp");
  const Problem t = llama_on(16, Framework::Torchtitan);
  ParallelConfig c = config(2, 2, 4, 3);
  CHECK(validate_framework(t, c, "t").empty());
  c.sequence_parallel = false;
  CHECK(first_field(validate_framework(t, c, "t")) == "--sequence-parallel");
  // Equal pipeline chunks: 30 layers do not split over pp 4.
  CHECK(first_field(validate_framework(llama_on(16, Framework::Torchtitan, 30), config(2, 4, 2, 3), "t")) == "--pp");
}

TEST_CASE("meshplan admits everything its planner knows") {
  const Problem p = llama_on(16, Framework::Meshplan);
  for (auto s : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::ZeroBubbleH1})
    for (int z = 0; z <= 3; ++z) CHECK(validate_framework(p, config(2, 2, 4, z, s), "t").empty());
}

TEST_CASE("framework errors are one line naming the framework") {
  const ErrorList e = validate_framework(llama_on(16, Framework::Megatron), config(2, 2, 4, 3), "t");
  REQUIRE(e.size() == 1);
  CHECK(e.front().one_line().find("megatron") != std::string::npos);
  CHECK(e.front().one_line().find('\n') == std::string::npos);
}
