// meshplan's own executor's element-wise traffic (`run`'s prediction): the byte count of its fp32
// kernels by hand, the bf16 copies around cuDNN's attention, and the change it makes to a layer.
#include <catch2/catch.hpp>

#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/executor_ops.h"
#include "costmodel/executor_stash.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ModelSpec tinyllama() {  // examples/models/tinyllama-1.1b.yaml
  ModelSpec m = meshplan_test::llama3_8b();
  m.hidden_size = 2048;
  m.num_layers = 22;
  m.num_heads = 32;
  m.num_kv_heads = 4;
  m.intermediate_size = 5632;
  m.vocab_size = 32000;
  return m;
}
}  // namespace

TEST_CASE("executor ops: the fp32 kernels and the bf16 copies around cuDNN, per token and layer") {
  const ModelSpec m = tinyllama();  // C 2048, Q 2048, K 256, F 5632
  const double T = 8.0 * 2048;
  const EagerBytes with = executor_op_bytes(m, 8, 2048, 1, false, true);
  CHECK(with.forward == T * 195584.0);   // 40C + 20Q + 20K + 12F
  CHECK(with.backward == T * 251904.0);  // 32C + 32Q + 32K + 20F
  const EagerBytes without = executor_op_bytes(m, 8, 2048, 1, false, false);
  CHECK(with.forward - without.forward == T * 12.0 * (2048 + 256));
  CHECK(with.backward - without.backward == T * 24.0 * (2048 + 256));
  // TP splits the head and MLP widths; SP the hidden rows too.
  const EagerBytes tp2 = executor_op_bytes(m, 8, 2048, 2, true, true);
  CHECK(tp2.forward == Approx(with.forward / 2));
}

TEST_CASE("executor ops replace the fused framework's element-wise count in a layer's time") {
  Problem p = meshplan_test::problem(tinyllama(), 1, 8, 2048);
  ParallelConfig c;
  c.micro_batch_size = 8;
  c.num_micro_batches = 1;
  const LayerCompute fused = layer_compute(p, c);
  p.job.knobs.executor_ops = FrameworkKnobs::ExecutorOps::Fp32Bf16Attention;
  const LayerCompute exec = layer_compute(p, c);
  const double T = 8.0 * 2048;
  const double charged = (22.0 * 2048 + 6.0 * 5632) * T;  // compute_time.cpp's fused count, forward
  const EagerBytes x = executor_op_bytes(p.model, 8, 2048, 1, false, true);
  const HardwareProfile& hw = p.hardware;
  CHECK(exec.forward_s - fused.forward_s ==
        Approx(memory_bound_time_s(hw, x.forward) - memory_bound_time_s(hw, charged)).epsilon(1e-9));
  CHECK(exec.backward_input_s - fused.backward_input_s ==
        Approx(memory_bound_time_s(hw, x.backward) - 2.0 * memory_bound_time_s(hw, charged)).epsilon(1e-9));
  CHECK(exec.backward_weight_s == fused.backward_weight_s);  // GEMMs untouched
}

TEST_CASE("executor ops: bf16-copy GEMMs copy every operand, counted call by call") {
  const ModelSpec m = tinyllama();  // C 2048, Q 2048, K 256, F 5632
  const double T = 8.0 * 2048;
  const EagerBytes g = executor_gemm_copy_bytes(m, 8, 2048, 1);
  // Weights: wq, wk, wv (C x (Q + 2K)), wo (C x Q), gate, up, down (3 C x F), once each way.
  const double weights = 2048.0 * 2560 + 2048.0 * 2048 + 3.0 * 2048 * 5632;
  CHECK(weights == 44040192.0);
  // Each distinct operand of a reuse scope once: forward 2C + Q + F, backward 4C + 2Q + 2K + 3F
  // elements per token, 6 bytes each.
  CHECK(g.forward == 6.0 * (T * 11776.0 + weights));
  CHECK(g.backward == 6.0 * (T * 29696.0 + weights));
  // TP splits Q, K, F and the weights, never the full hidden row the column-parallel GEMMs read.
  const EagerBytes tp2 = executor_gemm_copy_bytes(m, 8, 2048, 2);
  CHECK(tp2.forward == 6.0 * (T * (2.0 * 2048 + 1024 + 2816) + weights / 2));

  // The LM head: one chunk, and 4 chunks (the hidden state copied per chunk, the logits recomputed).
  const double V = 32000, W = V * 2048;
  const EagerBytes one = executor_head_copy_bytes(m, 8, 2048, 1, 1);
  CHECK(one.forward == 6.0 * (T * 2048 + W));
  CHECK(one.backward == 6.0 * (T * (2048 + 2 * V) + W));
  const EagerBytes four = executor_head_copy_bytes(m, 8, 2048, 1, 4);
  CHECK(four.forward == 6.0 * (T * 4 * 2048 + W));
  CHECK(four.backward == 6.0 * (T * (8 * 2048 + 2 * V) + 2 * W));
}

