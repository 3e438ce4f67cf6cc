// The event loop: one queue of pending events ordered by (time, sequence).
//
// Everything that happens in a simulation is an event here: a message landing,
// a timer going off, a fault from the schedule. Events scheduled for the same
// instant run in the order they were scheduled, always, because each gets a
// sequence number from one counter. `now` jumps straight to the next event's
// time; nothing ever waits.
//
// The queue is a 4-ary min-heap of small (time, sequence, slot) entries; the
// callbacks live in a slab of stable slots so that running one never moves
// another. Each slot's place in the heap is kept (in a flat array), so cancelling a
// timer removes the entry at once (O(log n)): request timeouts are cancelled
// far more often than they fire, and dead entries left in the heap
// outnumbered live ones four to one, each costing a sift when it surfaced.
//
// A livelock must end as an error, not a hang: the loop stops with
// `EventLimitExceeded` when it runs more than `max_events` in all, or more
// than `max_events_per_instant` without virtual time moving.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "sim/assert.h"
#include "sim/callback.h"
#include "sim/time.h"

namespace sim {

// Names one scheduled event. A default-constructed id names nothing.
struct TimerId {
  uint32_t slot = 0;
  uint64_t seq = 0;  // 0: no event
  explicit operator bool() const { return seq != 0; }
  friend bool operator==(const TimerId&, const TimerId&) = default;
};

struct EventLimits {
  uint64_t max_events = 4'000'000'000;
  uint64_t max_events_per_instant = 10'000'000;
};

class EventLimitExceeded : public SimulationError {
 public:
  using SimulationError::SimulationError;
};

class EventLoop {
 public:
  explicit EventLoop(EventLimits limits = {});
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  ~EventLoop();

  Time now() const { return now_; }
  // A stable pointer to `now`, for `RunInfo`.
  const Time* now_ptr() const { return &now_; }

  // Schedules `fn` at `t` (not before now) or after `d` (not negative).
  TimerId at(Time t, Callback fn);
  // The same for a closure, built straight in its slot (no Callback moved).
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Callback>>>
  TimerId at(Time t, F&& f) {
    if constexpr (std::is_constructible_v<bool, const std::decay_t<F>&>) {
      SIM_ASSERT(static_cast<bool>(f), "event scheduled without a callback");
    }
    const TimerId id = open_slot(t);
    slot(id.slot).fn.assign(std::forward<F>(f));
    schedule(t, id);
    return id;
  }
  TimerId after(Duration d, Callback fn);
  // Cancels a pending event. Returns false if it already ran or was cancelled.
  bool cancel(TimerId id);
  bool is_pending(TimerId id) const;

  // Runs the next event. Returns false when nothing is pending.
  bool step();
  // Runs every event due at or before `limit`, then sets now to `limit`.
  void run_until(Time limit);
  // Runs events until `done()` holds (checked first, then after every event)
  // or the next event lies beyond `limit`. Returns whether `done()` held; when
  // it did not, now is `limit`.
  bool run_until(const std::function<bool()>& done, Time limit);
  // Runs until nothing is pending or the next event lies beyond `limit`.
  // Returns true if the queue drained.
  bool run_until_quiet(Time limit = Time::max());

  // Called after every event, e.g. to check invariants on the way out.
  void set_after_event(std::function<void()> hook) { after_event_ = std::move(hook); }

  size_t pending() const { return live_; }
  uint64_t executed() const { return executed_; }
  // Time of the earliest pending event, or Time::max() when none.
  Time next_time();

 private:
  struct Entry {
    int64_t time_us;
    uint64_t seq;
    uint32_t slot;
  };
  // A slot's callback lives in a stable chunk; its sequence number and heap
  // position sit in flat arrays beside it, as every sift step writes a
  // position and every cancel reads a sequence.
  struct Slot {
    Callback fn;
  };
  static constexpr uint32_t kChunkBits = 10;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;

  static bool earlier(const Entry& a, const Entry& b) {
    return a.time_us < b.time_us || (a.time_us == b.time_us && a.seq < b.seq);
  }
  Slot& slot(uint32_t i) { return chunks_[i >> kChunkBits][i & (kChunkSize - 1)]; }
  const Slot& slot(uint32_t i) const { return chunks_[i >> kChunkBits][i & (kChunkSize - 1)]; }
  uint32_t allocate_slot();
  // at(): a slot and sequence number for an event at `t`, then its entry in
  // the heap once the callback is in the slot.
  TimerId open_slot(Time t);
  void schedule(Time t, TimerId id) {
    heap_push(t.us(), id.seq, id.slot);
    ++live_;
  }
  void free_slot(uint32_t i);

  // Takes the entry's fields, not an Entry in memory: the caller's just-written
  // 8-byte stores read back as one 16-byte load stalled on store forwarding.
  void heap_push(int64_t time_us, uint64_t seq, uint32_t slot);
  void heap_pop();
  // Removes the entry at heap position i.
  void heap_remove(size_t i);
  void place(size_t i, const Entry& e) {
    heap_[i] = e;
    heap_pos_[e.slot] = static_cast<uint32_t>(i);
  }
  // Moves an entry with these fields up from hole i to its place.
  void sift_up(size_t i, int64_t time_us, uint64_t seq, uint32_t slot);
  void sift_down(size_t i);
  bool has_due(Time limit);
  void run_entry(const Entry& e);

  EventLimits limits_;
  Time now_ = Time::zero();
  uint64_t next_seq_ = 1;
  uint64_t executed_ = 0;
  uint64_t executed_this_instant_ = 0;
  size_t live_ = 0;
  std::vector<Entry> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<uint64_t> slot_seq_;   // per slot: 0 while free or running
  std::vector<uint32_t> heap_pos_;   // per slot: where its entry is in heap_, while pending
  std::vector<uint32_t> free_slots_;
  uint32_t slots_used_ = 0;
  std::function<void()> after_event_;
};

}  // namespace sim
