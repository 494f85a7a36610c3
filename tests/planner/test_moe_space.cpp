// Planner over expert layouts: the (ep, etp) domain obeys Megatron-Core's rules, the fast search
// equals the plain enumeration on an MoE model, dense spaces are unchanged; MoE exports.
#include <catch2/catch.hpp>

#include <string>

#include "../costmodel/fixtures.h"
#include "../costmodel/moe_fixtures.h"
#include "core/framework.h"
#include "core/moe_config.h"
#include "planner/export.h"
#include "planner/export_frameworks.h"
#include "planner/moe_space.h"
#include "planner/search.h"

using namespace meshplan;

namespace {
Problem moe_problem(const ModelSpec& m, int64_t gpus, int64_t batch, int64_t seq) {
  Problem p = meshplan_test::problem(m, gpus, batch, seq);
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}
}  // namespace

TEST_CASE("expert domain: ep divides the experts and, times etp, the folded tp*dp ranks") {
  const Problem p = moe_problem(meshplan_test::deepseek_v3(), 2048, 2048, 4096);
  const std::vector<ExpertChoice> d = expert_domain(p, SearchSpace{}, 2, 64);
  REQUIRE(!d.empty());
  for (const ExpertChoice& c : d) {
    INFO("ep " << c.ep << " etp " << c.etp);
    CHECK(256 % c.ep == 0);
    CHECK((2 * 64) % (c.ep * c.etp) == 0);
    CHECK((c.etp == 1 || c.etp == 2));
    ParallelConfig cfg;
    cfg.tp = 2; cfg.pp = 16; cfg.dp = 64; cfg.ep = c.ep; cfg.etp = c.etp;
    cfg.sequence_parallel = true; cfg.zero_stage = 1; cfg.num_micro_batches = 32;
    CHECK(validate_moe_config(p, cfg, "t").empty());
  }
  CHECK(d.size() == 8 + 7);  // ep 1..128 with etp 1; ep 1..64 with etp 2
  SearchSpace only;
  only.ep = {64};
  only.etp = {1};
  REQUIRE(expert_domain(p, only, 2, 64).size() == 1);
  const Problem dense = moe_problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  REQUIRE(expert_domain(dense, SearchSpace{}, 8, 8).size() == 1);
  CHECK(expert_domain(dense, SearchSpace{}, 8, 8)[0].ep == 1);
}

TEST_CASE("MoE search: fast search equals the plain enumeration, and picks expert parallelism") {
  Problem p = moe_problem(meshplan_test::small_moe(), 32, 64, 2048);
  SearchOptions opt;
  opt.top_k = 5;
  opt.pareto = true;
  const SearchResult fast = search(p, opt);
  const SearchResult plain = search_reference(p, opt);
  CHECK(fast.space == plain.space);
  CHECK(fast.rejected == plain.rejected);
  REQUIRE(fast.top.size() == plain.top.size());
  for (size_t i = 0; i < fast.top.size(); ++i) {
    CHECK(fast.top[i].time.step_s == plain.top[i].time.step_s);
    CHECK(fast.top[i].config.ep == plain.top[i].config.ep);
    CHECK(fast.top[i].config.etp == plain.top[i].config.etp);
    CHECK(validate_config(p, fast.top[i].config, "t").empty());
  }
  REQUIRE(fast.pareto.size() == plain.pareto.size());
  bool any_ep = false;
  for (const StepEstimate& e : fast.top) any_ep = any_ep || e.config.ep > 1;
  CHECK(any_ep);
  // Every candidate the search ranks keeps Megatron-Core's SP rule.
  for (const StepEstimate& e : fast.pareto) CHECK((e.config.tp == 1 || e.config.sequence_parallel));
}

