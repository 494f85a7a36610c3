// PyTorch context_parallel's all-gather exchange (torchtitan): closed forms on a fast and a slow link,
// K/V at the query heads' width, and the refusals that keep it to torchtitan.
#include <catch2/catch.hpp>

#include "core/validation_runs.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/cp_torch_allgather.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// Llama 3 8B (32 heads, 8 KV heads, head dim 128) at 131072 tokens over cp 8: L = 16384 tokens per GPU.
Problem torch_cp_problem() {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 8, 131072);
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.cp_comm = CpComm::TorchAllGather;
  return p;
}
ParallelConfig cp8() {
  ParallelConfig c;
  c.cp = 8; c.dp = 1; c.micro_batch_size = 1; c.num_micro_batches = 8;
  return c;
}
}  // namespace

TEST_CASE("torch_all_gather: K/V at the query heads' width, gather hidden by step 0, fp32 dK/dV ring") {
  Problem p = torch_cp_problem();
  const CpAttention a = cp_attention(p, cp8(), 312e12, 2.0);
  // 2 (K, V) x 2 bytes x 16384 tokens x 32 heads x 128: four times Megatron's all_gather chunk (8 KV heads).
  CHECK(a.kv_chunk_bytes == 2.0 * 2.0 * 16384.0 * 4096.0);
  Problem megatron = p;
  megatron.job.cp_comm = CpComm::AllGather;
  CHECK(a.kv_chunk_bytes == 4.0 * cp_attention(megatron, cp8(), 312e12, 2.0).kv_chunk_bytes);
  CHECK(a.steps == 8);
  // Test profile: NVLink 300 GB/s x 0.8, 5 us per hop.
  const double bw = 300e9 * 0.8;
  const double gather = 7 * 5e-6 + (7.0 / 8.0) * 8.0 * a.kv_chunk_bytes / bw;
  const double send = 5e-6 + 2.0 * 4.0 * 16384.0 * 4096.0 / bw;
  CHECK(a.step_comm_forward_s == Approx(gather));
  CHECK(a.step_comm_backward_s == Approx(gather + send));
  REQUIRE(gather < a.step.forward_s);  // NVLink: the gather hides behind step 0's attention
  CHECK(a.forward_exposed_s == 0.0);
  CHECK(a.backward_exposed_s == Approx(send));  // only the last dK/dV hop has nothing to hide behind
}

TEST_CASE("torch_all_gather on a slow link: the gather beyond step 0 and every dK/dV hop beyond a step") {
  Problem p = torch_cp_problem();
  p.hardware.intra_node = {1e9, 0.0, 1.0};  // 1 GB/s
  const CpAttention a = cp_attention(p, cp8(), 312e12, 2.0);
  const double gather = (7.0 / 8.0) * 8.0 * a.kv_chunk_bytes / 1e9;
  const double send = 2.0 * 4.0 * 16384.0 * 4096.0 / 1e9;
  REQUIRE(send > a.step.backward_s);
  CHECK(a.forward_exposed_s == Approx(gather - a.step.forward_s));
  CHECK(a.backward_exposed_s == Approx((gather - a.step.backward_s) + 7.0 * (send - a.step.backward_s) + send));
  // Compute is the p2p ring's (cp half-blocks of L = 16384) plus the eager merge around the SDPA calls.
  Problem ring = p;
  ring.job.cp_comm = CpComm::P2p;
  const CpAttention r = cp_attention(ring, cp8(), 312e12, 2.0);
  const EagerBytes merge = torch_cp_merge_bytes(8, 16384.0 * 4096.0, 2.0);
  CHECK(a.core.forward_s == Approx(r.core.forward_s + memory_bound_time_s(p.hardware, merge.forward)));
  CHECK(a.core.backward_s == Approx(r.core.backward_s + memory_bound_time_s(p.hardware, merge.backward)));
}

TEST_CASE("torch_all_gather's eager merge: fp32 partial outputs, dQ/dK/dV accumulators, K/V and dK/dV concatenations") {
  const double E = 1e6;
  // bf16, cp 8: forward 12 + 46 x 7 = 334 bytes per query element, backward 50 + 34 x 7 + 26 x 8 = 496.
  CHECK(torch_cp_merge_bytes(8, E, 2.0).forward == Approx(334.0 * E));
  CHECK(torch_cp_merge_bytes(8, E, 2.0).backward == Approx(496.0 * E));
  // cp 2: 58 and 136; fp32 activations (e 4), cp 2: 2 x 8 + 56 = 72 and 12 + 24 + 8 + 12 + 44 + 2 x 28 = 156.
  CHECK(torch_cp_merge_bytes(2, E, 2.0).forward == Approx(58.0 * E));
  CHECK(torch_cp_merge_bytes(2, E, 2.0).backward == Approx(136.0 * E));
  CHECK(torch_cp_merge_bytes(2, E, 4.0).forward == Approx(72.0 * E));
  CHECK(torch_cp_merge_bytes(2, E, 4.0).backward == Approx(156.0 * E));
}

TEST_CASE("validation files: cp_comm must be known, torch_all_gather only under torchtitan, fp8_recipe known") {
  const std::string models = "models:\n  m: {model_type: llama, hidden_size: 64, num_hidden_layers: 2, "
                             "num_attention_heads: 4, num_key_value_heads: 2, intermediate_size: 192, vocab_size: 256}\n";
  const std::string run = "runs:\n  - {model: m, gpus: 2, cp: 2, dp: 1, global_batch: 1, seq: 64, iteration_s: 1";
  struct Case { std::string text, field; };
  const Case bad[] = {
      {"hardware: x\nframework: torchtitan\n" + models + run + ", cp_comm: ring}\n", "runs[0].cp_comm"},
      {"hardware: x\nframework: megatron\n" + models + run + ", cp_comm: torch_all_gather}\n", "runs[0].cp_comm"},
      {"hardware: x\nframework: torchtitan\n" + models + run + ", fp8: true, fp8_recipe: mx}\n", "runs[0].fp8_recipe"},
  };
  for (const Case& c : bad) {
    auto r = parse_validation(c.text, "bad.yaml");
    REQUIRE_FALSE(r.ok());
    INFO(r.error().one_line());
    CHECK(r.error().field == c.field);
  }
  auto ok = parse_validation("hardware: x\nframework: torchtitan\n" + models + run + ", cp_comm: torch_all_gather}\n", "ok.yaml");
  REQUIRE(ok.ok());
  CHECK(ok.value().runs[0].cp_comm == "torch_all_gather");
  // The shipped torchtitan CP rows are costed with PyTorch's exchange.
  auto tt = load_validation(std::string(MESHPLAN_SOURCE_DIR) + "/validation/torchtitan-h100-cp.yaml");
  REQUIRE(tt.ok());
  for (const ValidationRun& r : tt.value().runs) CHECK(r.cp_comm == (r.cp > 1 ? "torch_all_gather" : ""));
}
