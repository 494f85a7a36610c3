// fms-fsdp's eager Foundation Model Stack Llama code: the rotary embedding and GQA expansion bytes by hand,
// their time (with the eager norms and SwiGLU) in layer_compute, and the validation files' `model_code` key.
#include <catch2/catch.hpp>

#include "core/validation_runs.h"
#include "costmodel/compute_time.h"
#include "costmodel/eager_llama_ops.h"
#include "costmodel/fms_llama_ops.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ModelSpec tiny_llama(int kv_heads) {
  ModelSpec m = meshplan_test::llama3_8b();
  m.hidden_size = 64;
  m.intermediate_size = 192;
  m.num_heads = 4;
  m.num_kv_heads = kv_heads;
  m.num_layers = 2;
  m.vocab_size = 256;
  return m;
}
}  // namespace

TEST_CASE("fms's rotary embedding and GQA expansion bytes, by hand") {
  // h 64 (4 heads of 16), b 1, s 8: T = 8, bf16 (e = 2): 32 + 4e = 40 bytes per element of q and k.
  // MHA: q and k both T h = 512 elements -> 40 * 1024 = 40960 each way, no expansion.
  const EagerBytes mha = fms_attention_input_bytes(tiny_llama(4), 1, 8, 1, 2.0);
  CHECK(mha.forward == 40960.0);
  CHECK(mha.backward == 40960.0);
  // GQA, 2 KV heads: k is T kv = 256 elements: 40 * 768 = 30720; K and V expanded to the query heads:
  // 2 e T (h + kv) = 4 * 8 * 96 = 3072.
  const EagerBytes gqa = fms_attention_input_bytes(tiny_llama(2), 1, 8, 1, 2.0);
  CHECK(gqa.forward == 30720.0 + 3072.0);
  CHECK(gqa.backward == gqa.forward);
  // tp 2 halves every term.
  CHECK(fms_attention_input_bytes(tiny_llama(2), 1, 8, 2, 2.0).forward == (30720.0 + 3072.0) / 2.0);
  // fp32 (e = 4): 48 bytes per element.
  CHECK(fms_attention_input_bytes(tiny_llama(4), 1, 8, 1, 4.0).forward == 48.0 * 1024.0);
  // Llama 2 7B, b 2, s 4096, bf16: 40 * 8192 * 8192 (the header's 2.68 GB).
  ModelSpec l7 = tiny_llama(32);
  l7.hidden_size = 4096;
  l7.num_heads = 32;
  CHECK(fms_attention_input_bytes(l7, 2, 4096, 1, 2.0).forward == 40.0 * 8192.0 * 8192.0);
}

TEST_CASE("fms model code adds its eager norms, SwiGLU and rotary bytes at HBM speed, forward and recompute") {
  const ModelSpec m = meshplan_test::llama3_8b();
  Problem p = meshplan_test::problem(m, 8, 16, 4096);
  p.job.knobs.attention = AttentionKind::Fused;
  ParallelConfig c;
  c.micro_batch_size = 2;
  c.recompute = Recompute::Full;
  const LayerCompute fused = layer_compute(p, c);
  p.job.knobs.fms_model_code = true;
  const LayerCompute fms = layer_compute(p, c);
  const EagerBytes ops = eager_llama_op_bytes(m, 2, 4096, 1, false, 2.0, false);
  const EagerBytes rope = fms_attention_input_bytes(m, 2, 4096, 1, 2.0);
  CHECK(fms.forward_s - fused.forward_s == Approx(memory_bound_time_s(p.hardware, ops.forward + rope.forward)));
  CHECK(fms.backward_input_s - fused.backward_input_s ==
        Approx(memory_bound_time_s(p.hardware, ops.backward + rope.backward)));
  CHECK(fms.backward_weight_s == fused.backward_weight_s);
  CHECK(fms.recompute_s - fused.recompute_s == Approx(memory_bound_time_s(p.hardware, ops.forward + rope.forward)));
}

TEST_CASE("validation runs: `model_code: fms` reaches the knob, file level or per run, FSDP runs only") {
  const std::string model =
      "models:\n  m: {model_type: llama, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, "
      "num_key_value_heads: 2, intermediate_size: 192, vocab_size: 256}\nruns:\n";
  const std::string run = "  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1";
  auto file_level = parse_validation("hardware: a100-80gb-sxm\nframework: fsdp\nmodel_code: fms\n" + model + run + "}\n",
                                     "f.yaml");
  REQUIRE(file_level.ok());
  CHECK(run_framework(file_level.value().runs[0]).fms_model_code);
  auto per_run = parse_validation("hardware: a100-80gb-sxm\nframework: fsdp\n" + model + run + ", model_code: fms}\n" +
                                      run + "}\n",
                                  "r.yaml");
  REQUIRE(per_run.ok());
  CHECK(run_framework(per_run.value().runs[0]).fms_model_code);
  CHECK_FALSE(run_framework(per_run.value().runs[1]).fms_model_code);
  auto megatron = parse_validation("hardware: a100-80gb-sxm\nframework: megatron\n" + model + run + ", model_code: fms}\n",
                                   "m.yaml");
  REQUIRE_FALSE(megatron.ok());
  CHECK(megatron.error().field == "runs[0].model_code");
  auto bad = parse_validation("hardware: a100-80gb-sxm\nframework: fsdp\n" + model + run + ", model_code: hf}\n", "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].model_code");
}
