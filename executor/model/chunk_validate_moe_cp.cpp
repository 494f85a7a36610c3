// validate_chunk with EP/CP groups: what the executor's MoE layers and context-parallel attention
// need of a model shape and a layout, on top of the dense checks (chunk_validate.cpp).
#include <string>

#include "executor/model/model_chunk.h"

namespace meshplan::exec {

namespace {
std::string str(int64_t v) { return std::to_string(v); }

void check_moe(ErrorList& errs, const ChunkSpec& s, const TpContext& tp, const EpCpGroups& g,
               const std::string& where) {
  const MoeSpec& moe = s.model.moe;
  if (moe.experts_per_token < 1 || moe.experts_per_token > moe.num_experts ||
      moe.expert_intermediate_size <= 0 || moe.layer_freq < 1) {
    errs.push_back(make_error(where, "num_experts_per_tok", str(moe.experts_per_token),
                              "needs 1 <= experts per token <= num_experts=" +
                                  str(moe.num_experts) + ", a positive expert width and layer_freq"));
  }
  if (moe.num_shared_experts > 0 || moe.router_bias) {
    errs.push_back(make_error(where, "n_shared_experts", str(moe.num_shared_experts),
                              "the executor's MoE layers have routed experts only, no router bias",
                              "run a Mixtral-style model (routed experts, softmax top-k router)"));
  }
  if (s.model.mla.enabled()) {
    errs.push_back(make_error(where, "kv_lora_rank", str(s.model.mla.kv_lora_rank),
                              "the executor has no multi-head latent attention"));
  }
  if (tp.size > 1) {
    errs.push_back(make_error(where, "tp", str(tp.size),
                              "the executor's MoE layers run with tp=1 (no expert tensor parallel)",
                              "use --ep to split the experts and --tp 1"));
  }
  if (moe.num_experts % g.ep.size != 0) {
    errs.push_back(make_error(where, "ep", str(g.ep.size),
                              "does not divide num_experts=" + str(moe.num_experts),
                              "choose an ep that divides the number of experts"));
  }
}
}  // namespace

ErrorList validate_chunk(const ChunkSpec& s, const TpContext& tp, const EpCpGroups& g,
                         const std::string& where) {
  ErrorList errs = validate_chunk(s, tp, where);
  if (g.ep.size < 1 || g.ep.rank < 0 || g.ep.rank >= g.ep.size || g.cp.size < 1 ||
      g.cp.rank < 0 || g.cp.rank >= g.cp.size) {
    errs.push_back(make_error(where, "ep", str(g.ep.size), "bad expert/context-parallel rank"));
    return errs;
  }
  bool has_moe_layer = false;
  for (int l = s.first_layer; l < s.first_layer + s.num_layers; ++l) {
    has_moe_layer = has_moe_layer || s.model.moe.is_moe_layer(l);
  }
  if (s.model.moe.enabled() && has_moe_layer) check_moe(errs, s, tp, g, where);
  if (g.cp.size > 1 && s.seq_len % (2 * g.cp.size) != 0) {
    errs.push_back(make_error(where, "seq_len", str(s.seq_len),
                              "not divisible by 2*cp=" + str(2 * g.cp.size) +
                                  " (load-balanced causal split into 2*cp chunks)",
                              "choose a sequence length that is a multiple of 2*cp"));
  }
  if (g.cp.size > 1 && tp.sequence_parallel && tp.size > 1 &&
      (s.micro_batch_size * s.seq_len / g.cp.size) % tp.size != 0) {
    errs.push_back(make_error(where, "micro_batch_size*seq_len/cp",
                              str(s.micro_batch_size * s.seq_len / g.cp.size),
                              "not divisible by tp=" + str(tp.size) + " (sequence parallel rows)"));
  }
  return errs;
}

}  // namespace meshplan::exec
