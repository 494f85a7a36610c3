// Framework-chosen kernels and overlaps (issue 10): attention kernel efficiency by framework,
// TP communication overlapped with its GEMMs (--tp-comm-overlap), the distributed optimizer's
// parameter all-gather under the next forward (--overlap-param-gather); closed forms by hand.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "costmodel/attention.h"
#include "costmodel/compute_time.h"
#include "costmodel/eager_elementwise.h"
#include "costmodel/estimate.h"
#include "costmodel/step.h"
#include "costmodel/tp_overlap.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
HardwareProfile with_kernels() {
  HardwareProfile hw = meshplan_test::a100();
  hw.fused_attention_forward_efficiency = 0.372;  // FlashAttention-2
  hw.fused_attention_backward_efficiency = 0.313;
  hw.cudnn_attention_forward_efficiency = 0.616;  // cuDNN
  hw.cudnn_attention_backward_efficiency = 0.505;
  return hw;
}
}  // namespace

TEST_CASE("the framework's attention kernel picks the profile's measured efficiency") {
  const HardwareProfile hw = with_kernels();
  CHECK(fused_kernel_efficiency(hw, FusedAttentionKernel::FlashAttention2).forward == 0.372);
  CHECK(fused_kernel_efficiency(hw, FusedAttentionKernel::Cudnn).backward == 0.505);
  HardwareProfile no_cudnn = hw;
  no_cudnn.cudnn_attention_forward_efficiency = no_cudnn.cudnn_attention_backward_efficiency = 0.0;
  CHECK(fused_kernel_efficiency(no_cudnn, FusedAttentionKernel::Cudnn).forward == 0.372);  // falls back

  // Llama-3-8B, b 1, s 4096, tp 2: executed causal work W = (33/64) 4 b s^2 h / t; forward W/(peak
  // eff_f), backward 2.5 W/(peak eff_b); both far above the HBM floor at this size.
  const ModelSpec m = meshplan_test::llama3_8b();
  const double peak = 312e12, b = 1, s = 4096;
  const double work = (33.0 / 64.0) * 4.0 * b * s * s * 4096 / 2;
  const AttentionCoreTime fa2 = attention_core_time(hw, peak, m, AttentionKind::Fused, b, s, 2, 2.0);
  const AttentionCoreTime cud =
      attention_core_time(hw, peak, m, AttentionKind::Fused, b, s, 2, 2.0, FusedAttentionKernel::Cudnn);
  CHECK(fa2.forward_s == Approx(work / (peak * 0.372)));
  CHECK(fa2.backward_s == Approx(2.5 * work / (peak * 0.313)));
  CHECK(cud.forward_s == Approx(work / (peak * 0.616)));
  CHECK(cud.backward_s == Approx(2.5 * work / (peak * 0.505)));

  CHECK(framework_knobs(framework_spec(Framework::Megatron)).fused_kernel == FusedAttentionKernel::Cudnn);
  CHECK(framework_knobs(framework_spec(Framework::Nemo)).fused_kernel == FusedAttentionKernel::Cudnn);
  CHECK(framework_knobs(framework_spec(Framework::Torchtitan)).fused_kernel ==
        FusedAttentionKernel::FlashAttention2);
  CHECK(framework_knobs(framework_spec(Framework::Fsdp)).fused_kernel == FusedAttentionKernel::FlashAttention2);
}

TEST_CASE("Megatron --tp-comm-overlap: each collective is exposed only beyond the GEMM it is paired with") {
  LayerGemmTimes g;
  g.qkv_s = 3e-3, g.out_s = 1e-3, g.up_s = 4e-3, g.down_s = 4e-3;
  const double ag = 2e-3, rs = 2.5e-3;
  const LayerComm c = overlapped_tp_comm(g, ag, rs);
  // forward: (2-3)+ + (2.5-1)+ + (2-4)+ + (2.5-4)+ = 1.5 ms
  CHECK(c.forward_s == Approx(1.5e-3));
  // backward: ag-out 1 + ag-down 0 + rs-qkv 0 + rs-up 0 + (4 - 7)+ 0 = 1 ms
  CHECK(c.backward_s == Approx(1e-3));
  // all collectives: 2 x (2 ag + 2 rs) + 2 ag = 22 ms; hidden = 22 - 2.5
  CHECK(c.hidden_s == Approx(22e-3 - 2.5e-3));
  CHECK(c.collective_s == Approx(4.5e-3));
  CHECK(c.recompute_s == 0.0);  // the caller's activation-checkpoint policy sets it
  // Collectives shorter than every GEMM are hidden entirely.
  const LayerComm h = overlapped_tp_comm(g, 0.5e-3, 0.5e-3);
  CHECK(h.forward_s == 0.0);
  CHECK(h.backward_s == 0.0);
}

