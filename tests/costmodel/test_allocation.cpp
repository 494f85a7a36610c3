// estimate_step is allocation-free (the planner's hot path): counts operator new calls around it.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "costmodel/estimate.h"
#include "fixtures.h"

namespace {
std::atomic<long> g_allocations{0};
}

// Counting replacements of the global allocation functions for this test binary. Every plain,
// array and nothrow form is replaced (all malloc/free), so that no pointer from a runtime's own
// operator new (ASan's, in the sanitizer build) reaches our free: a partial set is a real
// alloc-dealloc mismatch. GCC cannot see that these pair malloc with free, hence the pragma.
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace meshplan;

TEST_CASE("estimate_step and estimate_memory do not allocate") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 256, 512, 4096);
  for (ScheduleKind s : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                         ScheduleKind::ZeroBubbleH1}) {
    for (int zero = 0; zero <= 3; ++zero) {
      ParallelConfig c; c.tp = 8; c.pp = 4; c.dp = 8; c.micro_batch_size = 1; c.num_micro_batches = 64;
      c.schedule = s; c.zero_stage = zero; c.sequence_parallel = true; c.recompute = Recompute::Selective;
      if (s == ScheduleKind::Interleaved) c.virtual_stages = 2;
      const long before = g_allocations.load();
      const StepEstimate e = estimate_step(p, c);
      const MemoryBreakdown m = estimate_memory(p, c);
      const long after = g_allocations.load();
      INFO(to_string(s) << " zero " << zero);
      CHECK(after - before == 0);
      CHECK(e.time.step_s > 0);
      CHECK(m.peak_bytes > 0);
    }
  }
  // Sanity of the counter itself: a vector allocates.
  const long before = g_allocations.load();
  std::vector<int> v(16);
  CHECK(g_allocations.load() - before == 1);
}
