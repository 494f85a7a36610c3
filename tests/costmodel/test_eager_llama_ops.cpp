// torchtitan's Llama block run eager (no torch.compile): extra RMSNorm and SwiGLU bytes by hand, their
// time in layer_compute, torchtitan's default, and the validation files' `compile` / `norm_type` keys.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/validation_runs.h"
#include "costmodel/compute_time.h"
#include "costmodel/eager_llama_ops.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// A small Llama block: h 64, f 192, 4 heads (2 KV), SwiGLU, two RMSNorms per layer.
ModelSpec tiny_llama() {
  ModelSpec m = meshplan_test::llama3_8b();
  m.hidden_size = 64;
  m.intermediate_size = 192;
  m.num_heads = 4;
  m.num_kv_heads = 2;
  m.num_layers = 2;
  m.vocab_size = 256;
  return m;
}
}  // namespace

TEST_CASE("eager RMSNorm and SwiGLU bytes of torchtitan's Llama block, by hand") {
  const ModelSpec m = tiny_llama();
  // b 1, s 8: T = 8, bf16 (e = 2). One norm: eager forward (28 + 4e) = 36 bytes per element against
  // the fused 2e = 4: 32 extra; backward (76 + 8e) = 92 against 4e = 8: 84 extra. Two norms of
  // T h = 512 elements: 32768 forward, 86016 backward. SwiGLU on T f = 1536: 2e = 4 -> 6144 forward,
  // 3e = 6 -> 9216 backward.
  const EagerBytes one = eager_llama_op_bytes(m, 1, 8, 1, false, 2.0, false);
  CHECK(one.forward == 32768.0 + 6144.0);
  CHECK(one.backward == 86016.0 + 9216.0);
  // tp 2 with SP: the norms see T/2 tokens, the SwiGLU f/2 columns.
  const EagerBytes sp = eager_llama_op_bytes(m, 1, 8, 2, true, 2.0, false);
  CHECK(sp.forward == 16384.0 + 3072.0);
  CHECK(sp.backward == 43008.0 + 4608.0);
  // tp 2 without SP: norms on every token of every rank.
  CHECK(eager_llama_op_bytes(m, 1, 8, 2, false, 2.0, false).forward == 32768.0 + 3072.0);
  // norm_type fused_rmsnorm (torchtitan's Triton norm): only the SwiGLU chain remains.
  const EagerBytes fused = eager_llama_op_bytes(m, 1, 8, 1, false, 2.0, true);
  CHECK(fused.forward == 6144.0);
  CHECK(fused.backward == 9216.0);
  // A plain (GELU) MLP has no chain to fuse.
  ModelSpec plain = m;
  plain.mlp = MlpKind::Plain;
  CHECK(eager_llama_op_bytes(plain, 1, 8, 1, false, 2.0, true).forward == 0.0);
  // Llama 3 8B, b 2, s 8192 (T = 16384), tp 1: 64 T h + 4 T f forward, 168 T h + 6 T f backward
  // (the header's 5.2 GB and 12.7 GB).
  const EagerBytes big = eager_llama_op_bytes(meshplan_test::llama3_8b(), 2, 8192, 1, false, 2.0, false);
  CHECK(big.forward == 5234491392.0);
  CHECK(big.backward == 12683575296.0);
}

TEST_CASE("torch_compile off adds the eager bytes at HBM speed and torchtitan's default is off") {
  CHECK_FALSE(framework_knobs(framework_spec(Framework::Torchtitan)).torch_compile);
  for (Framework f : {Framework::Megatron, Framework::Nemo, Framework::DeepSpeed, Framework::Fsdp, Framework::Meshplan})
    CHECK(framework_knobs(framework_spec(f)).torch_compile);
  const ModelSpec m = meshplan_test::llama3_8b();
  Problem p = meshplan_test::problem(m, 8, 16, 8192);
  p.job.knobs.attention = AttentionKind::Fused;
  ParallelConfig c;
  c.micro_batch_size = 2;
  c.recompute = Recompute::Full;
  const LayerCompute compiled = layer_compute(p, c);
  p.job.knobs.torch_compile = false;
  const LayerCompute eager = layer_compute(p, c);
  const EagerBytes e = eager_llama_op_bytes(m, 2, 8192, 1, false, 2.0, false);
  CHECK(eager.forward_s - compiled.forward_s == Approx(memory_bound_time_s(p.hardware, e.forward)));
  CHECK(eager.backward_input_s - compiled.backward_input_s == Approx(memory_bound_time_s(p.hardware, e.backward)));
  CHECK(eager.backward_weight_s == compiled.backward_weight_s);
  // Full recompute reruns the eager forward too.
  CHECK(eager.recompute_s - compiled.recompute_s == Approx(memory_bound_time_s(p.hardware, e.forward)));
  // 5.23 GB at 2039 GB/s x 0.8: 3.2 ms more forward per layer.
  CHECK(eager.forward_s - compiled.forward_s == Approx(5234491392.0 / (2039e9 * 0.8)));
}

TEST_CASE("validation runs: `compile` and `norm_type` reach the knobs and absent compile is torchtitan's false") {
  const std::string head =
      "hardware: a100-80gb-sxm\nframework: torchtitan\nmodels:\n"
      "  m: {model_type: llama, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, "
      "num_key_value_heads: 2, intermediate_size: 192, vocab_size: 256}\nruns:\n";
  const std::string run = "  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1";
  auto set = parse_validation(head + run + ", compile: true}\n" + run + "}\n" + run +
                                  ", compile: false, norm_type: fused_rmsnorm}\n",
                              "t.yaml");
  REQUIRE(set.ok());
  const auto& runs = set.value().runs;
  CHECK(run_framework(runs[0]).torch_compile);
  CHECK_FALSE(run_framework(runs[1]).torch_compile);
  CHECK_FALSE(run_framework(runs[1]).fused_rmsnorm);
  CHECK_FALSE(run_framework(runs[2]).torch_compile);
  CHECK(run_framework(runs[2]).fused_rmsnorm);
  // Another framework's run: the key would be silently meaningless, so it is refused.
  auto other = parse_validation(
      "hardware: a100-80gb-sxm\nframework: megatron\nmodels:\n"
      "  m: {model_type: llama, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, "
      "num_key_value_heads: 2, intermediate_size: 192, vocab_size: 256}\nruns:\n" +
          run + ", compile: false}\n",
      "o.yaml");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().field == "runs[0].compile");
  auto bad = parse_validation(head + run + ", norm_type: layernorm}\n", "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].norm_type");
}