TEST_CASE("Megatron --tp-comm-overlap lowers the exposed TP time of a real layer, and only with SP") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(8192, 8, 64), 8, 8, 4096);
  ParallelConfig c;
  c.tp = 8;
  c.sequence_parallel = true;
  const LayerCompute lc = layer_compute(p, c);
  const LayerComm plain = layer_tp_comm(p, c, lc);
  p.job.knobs.tp_comm_overlap = true;
  const LayerComm over = layer_tp_comm(p, c, lc);
  CHECK(over.forward_s + over.backward_s < plain.forward_s + plain.backward_s);
  CHECK(over.recompute_s == 0.0);  // no recompute
  // Full recompute reruns the overlapped forward collectives of every layer, every-2-layers of half.
  c.recompute = Recompute::Full;
  CHECK(layer_tp_comm(p, c, lc).recompute_s == over.forward_s);
  p.job.ac_policy = AcPolicy{AcPolicyKind::EveryNLayers, 2};
  CHECK(layer_tp_comm(p, c, lc).recompute_s == 0.5 * over.forward_s);
  p.job.ac_policy = AcPolicy{};
  c.recompute = Recompute::None;
  const LayerGemmTimes g = layer_gemm_times(p, c);
  CHECK(g.qkv_s == Approx(gemm_time_s(p.hardware, 312e12, 2.0 * 4096 * 8192 * 3 * 8192 / 8)));
  c.sequence_parallel = false;  // without SP the all-reduce path is unchanged
  p.job.knobs.tp_comm_overlap = false;
  const LayerComm ar_plain = layer_tp_comm(p, c, lc);
  p.job.knobs.tp_comm_overlap = true;
  CHECK(layer_tp_comm(p, c, lc).forward_s == ar_plain.forward_s);
}

TEST_CASE("Megatron --overlap-param-gather: ZeRO-1's weight all-gather hides under the first forward") {
  Problem p = meshplan_test::problem(meshplan_test::gpt(4096, 8, 32), 64, 64, 2048);
  ParallelConfig c;
  c.dp = 64;
  c.zero_stage = 1;
  c.num_micro_batches = 1;
  StageTimes st;
  st.forward_s = 0.01;
  st.backward_s = 1e3;  // hides the reduce-scatter entirely
  const DpComm plain = dp_comm(p, c, 0, st);
  p.job.knobs.param_gather_overlap = true;
  const DpComm over = dp_comm(p, c, 0, st);
  CHECK(over.total_s == plain.total_s);
  // plain exposes the whole gather; overlapped exposes max(0, gather - forward).
  const double gather = plain.exposed_s;
  CHECK(gather > 0.01);
  CHECK(over.exposed_s == Approx(gather - 0.01));
  st.forward_s = 1e3;
  CHECK(dp_comm(p, c, 0, st).exposed_s == 0.0);
}

TEST_CASE("llm-foundry's unpad/pad around FlashAttention: bytes and time, by hand") {
  // MHA, h = 2048, b 14, s 2048, tp 1, bf16: T = 28,672; forward 9 e T h = 1,056,964,608 bytes,
  // backward 11 e T h = 1,291,845,632 bytes.
  const ModelSpec mha = meshplan_test::gpt(2048, 24, 16);
  const EagerBytes e = unpad_attention_bytes(mha, 14, 2048, 1, 2.0);
  CHECK(e.forward == 9.0 * 2 * 28672 * 2048);
  CHECK(e.forward == 1056964608.0);
  CHECK(e.backward == 1291845632.0);
  // GQA (Llama-3-8B: h 4096, kv 1024), tp 2: forward (2 e T (h + 2kv) + 3 e T h) / t.
  const EagerBytes g = unpad_attention_bytes(meshplan_test::llama3_8b(), 1, 4096, 2, 2.0);
  CHECK(g.forward == (2.0 * 2 * 4096 * (4096 + 2048) + 3.0 * 2 * 4096 * 4096) / 2);
  CHECK(g.backward == (3.0 * 2 * 4096 * (4096 + 2048) + 2.0 * 2 * 4096 * 4096) / 2);
  // The knob adds exactly those bytes at HBM speed to the layer's forward and backward.
  Problem p = meshplan_test::problem(mha, 8, 112, 2048);
  p.job.knobs.attention = AttentionKind::Fused;
  ParallelConfig c;
  c.micro_batch_size = 14;
  const LayerCompute plain = layer_compute(p, c);
  p.job.knobs.unpad_attention = true;
  const LayerCompute unpadded = layer_compute(p, c);
  CHECK(unpadded.forward_s - plain.forward_s == Approx(memory_bound_time_s(p.hardware, e.forward)));
  CHECK(unpadded.backward_input_s - plain.backward_input_s == Approx(memory_bound_time_s(p.hardware, e.backward)));
  CHECK(unpadded.backward_weight_s == plain.backward_weight_s);
}
