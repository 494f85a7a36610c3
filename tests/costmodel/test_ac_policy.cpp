// torchtitan's activation-checkpoint policies (costmodel/ac_policy.h): stash, working set, recomputed
// time and FLOPs worked by hand for a small Llama-style block; Megatron policy unchanged bit for bit.
#include <catch2/catch.hpp>

#include "core/validation_runs.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "costmodel/validate.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// h 64, 4 heads of 16, 2 KV heads (kv 32), SwiGLU f 128, 4 layers, no dropout.
ModelSpec tiny() {
  ModelSpec m;
  m.name = "tiny";
  m.hidden_size = 64; m.num_layers = 4; m.num_heads = 4; m.num_kv_heads = 2;
  m.intermediate_size = 128; m.vocab_size = 256; m.max_position_embeddings = 16;
  m.mlp = MlpKind::Gated; m.dropout = false;
  return m;
}

Problem tiny_problem(AcPolicy policy) {
  Problem p = meshplan_test::problem(tiny(), 8, 16, 16);
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.ac_policy = policy;
  return p;
}

ParallelConfig tiny_config(Recompute r, int tp, bool sp) {
  ParallelConfig c;
  c.tp = tp; c.dp = 8 / tp; c.micro_batch_size = 2; c.num_micro_batches = 16 / (2 * c.dp);
  c.recompute = r; c.sequence_parallel = sp;
  return c;
}

AcPolicy op() { return *parse_ac_policy("torchtitan-op"); }
AcPolicy every(int n) { return *parse_ac_policy("every-" + std::to_string(n) + "-layers"); }
}  // namespace

TEST_CASE("ac policy names parse and print, bad ones are refused") {
  CHECK(parse_ac_policy("")->kind == AcPolicyKind::Megatron);
  CHECK(to_string(*parse_ac_policy("megatron")) == "megatron");
  CHECK(to_string(op()) == "torchtitan-op");
  CHECK(every(2).every_n_layers == 2);
  CHECK(to_string(every(12)) == "every-12-layers");
  for (const char* bad : {"every-0-layers", "every--layers", "every-2-layer", "every-02-layers", "every-x-layers",
                          "torchtitan", "every-2000000-layers"}) {
    INFO(bad);
    CHECK(!parse_ac_policy(bad));
  }
}

TEST_CASE("layer mix: which share of the layers keeps what") {
  CHECK(layer_mix(AcPolicy{}, Recompute::Selective).selective == 1.0);
  CHECK(layer_mix(op(), Recompute::Selective).op == 1.0);
  CHECK(layer_mix(op(), Recompute::Full).full == 1.0);       // op refines selective only
  CHECK(layer_mix(every(2), Recompute::Selective).selective == 1.0);  // every-N refines full only
  const LayerMix w = layer_mix(every(4), Recompute::Full);
  CHECK(w.full == 0.25);
  CHECK(w.none == 0.75);
  CHECK(layer_mix(every(1), Recompute::Full).full == 1.0);
}

TEST_CASE("recomputed layer share: every-2-layers reruns half the layers' forward, full all, the rest none") {
  CHECK(recomputed_layer_share(every(2), Recompute::Full) == 0.5);
  CHECK(recomputed_layer_share(every(4), Recompute::Full) == 0.25);
  CHECK(recomputed_layer_share(every(1), Recompute::Full) == 1.0);
  CHECK(recomputed_layer_share(AcPolicy{}, Recompute::Full) == 1.0);
  CHECK(recomputed_layer_share(op(), Recompute::Full) == 1.0);
  for (const AcPolicy& a : {AcPolicy{}, op(), every(2)}) {
    CHECK(recomputed_layer_share(a, Recompute::None) == 0.0);
    CHECK(recomputed_layer_share(a, Recompute::Selective) == 0.0);  // op SAC reruns ops, not whole layers
  }
}

