// Virtual time for the simulation.
//
// Every duration and instant in kafkasim is an integer count of microseconds
// of *virtual* time. The wall clock never enters a simulation: the event loop
// owns `now` and jumps from one event to the next. Two strong types keep
// instants and durations apart so that `time + time` does not compile.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace sim {

// A span of virtual time in microseconds. May be negative (a difference).
class Duration {
 public:
  constexpr Duration() = default;

  static constexpr Duration micros(int64_t us) { return Duration(us); }
  static constexpr Duration millis(int64_t ms) { return Duration(ms * 1'000); }
  static constexpr Duration seconds(int64_t s) { return Duration(s * 1'000'000); }
  static constexpr Duration minutes(int64_t m) { return Duration(m * 60'000'000); }
  static constexpr Duration zero() { return Duration(0); }
  static constexpr Duration max() { return Duration(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t us() const { return us_; }
  constexpr int64_t ms() const { return us_ / 1'000; }  // truncates toward zero

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(us_ + o.us_); }
  constexpr Duration operator-(Duration o) const { return Duration(us_ - o.us_); }
  constexpr Duration operator-() const { return Duration(-us_); }
  constexpr Duration operator*(int64_t k) const { return Duration(us_ * k); }
  constexpr Duration operator/(int64_t k) const { return Duration(us_ / k); }
  constexpr Duration& operator+=(Duration o) { us_ += o.us_; return *this; }
  constexpr Duration& operator-=(Duration o) { us_ -= o.us_; return *this; }

 private:
  constexpr explicit Duration(int64_t us) : us_(us) {}
  int64_t us_ = 0;
};

// An instant of virtual time: microseconds since the simulation started.
class Time {
 public:
  constexpr Time() = default;

  static constexpr Time zero() { return Time(0); }
  static constexpr Time from_us(int64_t us) { return Time(us); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t us() const { return us_; }
  constexpr Duration since_start() const { return Duration::micros(us_); }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Duration d) const { return Time(saturating_add(us_, d.us())); }
  constexpr Time operator-(Duration d) const { return Time(us_ - d.us()); }
  constexpr Duration operator-(Time o) const { return Duration::micros(us_ - o.us_); }
  constexpr Time& operator+=(Duration d) { us_ = saturating_add(us_, d.us()); return *this; }

 private:
  constexpr explicit Time(int64_t us) : us_(us) {}
  // `now + Duration::max()` means "never" and must not wrap around.
  static constexpr int64_t saturating_add(int64_t a, int64_t b) {
    if (b > 0 && a > std::numeric_limits<int64_t>::max() - b) {
      return std::numeric_limits<int64_t>::max();
    }
    return a + b;
  }
  int64_t us_ = 0;
};

// "12.204000s": seconds with six decimals, the form used in traces and logs.
std::string format_time(Time t);
// "250ms", "1.5s", "12us": a short human form for durations.
std::string format_duration(Duration d);

}  // namespace sim
