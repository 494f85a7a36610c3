// The loss kernel's HBM traffic: bytes per logit by kind, their time in the LM head, each framework's
// default, and the validation files' `cross_entropy` key.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/validation_runs.h"
#include "costmodel/compute_time.h"
#include "costmodel/cross_entropy.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("cross entropy bytes per logit, counted from each kernel's passes") {
  // Megatron-Core unfused: cast 2+4, max 4, -= 8, exp 8, sum 4, div 8; backward mul 8, cast 4+2.
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Unfused).forward == 38.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Unfused).backward == 14.0);
  // jit-fused: cast+max 6, subtract+exp+sum 8, div 8; the same backward.
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Fused).forward == 22.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Fused).backward == 14.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Generic).forward == 12.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Generic).backward == 12.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::TorchFp32).forward == 14.0);   // torchtitan
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::TorchFp32).backward == 22.0);
  // Transformer Engine's Triton kernels up to TE 2.17: online softmax reads the bf16 row (2), the loss
  // kernel reads it again and writes the gradient over it (2 + 2); backward scales it in place (2 + 2).
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::TeInplace).forward == 6.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::TeInplace).backward == 4.0);
  // From TE 2.18 the gradient is an fp32 buffer: 2 + 2 + 4 forward; in-place scale 4 + 4 and
  // autograd's cast to bf16 4 + 2 backward.
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Te).forward == 8.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::Te).backward == 14.0);
  // flash-attn's CrossEntropyLoss (llm-foundry): the forward reads each bf16 row once and writes a loss
  // and an LSE per row (2); the backward reads it again and writes a new bf16 gradient (2 + 2).
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::FlashXentropy).forward == 2.0);
  CHECK(cross_entropy_bytes_per_logit(CrossEntropyKernel::FlashXentropy).backward == 4.0);
}

TEST_CASE("train-metric cross entropies: 14 bytes per logit each, forward only") {
  // Composer's LanguageCrossEntropy under autocast: cast to fp32 (2 + 4) and log_softmax (4 + 4).
  CHECK(train_metric_bytes_per_logit(0) == 0.0);
  CHECK(train_metric_bytes_per_logit(1) == 14.0);
  CHECK(train_metric_bytes_per_logit(2) == 28.0);  // LanguageCrossEntropy + LanguagePerplexity
  CHECK(train_metric_bytes_per_logit(-1) == 0.0);
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 8, 4096);
  ParallelConfig c;
  c.tp = 2; c.dp = 4; c.micro_batch_size = 1; c.num_micro_batches = 2;
  p.job.knobs.cross_entropy = CrossEntropyKernel::FlashXentropy;
  const EndsCompute none = ends_compute(p, c);
  p.job.knobs.train_metric_cross_entropies = 2;
  const EndsCompute two = ends_compute(p, c);
  const double logits = 4096.0 * 128256.0 / 2.0;
  CHECK(two.head_forward_s - none.head_forward_s == Approx(memory_bound_time_s(p.hardware, 28.0 * logits)));
  CHECK(two.head_backward_input_s == Approx(none.head_backward_input_s));  // no gradient: no backward bytes
}

TEST_CASE("the LM head pays the kernel's bytes over T * V / tp logits at HBM speed") {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 8, 4096);
  ParallelConfig c;
  c.tp = 2; c.dp = 4; c.micro_batch_size = 1; c.num_micro_batches = 2;
  p.job.knobs.cross_entropy = CrossEntropyKernel::Generic;
  const EndsCompute generic = ends_compute(p, c);
  p.job.knobs.cross_entropy = CrossEntropyKernel::Unfused;
  const EndsCompute unfused = ends_compute(p, c);
  // 4096 tokens x 128256 / 2 logits: (38 - 12) more bytes forward, (14 - 12) backward.
  const double logits = 4096.0 * 128256.0 / 2.0;
  CHECK(unfused.head_forward_s - generic.head_forward_s == Approx(memory_bound_time_s(p.hardware, 26.0 * logits)));
  CHECK(unfused.head_backward_input_s - generic.head_backward_input_s ==
        Approx(memory_bound_time_s(p.hardware, 2.0 * logits)));
  CHECK(unfused.head_backward_weight_s == Approx(generic.head_backward_weight_s));  // the dW GEMM only
}

