// The planner's expert dimensions: which (ep, etp) pairs a layout tries under Megatron-Core's rules.
#pragma once
#include <cstdint>
#include <vector>

#include "core/parallel_config.h"
#include "planner/enumerate.h"

namespace meshplan {

/// One expert layout: expert-parallel and expert-tensor-parallel degree.
struct ExpertChoice {
  int ep = 1;
  int etp = 1;
};

/// (ep, etp) pairs to try under layout (tp, dp) with `cp` context-parallel ranks; {1, 1} for dense
/// models. Only pairs core/moe_config.h accepts: ep divides num_experts, ep*etp divides tp*cp*dp,
/// etp fits a node (or --allow-tp-across-nodes). ep: the --ep list, else every such divisor; etp:
/// the --etp list, else 1 and tp (Megatron-Core's default etp = tp, and etp = 1, which its MoE
/// guide recommends for fine-grained experts: expert GEMMs stay whole). Ordered by ep, then etp.
std::vector<ExpertChoice> expert_domain(const Problem& p, const SearchSpace& s, int tp, int64_t dp, int cp = 1);

/// Cuts a layout's dimensions to what MoE models run: sequence parallelism on whenever tp > 1
/// (Megatron-Core asserts it), no ZeRO-3 (core/moe_config.h); under --moe-a2a-overlap also no full
/// recompute and, with pp > 1, only interleaved schedules (expert_domain drops ep = 1 then too).
/// Dense models unchanged.
void restrict_to_moe(const Problem& p, LayoutDims& d);

}  // namespace meshplan