TEST_CASE("MoE search at ZeRO-3: fast equals plain with experts sharded over the expert-data group and DeepSpeed has none") {
  Problem p = moe_problem(meshplan_test::small_moe(), 32, 64, 2048);
  SearchOptions opt;
  opt.top_k = 5;
  opt.space.zero = {3};
  for (Framework f : {Framework::Meshplan, Framework::Torchtitan}) {
    p.job.framework = f;
    p.job.knobs = framework_knobs(framework_spec(f));
    p.job.knobs.attention = AttentionKind::Fused;
    const SearchResult fast = search(p, opt), plain = search_reference(p, opt);
    INFO(to_string(f));
    CHECK(fast.space == plain.space);
    CHECK(fast.rejected == plain.rejected);
    REQUIRE(!fast.top.empty());
    REQUIRE(fast.top.size() == plain.top.size());
    for (size_t i = 0; i < fast.top.size(); ++i) {
      CHECK(fast.top[i].time.step_s == plain.top[i].time.step_s);
      CHECK(fast.top[i].config.zero_stage == 3);
      CHECK(validate_config(p, fast.top[i].config, "t").empty());
    }
  }
  p.job.framework = Framework::DeepSpeed;
  p.job.knobs = framework_knobs(framework_spec(Framework::DeepSpeed));
  CHECK(search(p, opt).top.empty());  // "MoE not supported with Stage 3"
}

TEST_CASE("Megatron export carries the MoE and MLA flags, DeepSpeed refuses what it cannot run") {
  Problem p = moe_problem(meshplan_test::deepseek_v3(), 2048, 2048, 4096);
  p.job.framework = Framework::Megatron;
  ParallelConfig c;
  c.tp = 1; c.pp = 16; c.dp = 128; c.ep = 64; c.etp = 1; c.zero_stage = 1;
  c.num_micro_batches = 16;
  REQUIRE(validate_config(p, c, "t").empty());
  const std::string args = megatron_args(p, c);
  for (const char* want : {"--num-experts 256", "--moe-router-topk 8", "--moe-ffn-hidden-size 2048",
                           "--expert-model-parallel-size 64", "--expert-tensor-parallel-size 1",
                           "--moe-grouped-gemm", "--moe-token-dispatcher-type alltoall",
                           "--moe-shared-expert-intermediate-size 2048", "--moe-layer-freq \"([0]*3+[1]*58)\"",
                           "--multi-latent-attention", "--q-lora-rank 1536", "--kv-lora-rank 512",
                           "--qk-head-dim 128", "--qk-pos-emb-head-dim 64", "--v-head-dim 128"}) {
    INFO(want);
    CHECK(args.find(want) != std::string::npos);
  }
  // NeMo needs equal pipeline chunks: Mixtral 8x7B on 64 GPUs, TP2 (SP) x PP4 x DP8 with EP8.
  Problem mix = moe_problem(meshplan_test::mixtral_8x7b(), 64, 256, 4096);
  ParallelConfig mc;
  mc.tp = 2; mc.pp = 4; mc.dp = 8; mc.ep = 8; mc.etp = 1; mc.zero_stage = 1; mc.sequence_parallel = true;
  mc.num_micro_batches = 32;
  REQUIRE(validate_config(mix, mc, "t").empty());
  auto nemo = export_for_framework("nemo", mix, mc);
  INFO((nemo.ok() ? std::string() : nemo.error().one_line()));
  REQUIRE(nemo.ok());
  CHECK(nemo.value().text.find("expert_model_parallel_size: 8") != std::string::npos);
  CHECK(nemo.value().text.find("num_moe_experts: 8") != std::string::npos);
  CHECK(nemo.value().text.find("moe_layer_freq") == std::string::npos);  // every layer MoE
  // DeepSpeed (no sequence parallelism, so tp = 1 for MoE): EP8 within DP16 runs; an expert TP of 2
  // (Megatron-Core's ETP, independent of tp) does not.
  ParallelConfig ds = mc;
  ds.tp = 1; ds.dp = 16; ds.sequence_parallel = false; ds.num_micro_batches = 16;
  REQUIRE(validate_config(mix, ds, "t").empty());
  auto ds_ok = export_for_framework("deepspeed", mix, ds);
  INFO((ds_ok.ok() ? std::string() : ds_ok.error().one_line()));
  REQUIRE(ds_ok.ok());
  CHECK(ds_ok.value().note.find("ep_size=8") != std::string::npos);
  ParallelConfig etp2 = ds;
  etp2.ep = 4; etp2.etp = 2;
  REQUIRE(validate_config(mix, etp2, "t").empty());
  auto ds_bad = export_for_framework("deepspeed", mix, etp2);
  REQUIRE(!ds_bad.ok());
  CHECK(ds_bad.error().field == "etp");
  CHECK(ds_bad.error().one_line().find("DeepSpeed-MoE") != std::string::npos);
  // Dense exports are untouched.
  Problem dense = moe_problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  ParallelConfig dc;
  dc.tp = 8; dc.dp = 8; dc.num_micro_batches = 8;
  CHECK(megatron_args(dense, dc).find("expert") == std::string::npos);
}