TEST_CASE("each framework's loss kernel: Megatron-LM unfused, NeMo fused, the others generic") {
  CHECK(framework_knobs(framework_spec(Framework::Megatron)).cross_entropy == CrossEntropyKernel::Unfused);
  CHECK(framework_knobs(framework_spec(Framework::Nemo)).cross_entropy == CrossEntropyKernel::Fused);
  CHECK(framework_knobs(framework_spec(Framework::Torchtitan)).cross_entropy == CrossEntropyKernel::TorchFp32);
  for (Framework f : {Framework::Meshplan, Framework::DeepSpeed, Framework::Fsdp})
    CHECK(framework_knobs(framework_spec(f)).cross_entropy == CrossEntropyKernel::Generic);
  for (auto k : {CrossEntropyKernel::Generic, CrossEntropyKernel::Unfused, CrossEntropyKernel::Fused,
                 CrossEntropyKernel::TorchFp32, CrossEntropyKernel::TeInplace, CrossEntropyKernel::Te,
                 CrossEntropyKernel::FlashXentropy})
    CHECK(parse_cross_entropy(to_string(k)) == k);
  CHECK(parse_cross_entropy("flash_xentropy") == CrossEntropyKernel::FlashXentropy);
  for (Framework f : {Framework::Meshplan, Framework::DeepSpeed, Framework::Fsdp, Framework::Megatron,
                      Framework::Nemo, Framework::Torchtitan})
    CHECK(framework_knobs(framework_spec(f)).train_metric_cross_entropies == 0);
  CHECK(parse_cross_entropy("te") == CrossEntropyKernel::Te);
  CHECK(parse_cross_entropy("te_inplace") == CrossEntropyKernel::TeInplace);
  CHECK_FALSE(parse_cross_entropy("triton").has_value());
}

TEST_CASE("validation files: `cross_entropy` at file level, per run, else the framework's") {
  const std::string head =
      "hardware: a100-80gb-sxm\nframework: megatron\nmodels:\n"
      "  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 256}\nruns:\n";
  const std::string run = "  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1";
  auto set = parse_validation(head + run + "}\n" + run + ", cross_entropy: fused}\n", "t.yaml");
  REQUIRE(set.ok());
  CHECK(run_framework(set.value().runs[0]).cross_entropy == CrossEntropyKernel::Unfused);
  CHECK(run_framework(set.value().runs[1]).cross_entropy == CrossEntropyKernel::Fused);
  auto file_level = parse_validation("cross_entropy: generic\n" + head + run + "}\n", "f.yaml");
  REQUIRE(file_level.ok());
  CHECK(run_framework(file_level.value().runs[0]).cross_entropy == CrossEntropyKernel::Generic);
  auto bad = parse_validation(head + run + ", cross_entropy: triton}\n", "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].cross_entropy");
  // The shipped files that name it: Megatron-Bridge's performance scripts run TE's kernel (TE <= 2.17 in
  // those releases), BLOOM's Megatron-DeepSpeed the unfused one.
  auto moe = load_validation(std::string(MESHPLAN_SOURCE_DIR) + "/validation/megatron-bridge-moe-h100.yaml");
  REQUIRE(moe.ok());
  for (const ValidationRun& r : moe.value().runs) CHECK(run_framework(r).cross_entropy == CrossEntropyKernel::TeInplace);
  auto bloom = load_validation(std::string(MESHPLAN_SOURCE_DIR) + "/validation/bigscience2022-bloom-176b.yaml");
  REQUIRE(bloom.ok());
  for (const ValidationRun& r : bloom.value().runs) CHECK(run_framework(r).cross_entropy == CrossEntropyKernel::Unfused);
  // llm-foundry's tables: flash-attn's loss and Composer's two train metrics on every run.
  for (const char* name : {"a100-40gb", "a100-80gb", "a100-80gb-mb-sweep", "h100", "h100-fp8"}) {
    auto mosaic = load_validation(std::string(MESHPLAN_SOURCE_DIR) + "/validation/mosaicml-llmfoundry-" + name + ".yaml");
    INFO(name);
    REQUIRE(mosaic.ok());
    for (const ValidationRun& r : mosaic.value().runs) {
      CHECK(run_framework(r).cross_entropy == CrossEntropyKernel::FlashXentropy);
      CHECK(run_framework(r).train_metric_cross_entropies == 2);
    }
  }
}

TEST_CASE("validation files: `train_metric_cross_entropies` at file level, per run, never negative") {
  const std::string head =
      "hardware: a100-80gb-sxm\nframework: fsdp\nmodels:\n"
      "  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 256}\nruns:\n";
  const std::string run = "  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1";
  auto set = parse_validation("train_metric_cross_entropies: 2\n" + head + run + "}\n" + run +
                                  ", train_metric_cross_entropies: 0}\n",
                              "t.yaml");
  REQUIRE(set.ok());
  CHECK(run_framework(set.value().runs[0]).train_metric_cross_entropies == 2);
  CHECK(run_framework(set.value().runs[1]).train_metric_cross_entropies == 0);
  auto plain = parse_validation(head + run + "}\n", "p.yaml");
  REQUIRE(plain.ok());
  CHECK(run_framework(plain.value().runs[0]).train_metric_cross_entropies == 0);
  auto bad = parse_validation(head + run + ", train_metric_cross_entropies: -1}\n", "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].train_metric_cross_entropies");
  auto huge = parse_validation(head + run + ", train_metric_cross_entropies: 10000000000}\n", "h.yaml");
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().field == "runs[0].train_metric_cross_entropies");
}