TEST_CASE("op-level SAC stash of the tiny block, by hand (b 2, s 16: T 32 tokens, 2-byte elements)") {
  const ModelSpec m = tiny();
  // t = 1: input 2*32*64 = 4096; Q + V 2*32*(64+32) = 6144; SDPA output 4096 + LSE 4*4*32 = 512;
  // w1 2*32*128 = 8192; w2 output 2*32*64 = 4096.
  CHECK(op_sac_stash_bytes(m, 2, 16, 1, false, 2, AttentionKind::Fused) == 4096 + 6144 + 4608 + 8192 + 4096);
  // t = 2 with SP: input 2048, Q + V 3072, SDPA 2048 + 256, w1 4096, w2 partial sums 4096 (whole
  // width), two reduce-scatter outputs 2 * 2*32*64/2 = 4096.
  CHECK(op_sac_stash_bytes(m, 2, 16, 2, true, 2, AttentionKind::Fused) == 2048 + 3072 + 2304 + 4096 + 4096 + 4096);
  // t = 2 without SP: the input is replicated, no reduce-scatter (all-reduces are recomputed).
  CHECK(op_sac_stash_bytes(m, 2, 16, 2, false, 2, AttentionKind::Fused) == 4096 + 3072 + 2304 + 4096 + 4096);
  // A plain MLP's saved third matmul is `up`; its down-projection (mm 6) is recomputed, not stored.
  ModelSpec plain = m;
  plain.mlp = MlpKind::Plain;
  CHECK(op_sac_stash_bytes(plain, 2, 16, 1, false, 2, AttentionKind::Fused) == 4096 + 6144 + 4608 + 8192);
}

TEST_CASE("policy stash and working set per layer (memory terms)") {
  const ParallelConfig sel = tiny_config(Recompute::Selective, 1, false);
  const ParallelConfig full = tiny_config(Recompute::Full, 1, false);
  // Korthikanti, fused, t = 1, no dropout: R 4*2*32*64 = 16384, S 2*32*(128+64) + 3*2*32*128 = 36864,
  // A = LSE 512: none 53760; full keeps the input 4096.
  const ModelSpec m = tiny();
  REQUIRE(layer_activation_bytes(m, 2, 16, 1, false, Recompute::None, 2, AttentionKind::Fused) == 53760);
  CHECK(policy_layer_activation_bytes(tiny_problem(op()), sel) == 27136);
  CHECK(policy_working_bytes(tiny_problem(op()), sel) == 53760 - 27136);  // what it recomputes
  // every-2-layers: half the layers keep 4096, half 53760; the checkpointed one reruns a whole layer.
  CHECK(policy_layer_activation_bytes(tiny_problem(every(2)), full) == 0.5 * 4096 + 0.5 * 53760);
  CHECK(policy_working_bytes(tiny_problem(every(2)), full) == 53760);
  CHECK(policy_layer_activation_bytes(tiny_problem(every(4)), full) == 0.25 * 4096 + 0.75 * 53760);
  // The stage's activations: 1F1B on one stage holds one micro-batch of 4 layers, plus the working set,
  // plus the head (2e s b h + 4 s b V), as costmodel/memory.cpp adds them.
  const double head = head_activation_bytes(m, 2, 16, 1, false, 2);
  CHECK(estimate_memory(tiny_problem(op()), sel).activations_bytes == Approx(4 * 27136.0 + 26624 + head));
  CHECK(stage_memory(tiny_problem(op()), sel, 0).activations_bytes ==
        Approx(estimate_memory(tiny_problem(op()), sel).activations_bytes));
  CHECK(estimate_memory(tiny_problem(every(2)), full).activations_bytes ==
        Approx(4 * 28928.0 + 53760 + head));
}

TEST_CASE("megatron policy: stash, working set, time and FLOPs are the Recompute terms bit for bit") {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    for (int tp : {1, 2}) {
      const ParallelConfig c = tiny_config(r, tp, tp > 1);
      const Problem p = tiny_problem(AcPolicy{});
      INFO(to_string(r) << " tp " << tp);
      CHECK(policy_layer_activation_bytes(p, c) ==
            layer_activation_bytes(p.model, 2, 16, tp, tp > 1, r, 2, AttentionKind::Fused));
      CHECK(policy_working_bytes(p, c) ==
            recompute_working_bytes(p.model, 2, 16, tp, tp > 1, r, 2, AttentionKind::Fused));
      const StepFlops a = policy_step_flops(p, r, 16, 16), b = step_flops(p.model, 16, 16, r, AttentionKind::Fused);
      CHECK(a.hardware == b.hardware);
      CHECK(a.model == b.model);
    }
  }
}