TEST_CASE("moe a2a overlap: Megatron-Core's rules in validate_moe_config, the planner's space and the exports") {
  Problem p = moe_problem(meshplan_test::small_moe(), 32, 64, 2048);
  p.job.framework = Framework::Megatron;
  p.job.knobs.moe_a2a_overlap = true;
  ParallelConfig c;
  c.tp = 1; c.pp = 2; c.dp = 16; c.ep = 8; c.etp = 1; c.zero_stage = 1;
  c.num_micro_batches = 4;
  c.schedule = ScheduleKind::Interleaved;
  c.virtual_stages = 2;
  REQUIRE(validate_config(p, c, "t").empty());
  auto refused = [&](ParallelConfig bad, const Problem& q, const char* why) {
    const ErrorList e = validate_config(q, bad, "t");
    INFO(why);
    REQUIRE(e.size() == 1);
    CHECK(e.front().field == "--moe-a2a-overlap");
    CHECK(e.front().one_line().find(why) != std::string::npos);
  };
  ParallelConfig no_v = c;
  no_v.schedule = ScheduleKind::OneFOneB;
  no_v.virtual_stages = 1;
  refused(no_v, p, "virtual pipeline");
  ParallelConfig pp1 = no_v;  // pp 1 needs no virtual pipeline
  pp1.pp = 1; pp1.dp = 32; pp1.num_micro_batches = 2;
  CHECK(validate_config(p, pp1, "t").empty());
  ParallelConfig full = c;
  full.recompute = Recompute::Full;
  refused(full, p, "full recomputation");
  ParallelConfig ep1 = c;
  ep1.ep = 1;
  refused(ep1, p, "--ep > 1");
  // The planner's space keeps only what the overlap runs under: ep > 1, no full recompute, and an
  // interleaved schedule whenever pp > 1; every ranked candidate passes validate_config.
  CHECK(expert_domain(p, SearchSpace{}, 1, 16).front().ep > 1);
  SearchOptions opt;
  opt.top_k = 50;
  const SearchResult r = search(p, opt);
  REQUIRE(!r.top.empty());
  for (const StepEstimate& e : r.top) {
    INFO("pp " << e.config.pp << " v " << e.config.virtual_stages << " ep " << e.config.ep);
    CHECK(e.config.ep > 1);
    CHECK(e.config.recompute != Recompute::Full);
    CHECK((e.config.pp == 1 || e.config.virtual_stages > 1));
    CHECK(validate_config(p, e.config, "t").empty());
  }
  const SearchResult plain = search_reference(p, opt);
  CHECK(r.space == plain.space);
  REQUIRE(r.top.size() == plain.top.size());
  CHECK(r.top.front().time.step_s == plain.top.front().time.step_s);
  // Exports: Megatron's two flags, NeMo's two keys; DeepSpeed refuses, naming the overlap.
  const std::string args = megatron_args(p, c);
  CHECK(args.find("--overlap-moe-expert-parallel-comm") != std::string::npos);
  CHECK(args.find("--delay-wgrad-compute") != std::string::npos);
  Problem nemo_p = p;
  nemo_p.job.framework = Framework::Nemo;
  auto nemo = export_for_framework("nemo", nemo_p, c);
  INFO((nemo.ok() ? std::string() : nemo.error().one_line()));
  REQUIRE(nemo.ok());
  CHECK(nemo.value().text.find("overlap_moe_expert_parallel_comm: true") != std::string::npos);
  CHECK(nemo.value().text.find("delay_wgrad_compute: true") != std::string::npos);
  auto ds_export = export_for_framework("deepspeed", p, pp1);
  REQUIRE(!ds_export.ok());
  CHECK(ds_export.error().field == "moe_a2a_overlap");
  p.job.knobs.moe_a2a_overlap = false;
  CHECK(megatron_args(p, c).find("overlap-moe") == std::string::npos);
}
