// Chunk-to-rank placement of pipeline schedules and DualPipeV's layout rules (core/pipeline_placement.h).
#include "core/pipeline_placement.h"

#include <string>

namespace meshplan {

int last_chunk_rank(const ParallelConfig& c) { return v_shaped(c.schedule) ? 0 : c.pp - 1; }

void check_dualpipev(const ParallelConfig& c, const std::string& w, ErrorList& e) {
  const std::string v = std::to_string(c.virtual_stages);
  if (c.virtual_stages != 2)
    e.push_back(make_error(w, "--virtual-stages", v, "dualpipev holds exactly two model chunks per rank",
                           "use --virtual-stages 2 (or leave it out) with --schedule dualpipev"));
  if (c.pp < 2)
    e.push_back(make_error(w, "--schedule", "dualpipev", "needs pp >= 2", "raise --pp or use 1f1b"));
  const int64_t chunks = 2 * static_cast<int64_t>(c.pp);
  if (c.pp >= 2 && c.num_micro_batches < chunks)
    e.push_back(make_error(w, "--micro-batch", std::to_string(c.micro_batch_size),
                           "dualpipev needs at least 2pp=" + std::to_string(chunks) + " micro-batches, got " +
                               std::to_string(c.num_micro_batches),
                           "lower --micro-batch or raise --global-batch"));
}

}  // namespace meshplan