TEST_CASE("recomputed time: op SAC reruns mm 2, 4, 6 and the element-wise work, every-N 1/N of a forward") {
  const ModelSpec m = tiny();
  // K projection 2*32*64*32, out-projection 2*32*64*64, w3 2*32*64*128.
  const OpSacGemmFlops g = op_sac_recompute_gemm_flops(m, 2, 16);
  CHECK(g.k_proj == 131072);
  CHECK(g.out_proj == 262144);
  CHECK(g.mlp == 524288);
  Problem p = tiny_problem(op());
  p.hardware.gemm_efficiency.clear();  // efficiency 1: a GEMM takes flops / peak
  const LayerForwardParts f{10.0, 3.0, 0.5, 1e12};
  CHECK(policy_recompute_s(p, tiny_config(Recompute::Selective, 1, false), f) == Approx(917504e-12 + 0.5));
  CHECK(policy_recompute_s(p, tiny_config(Recompute::Selective, 2, true), f) == Approx(458752e-12 + 0.5));
  CHECK(policy_recompute_s(p, tiny_config(Recompute::None, 1, false), f) == 0.0);
  CHECK(policy_recompute_s(p, tiny_config(Recompute::Full, 1, false), f) == 10.0);
  CHECK(policy_recompute_s(tiny_problem(every(2)), tiny_config(Recompute::Full, 1, false), f) == 5.0);
  CHECK(policy_recompute_s(tiny_problem(AcPolicy{}), tiny_config(Recompute::Selective, 1, false), f) == 3.0);
  // TP collectives: op reruns the 2 all-gathers (SP) or the out-projection's all-reduce.
  CHECK(policy_tp_recompute_s(p, tiny_config(Recompute::Selective, 2, true), 7.0, 2.0) == 4.0);
  CHECK(policy_tp_recompute_s(p, tiny_config(Recompute::Selective, 2, false), 7.0, 2.0) == 2.0);
  CHECK(policy_tp_recompute_s(tiny_problem(every(2)), tiny_config(Recompute::Full, 2, true), 7.0, 2.0) == 3.5);
  CHECK(policy_tp_recompute_s(tiny_problem(AcPolicy{}), tiny_config(Recompute::Full, 2, true), 7.0, 2.0) == 7.0);
}

TEST_CASE("layer_compute under op SAC: the 3 GEMMs through the profile's curve plus forward element-wise") {
  Problem p = tiny_problem(op());
  const ParallelConfig c = tiny_config(Recompute::Selective, 2, true);
  const HardwareProfile& hw = p.hardware;
  const double peak = hw.peak_flops_for("bf16"), T = 32, h = 64, f = 128, t = 2;
  // Element-wise forward bytes (compute_time.cpp): 22 T h / t (SP) + 6 T f / t (SwiGLU).
  const double ew = memory_bound_time_s(hw, 22 * T * h / t + 6 * T * f / t);
  const double want = gemm_time_s(hw, peak, 131072 / t) + gemm_time_s(hw, peak, 262144 / t) +
                      gemm_time_s(hw, peak, 524288 / t) + ew;
  CHECK(layer_compute(p, c).recompute_s == Approx(want));
  // every-2-layers: half of a full forward.
  Problem q = tiny_problem(every(2));
  const ParallelConfig cf = tiny_config(Recompute::Full, 2, true);
  CHECK(layer_compute(q, cf).recompute_s == Approx(0.5 * layer_compute(q, cf).forward_s));
  CHECK(layer_tp_comm(q, cf, layer_compute(q, cf)).recompute_s ==
        Approx(0.5 * layer_tp_comm(q, cf, layer_compute(q, cf)).forward_s));
}

TEST_CASE("step FLOPs: op SAC adds L x the three recomputed GEMMs to the hardware FLOPs") {
  const Problem p = tiny_problem(op());
  const StepFlops none = step_flops(p.model, 16, 16, Recompute::None, AttentionKind::Fused);
  const StepFlops f = policy_step_flops(p, Recompute::Selective, 16, 16);
  CHECK(f.model == none.model);
  // 16 sequences of 16 tokens: 256 tokens, 8 x the 2-sequence figures above.
  CHECK(f.hardware - none.hardware == Approx(4 * 8 * 917504.0));
  const StepFlops e = policy_step_flops(tiny_problem(every(2)), Recompute::Full, 16, 16);
  const StepFlops full = step_flops(p.model, 16, 16, Recompute::Full, AttentionKind::Fused);
  CHECK(e.hardware - none.hardware == Approx(0.5 * (full.hardware - none.hardware)));
}

