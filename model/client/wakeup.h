// A client's one pending wake-up, at a virtual millisecond (the clients keep
// time in whole milliseconds): asking for one no earlier than the pending
// one does nothing, an earlier one replaces it. The producer and the
// consumer pump on it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "sim/world.h"

namespace client {

class Wakeup {
 public:
  Wakeup() = default;
  // One timer, one owner: a copy would cancel the other's.
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  // Runs `fn` at millisecond `at_ms` (now, if that has passed).
  template <typename F>
  void at(sim::ProcessContext& ctx, int64_t at_ms, F fn) {
    const int64_t now_ms = ctx.now().us() / 1000;
    at_ms = std::max(at_ms, now_ms);
    if (at_ms_ >= 0 && at_ms_ <= at_ms && now_ms <= at_ms_) return;
    ctx.cancel(timer_);
    at_ms_ = at_ms;
    const sim::Time when = std::max(ctx.now(), sim::Time::zero() + sim::Duration::millis(at_ms));
    timer_ = ctx.at(when, [this, fn = std::move(fn)] {
      at_ms_ = -1;
      fn();
    });
  }

 private:
  sim::TimerId timer_;
  int64_t at_ms_ = -1;  // of the pending wake-up; -1: none
};

}  // namespace client