TEST_CASE("executor ops: the bf16-copy knob adds the operand copies to a layer and to the head") {
  Problem p = meshplan_test::problem(tinyllama(), 1, 8, 2048);
  ParallelConfig c;
  c.micro_batch_size = 8;
  c.num_micro_batches = 1;
  p.job.knobs.executor_ops = FrameworkKnobs::ExecutorOps::Fp32Bf16Attention;
  const LayerCompute plain = layer_compute(p, c);
  const EndsCompute plain_ends = ends_compute(p, c);
  p.job.knobs.executor_gemm_copies = true;
  const LayerCompute copies = layer_compute(p, c);
  const EndsCompute copies_ends = ends_compute(p, c);
  const HardwareProfile& hw = p.hardware;
  const EagerBytes x = executor_op_bytes(p.model, 8, 2048, 1, false, true);
  const EagerBytes g = executor_gemm_copy_bytes(p.model, 8, 2048, 1);
  CHECK(copies.forward_s - plain.forward_s ==
        Approx(memory_bound_time_s(hw, x.forward + g.forward) - memory_bound_time_s(hw, x.forward)).epsilon(1e-9));
  CHECK(copies.backward_input_s - plain.backward_input_s ==
        Approx(memory_bound_time_s(hw, x.backward + g.backward) - memory_bound_time_s(hw, x.backward)).epsilon(1e-9));
  CHECK(copies_ends.head_forward_s > plain_ends.head_forward_s);
  CHECK(copies_ends.head_backward_input_s > plain_ends.head_backward_input_s);
  CHECK(copies_ends.head_backward_weight_s == plain_ends.head_backward_weight_s);
}

TEST_CASE("executor ops: the bf16 GEMM-input stash knob saves its bytes per layer and its backward copies") {
  Problem p = meshplan_test::problem(tinyllama(), 1, 8, 2048);
  p.job.dtype = "fp32";  // the executor's fp32 activations
  ParallelConfig c;
  c.micro_batch_size = 8;
  c.num_micro_batches = 1;
  p.job.knobs.executor_ops = FrameworkKnobs::ExecutorOps::Fp32Bf16Attention;
  p.job.knobs.executor_gemm_copies = true;
  const double layers = static_cast<double>(p.model.num_layers);
  const double saving = executor_bf16_stash_saving_bytes(p.model, 8, 2048, 1, false, 4.0);
  CHECK(saving == 2.0 * 8 * 2048 * (2.0 * 2048 + 5632));  // h1, h2, act: 318.8 MB per layer
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    INFO(to_string(r));
    c.recompute = r;
    p.job.knobs.executor_bf16_gemm_stash = false;
    const StepEstimate wide = estimate_step(p, c);
    const LayerCompute wide_layer = layer_compute(p, c);
    p.job.knobs.executor_bf16_gemm_stash = true;
    const StepEstimate narrow = estimate_step(p, c);
    const LayerCompute narrow_layer = layer_compute(p, c);
    // One micro-batch in flight: every layer's stash, or (full) the one layer being recomputed.
    const double expected = r == Recompute::Full ? saving : layers * saving;
    CHECK(wide.memory.activations_bytes - narrow.memory.activations_bytes == Approx(expected).epsilon(1e-9));
    CHECK(narrow_layer.forward_s < wide_layer.forward_s);  // the norms and SwiGLU write bf16 directly
    CHECK(narrow_layer.backward_input_s < wide_layer.backward_input_s);
  }
  // The copies the backward no longer makes: h1, h2 (C each) and act (F) per token; with SP over tp 2
  // only act's, and the shards of h1 and h2 are narrowed and widened.
  const EagerBytes g = executor_gemm_copy_bytes(p.model, 8, 2048, 1);
  const EagerBytes s = executor_gemm_copy_bytes(p.model, 8, 2048, 1, true, false);
  CHECK(g.forward == s.forward);
  CHECK(g.backward - s.backward == Approx(6.0 * 8 * 2048 * (2.0 * 2048 + 5632)));
  const EagerBytes g2 = executor_gemm_copy_bytes(p.model, 8, 2048, 2, false, true);
  const EagerBytes s2 = executor_gemm_copy_bytes(p.model, 8, 2048, 2, true, true);
  CHECK(s2.forward - g2.forward == Approx(6.0 * 8 * 2048 * 2048));
  CHECK(g2.backward - s2.backward == Approx(6.0 * 8 * 2048 * (5632 / 2.0 - 2048)));
}

