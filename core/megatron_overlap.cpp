// Layout rules of Megatron-Core's --tp-comm-overlap and --overlap-param-gather (core/megatron_overlap.h).
#include "core/megatron_overlap.h"

namespace meshplan {

bool tp_comm_overlap_on(const Job& job, const ParallelConfig& c) {
  return job.knobs.tp_comm_overlap && c.tp > 1 && c.sequence_parallel;
}

bool param_gather_overlap_on(const Job& job, const ParallelConfig& c) {
  return job.knobs.param_gather_overlap && c.zero_stage == 1 && c.dp_overlap &&
         static_cast<int64_t>(c.dp) * c.cp > 1;
}

std::string tp_comm_overlap_rule(const Job& job, const ParallelConfig& c) {
  if (!job.knobs.tp_comm_overlap || c.tp <= 1 || c.sequence_parallel) return "";
  return "needs sequence parallelism at TP " + std::to_string(c.tp) +
         " (Megatron-LM asserts TP communication overlap only with --sequence-parallel)";
}

std::string param_gather_overlap_rule(const Job& job, const ParallelConfig& c) {
  if (!job.knobs.param_gather_overlap) return "";
  if (c.zero_stage != 1)  // the stages --framework megatron / nemo run are 0 and 1 (core/framework.cpp)
    return "needs Megatron-Core's distributed optimizer (ZeRO 1); ZeRO " + std::to_string(c.zero_stage) +
           " has no parameter all-gather to overlap";
  if (!c.dp_overlap)
    return "needs the gradient reduction overlapped too (Megatron-LM asserts --overlap-param-gather only with "
           "--overlap-grad-reduce)";
  return "";
}

}  // namespace meshplan
