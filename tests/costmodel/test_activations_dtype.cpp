// Activation bytes follow the job's dtype (fp32 doubles every non-mask term) and drop the 1-byte
// dropout masks for models trained without dropout.
#include <catch2/catch.hpp>

#include "costmodel/activations.h"
#include "costmodel/estimate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("activation element bytes by dtype") {
  CHECK(activation_element_bytes("fp32") == 4.0);
  CHECK(activation_element_bytes("tf32") == 4.0);
  CHECK(activation_element_bytes("bf16") == 2.0);
  CHECK(activation_element_bytes("fp16") == 2.0);
  CHECK(activation_element_bytes("fp8") == 2.0);  // stashed activations stay 16-bit
}

TEST_CASE("fp32 without dropout doubles the bytes exactly, with dropout the masks stay 1 byte") {
  ModelSpec m = meshplan_test::llama2_7b();
  const double s = 4096, b = 2, h = 4096, a = 32;
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    for (int t : {1, 4})
      for (bool sp : {false, true}) {
        INFO(to_string(r) << " t " << t << " sp " << sp);
        m.dropout = false;
        CHECK(layer_activation_bytes(m, b, s, t, sp, r, 4.0) == Approx(2 * layer_activation_bytes(m, b, s, t, sp, r, 2.0)));
        CHECK(recompute_working_bytes(m, b, s, t, sp, r, 4.0) ==
              Approx(2 * recompute_working_bytes(m, b, s, t, sp, r, 2.0)));
        // With dropout: fp32 - bf16 = the bf16 bytes minus the masks (which do not grow).
        m.dropout = true;
        const double masks_sp = (r == Recompute::Full) ? 0.0
                                : (2 * s * b * h / (sp ? t : 1) + (r == Recompute::None ? a * s * s * b / t : 0.0));
        CHECK(layer_activation_bytes(m, b, s, t, sp, r, 4.0) ==
              Approx(2 * layer_activation_bytes(m, b, s, t, sp, r, 2.0) - masks_sp));
      }
  m.dropout = false;
  CHECK(head_activation_bytes(m, b, s, 1, false, 4.0) == Approx(8 * s * b * h + 4 * s * b * 32000));
}

TEST_CASE("no dropout removes exactly the mask terms: 2 sbh hidden masks, the a s^2 b attention mask and dropout output") {
  ModelSpec with = meshplan_test::gpt(12288, 96, 96);
  ModelSpec without = with;
  without.dropout = false;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
  // Korthikanti Table 2 forms minus the masks (and the attention dropout output): sbh(8 + 24/t + 2as/(ht)).
  CHECK(layer_activation_bytes(with, b, s, 8, false, Recompute::None) -
            layer_activation_bytes(without, b, s, 8, false, Recompute::None) ==
        Approx(2 * sbh + 3 * a * s * s * b / t));  // masks; the dropout output is the softmax output
  CHECK(layer_activation_bytes(without, b, s, 8, false, Recompute::None) ==
        Approx(sbh * (8 + 24 / t + 2 * a * s / (h * t))));
  CHECK(layer_activation_bytes(without, b, s, 8, true, Recompute::Selective) == Approx(sbh * 32 / t));
  CHECK(layer_activation_bytes(without, b, s, 8, true, Recompute::Full) ==
        layer_activation_bytes(with, b, s, 8, true, Recompute::Full));  // layer input only
  CHECK(recompute_working_bytes(with, b, s, 8, true, Recompute::Selective) -
            recompute_working_bytes(without, b, s, 8, true, Recompute::Selective) ==
        Approx(3 * a * s * s * b / t));
  CHECK(embedding_activation_bytes(with, b, s, 8, false) == Approx(sbh));
  CHECK(embedding_activation_bytes(without, b, s, 8, false) == 0.0);
  CHECK(head_activation_bytes(with, b, s, 8, false) == head_activation_bytes(without, b, s, 8, false));
}

TEST_CASE("estimate_memory uses the job's dtype for activations, not for static state") {
  ModelSpec m = meshplan_test::llama2_7b();
  m.dropout = false;
  Problem p = meshplan_test::problem(m, 8, 64, 4096);
  ParallelConfig c;
  c.tp = 8; c.pp = 1; c.dp = 1; c.micro_batch_size = 1; c.num_micro_batches = 64;
  c.recompute = Recompute::None;
  p.job.dtype = "bf16";
  const MemoryBreakdown half = estimate_memory(p, c);
  p.job.dtype = "fp32";
  const MemoryBreakdown full = estimate_memory(p, c);
  CHECK(full.weights_bytes == half.weights_bytes);
  CHECK(full.optimizer_bytes == half.optimizer_bytes);
  // Everything but the fp32 logits (4 s b V / t bytes) doubles.
  const double logits = 4.0 * 4096 * 1 * 32000 / 8;
  CHECK(full.activations_bytes - logits == Approx(2 * (half.activations_bytes - logits)));
}
