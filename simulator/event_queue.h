// EventQueue: binary min-heap of (time, sequence) events; equal times pop in insertion order,
// so a simulation is deterministic regardless of the heap's internal layout.
#pragma once
#include <cassert>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace meshplan {

struct Event {
  Nanoseconds time_ns = 0;
  uint64_t sequence = 0;  // tie-break: insertion order
  int32_t lane = 0;       // who resumes
};

class EventQueue {
 public:
  void reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

  /// The next event (queue not empty).
  const Event& top() const {
    assert(!heap_.empty());
    return heap_.front();
  }

  void push(Nanoseconds time_ns, int32_t lane) {
    heap_.push_back(Event{time_ns, next_sequence_++, lane});
    sift_up(heap_.size() - 1);
  }

  Event pop() {
    assert(!heap_.empty() && "pop from an empty event queue");
    Event top = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return top;
  }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.time_ns < b.time_ns || (a.time_ns == b.time_ns && a.sequence < b.sequence);
  }
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    Event e = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace meshplan