TEST_CASE("executor ops: the bf16 attention stash knob saves q, k, v and out and their copies around cuDNN") {
  Problem p = meshplan_test::problem(tinyllama(), 1, 8, 2048);
  p.job.dtype = "fp32";
  ParallelConfig c;
  c.micro_batch_size = 8;
  c.num_micro_batches = 1;
  p.job.knobs.executor_ops = FrameworkKnobs::ExecutorOps::Fp32Bf16Attention;
  p.job.knobs.executor_gemm_copies = true;
  const double T = 8.0 * 2048, Q = 2048, K = 256;  // 32 heads and 4 kv heads of 64
  const double saving = executor_bf16_attention_saving_bytes(p.model, 8, 2048, 1, 4.0);
  CHECK(saving == 2.0 * T * (2 * Q + 2 * K));  // 151.0 MB per layer
  const StepEstimate wide = estimate_step(p, c);
  const LayerCompute wide_layer = layer_compute(p, c);
  p.job.knobs.executor_bf16_attention_stash = true;
  const StepEstimate narrow = estimate_step(p, c);
  const LayerCompute narrow_layer = layer_compute(p, c);
  CHECK(wide.memory.activations_bytes - narrow.memory.activations_bytes ==
        Approx(p.model.num_layers * saving).epsilon(1e-9));
  CHECK(narrow_layer.forward_s < wide_layer.forward_s);
  CHECK(narrow_layer.backward_input_s < wide_layer.backward_input_s);
  // Element-wise copies around cuDNN: o out no longer (forward 6Q), q, k, v, o in no longer (backward
  // 12Q + 12K); wo's GEMMs read the output as it is (Q each way).
  const EagerBytes x = executor_op_bytes(p.model, 8, 2048, 1, false, true);
  const EagerBytes y = executor_op_bytes(p.model, 8, 2048, 1, false, true, true);
  CHECK(x.forward - y.forward == Approx(T * 6 * Q));
  CHECK(x.backward - y.backward == Approx(T * (12 * Q + 12 * K)));
  const EagerBytes g = executor_gemm_copy_bytes(p.model, 8, 2048, 1, false, false, true);
  const EagerBytes h = executor_gemm_copy_bytes(p.model, 8, 2048, 1);
  CHECK(h.forward - g.forward == Approx(6.0 * T * Q));
  CHECK(h.backward - g.backward == Approx(6.0 * T * Q));
  // The kernels that write the stash in bf16 directly: 8 bytes fewer per element of h1, h2, act (no
  // SP) and of q, k, forward only.
  const EagerBytes f = executor_fused_bf16_saving_bytes(p.model, 8, 2048, 1, false, true, true);
  CHECK(f.forward == 8.0 * T * (2 * 2048 + 5632 + Q + K));
  CHECK(f.backward == 0.0);
  const EagerBytes f_sp = executor_fused_bf16_saving_bytes(p.model, 8, 2048, 2, true, true, false);
  CHECK(f_sp.forward == 8.0 * T * 5632 / 2);
  // Under context parallelism the model keeps them in fp32 (the ring attention's own kernels).
  c.cp = 2;
  p.job.knobs.executor_bf16_attention_stash = false;
  const StepEstimate cp_wide = estimate_step(p, c);
  p.job.knobs.executor_bf16_attention_stash = true;
  CHECK(estimate_step(p, c).memory.activations_bytes == cp_wide.memory.activations_bytes);
}
