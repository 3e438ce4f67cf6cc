// One timer standing for many deadlines: a client's request timeouts, a
// broker's waiting fetches. Arming a timer per deadline and cancelling it
// when the deadline is met early costs a heap insertion and a removal each,
// for timers that almost never fire; Kafka's NetworkClient instead looks for
// expired requests as it polls. The owner keeps its deadlines; the timer is
// due at the earliest deadline armed since it last fired. When it fires, the
// owner handles what is due and arms it again for the earliest left; a
// deadline met meanwhile needs nothing, the timer finds it gone.
#pragma once

#include <utility>

#include "sim/time.h"
#include "sim/world.h"

namespace sim {

class DeadlineTimer {
 public:
  DeadlineTimer() = default;
  // It runs closures that point at it: it stays where it is.
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Makes the timer due no later than `deadline`, when `on_due` runs (the
  // closure of the arming that set the time).
  template <typename F>
  void arm(ProcessContext& ctx, Time deadline, F&& on_due) {
    if (id_ && due_ <= deadline) return;  // it looks by then anyway
    if (id_) ctx.cancel(id_);
    due_ = deadline;
    id_ = ctx.at(deadline, [this, fn = std::forward<F>(on_due)]() mutable {
      id_ = {};
      due_ = Time::max();
      fn();
    });
  }
  // When it is due; Time::max() while not armed.
  Time due() const { return due_; }

 private:
  TimerId id_;
  Time due_ = Time::max();
};

}  // namespace sim
