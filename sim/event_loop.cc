#include "sim/event_loop.h"

#include <utility>

namespace sim {

namespace {
constexpr size_t kArity = 4;
}

EventLoop::EventLoop(EventLimits limits) : limits_(limits) { heap_.reserve(1024); }

EventLoop::~EventLoop() = default;

uint32_t EventLoop::allocate_slot() {
  if (!free_slots_.empty()) {
    const uint32_t i = free_slots_.back();
    free_slots_.pop_back();
    return i;
  }
  if ((slots_used_ >> kChunkBits) == chunks_.size()) {
    // The flat arrays grow first: if an allocation fails, no chunk has
    // slots they do not cover.
    slot_seq_.resize((chunks_.size() + 1) * kChunkSize, 0);
    heap_pos_.resize((chunks_.size() + 1) * kChunkSize, 0);
    chunks_.push_back(std::make_unique<Slot[]>(kChunkSize));
  }
  return slots_used_++;
}

void EventLoop::free_slot(uint32_t i) {
  slot_seq_[i] = 0;
  slot(i).fn.reset();
  free_slots_.push_back(i);
}

TimerId EventLoop::open_slot(Time t) {
  SIM_ASSERT(t >= now_, "event scheduled in the past: {} < now {}", format_time(t),
             format_time(now_));
  const uint32_t i = allocate_slot();
  const uint64_t seq = next_seq_++;
  slot_seq_[i] = seq;
  return TimerId{i, seq};
}

TimerId EventLoop::at(Time t, Callback fn) {
  SIM_ASSERT(static_cast<bool>(fn), "event scheduled without a callback");
  const TimerId id = open_slot(t);
  slot(id.slot).fn = std::move(fn);
  schedule(t, id);
  return id;
}

TimerId EventLoop::after(Duration d, Callback fn) {
  SIM_ASSERT(d >= Duration::zero(), "negative delay {}us", d.us());
  return at(now_ + d, std::move(fn));
}

bool EventLoop::is_pending(TimerId id) const {
  return id.seq != 0 && id.slot < slot_seq_.size() && slot_seq_[id.slot] == id.seq;
}

bool EventLoop::cancel(TimerId id) {
  if (!is_pending(id)) return false;
  heap_remove(heap_pos_[id.slot]);
  free_slot(id.slot);
  --live_;
  return true;
}

void EventLoop::heap_push(int64_t time_us, uint64_t seq, uint32_t slot) {
  heap_.emplace_back();
  sift_up(heap_.size() - 1, time_us, seq, slot);
}

void EventLoop::sift_up(size_t i, int64_t time_us, uint64_t seq, uint32_t slot) {
  // Field by field: the entry is written once, where it lands (see heap_push).
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    const Entry& p = heap_[parent];
    if (!(time_us < p.time_us || (time_us == p.time_us && seq < p.seq))) break;
    place(i, p);
    i = parent;
  }
  Entry& e = heap_[i];
  e.time_us = time_us;
  e.seq = seq;
  e.slot = slot;
  heap_pos_[slot] = static_cast<uint32_t>(i);
}

void EventLoop::sift_down(size_t i) {
  const size_t n = heap_.size();
  const Entry e = heap_[i];
  for (;;) {
    const size_t first = i * kArity + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t last = first + kArity < n ? first + kArity : n;
    for (size_t c = first + 1; c < last; ++c) {
      if (earlier(heap_[c], heap_[best])) best = c;
    }
    if (!earlier(heap_[best], e)) break;
    place(i, heap_[best]);
    i = best;
  }
  place(i, e);
}

void EventLoop::heap_pop() { heap_remove(0); }

void EventLoop::heap_remove(size_t i) {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  // The last entry fills the hole and moves up or down to its place.
  if (i > 0 && earlier(last, heap_[(i - 1) / kArity])) {
    sift_up(i, last.time_us, last.seq, last.slot);
  } else {
    place(i, last);
    sift_down(i);
  }
}

Time EventLoop::next_time() {
  return heap_.empty() ? Time::max() : Time::from_us(heap_[0].time_us);
}

void EventLoop::run_entry(const Entry& e) {
  const Time t = Time::from_us(e.time_us);
  if (t == now_) {
    if (++executed_this_instant_ > limits_.max_events_per_instant) {
      const RunInfo* run = active_run();
      throw EventLimitExceeded(
          fmt::format("livelock: more than {} events at one instant",
                      limits_.max_events_per_instant),
          run ? std::optional<uint64_t>(run->seed) : std::nullopt, now_);
    }
  } else {
    executed_this_instant_ = 1;
  }
  if (++executed_ > limits_.max_events) {
    const RunInfo* run = active_run();
    throw EventLimitExceeded(fmt::format("event limit of {} reached", limits_.max_events),
                             run ? std::optional<uint64_t>(run->seed) : std::nullopt, now_);
  }
  now_ = t;
  // Run the callback where it lies: slots live in stable chunks, so events it
  // schedules cannot move it, and its slot is freed only afterwards (so it is
  // not reused meanwhile). Clearing the sequence first makes a cancel of the
  // running event report that it is no longer pending.
  Slot& s = slot(e.slot);
  slot_seq_[e.slot] = 0;
  --live_;
  struct Release {
    EventLoop* loop;
    uint32_t index;
    ~Release() { loop->free_slot(index); }
  } release{this, e.slot};
  s.fn();
  if (after_event_) after_event_();
}

bool EventLoop::step() {
  if (heap_.empty()) return false;
  const Entry e = heap_[0];
  heap_pop();
  run_entry(e);
  return true;
}

bool EventLoop::has_due(Time limit) {
  return !heap_.empty() && heap_[0].time_us <= limit.us();
}

void EventLoop::run_until(Time limit) {
  while (has_due(limit)) step();
  if (limit > now_) now_ = limit;
}

bool EventLoop::run_until(const std::function<bool()>& done, Time limit) {
  if (done()) return true;
  while (has_due(limit)) {
    step();
    if (done()) return true;
  }
  if (limit > now_) now_ = limit;
  return false;
}

bool EventLoop::run_until_quiet(Time limit) {
  while (has_due(limit)) step();
  return live_ == 0;
}

}  // namespace sim