TEST_CASE("op SAC is refused for MoE/MLA blocks and materialized attention, every-N is not") {
  Problem p = tiny_problem(op());
  const ParallelConfig c = tiny_config(Recompute::Selective, 1, false);
  CHECK(validate_config(p, c, "test").empty());
  p.job.knobs.attention = AttentionKind::Materialized;
  const ErrorList e = validate_config(p, c, "test");
  REQUIRE(e.size() == 1);
  CHECK(e[0].field == "--ac-policy");
  CHECK(validate_config(p, tiny_config(Recompute::Full, 1, false), "test").empty());  // policy inert there
  CHECK(validate_config(tiny_problem(every(2)), tiny_config(Recompute::Full, 1, false), "test").empty());
}

TEST_CASE("validation runs with ac_policy torchtitan-op and every-2-layers are predicted, not skipped") {
  const std::string text = R"(
source: test
hardware: a100-80gb-sxm
seq_len: 2048
framework: torchtitan
models:
  m: {model_type: llama, hidden_size: 2048, num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 4, intermediate_size: 5632, vocab_size: 32000, max_position_embeddings: 2048}
runs:
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 16, micro_batch: 2, recompute: selective, ac_policy: torchtitan-op, iteration_s: 1}
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 16, micro_batch: 2, recompute: full, ac_policy: every-2-layers, iteration_s: 1}
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 16, micro_batch: 2, recompute: selective, iteration_s: 1}
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 16, micro_batch: 2, recompute: full, iteration_s: 1}
  - {model: m, gpus: 8, dp: 8, zero: 3, global_batch: 16, micro_batch: 2, recompute: none, iteration_s: 1}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  const ValidationSet& v = set.value();
  CHECK(v.runs[0].ac_policy == op());
  CHECK(v.runs[1].ac_policy == every(2));
  CHECK(v.runs[2].ac_policy == AcPolicy{});
  const HardwareProfile hw = meshplan_test::a100();
  auto report = predict_set(v, hw);
  INFO((report.ok() ? std::string() : report.error().one_line()));
  REQUIRE(report.ok());
  const ValidationReport& r = report.value();
  CHECK(r.skipped == 0);
  CHECK(r.held_out.runs == 5);
  CHECK(run_problem(v, v.runs[0], hw).job.ac_policy == op());
  // every-2-layers lies between no recompute and full recompute, in time and in memory.
  const StepEstimate& half = r.runs[1].estimate;
  const StepEstimate& full = r.runs[3].estimate;
  const StepEstimate& none = r.runs[4].estimate;
  CHECK(half.time.step_s > none.time.step_s);
  CHECK(half.time.step_s < full.time.step_s);
  CHECK(half.memory.activations_bytes > full.memory.activations_bytes);
  CHECK(half.memory.activations_bytes < none.memory.activations_bytes);
  // op SAC reruns more than fused-attention selective (3 GEMMs against the attention core) and
  // stashes less (the fused kernel leaves Korthikanti's selective almost the whole layer).
  CHECK(r.runs[0].estimate.time.step_s > r.runs[2].estimate.time.step_s);
  CHECK(r.runs[0].estimate.memory.activations_bytes < r.runs[2].estimate.memory.activations_bytes);
}

TEST_CASE("a validation file's unknown ac_policy is an error naming the run's field") {
  const std::string text = R"(
source: test
hardware: a100-80gb-sxm
models:
  m: {model_type: llama, hidden_size: 2048, num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 4, intermediate_size: 5632, vocab_size: 32000, max_position_embeddings: 2048}
runs:
  - {model: m, gpus: 8, dp: 8, global_batch: 16, recompute: full, ac_policy: every-0-layers, iteration_s: 1}
)";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(!set.ok());
  CHECK(set.error().field == "runs[0].ac_policy");
  CHECK(set.error().value == "every-0-layers");
}
