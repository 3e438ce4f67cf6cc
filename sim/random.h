// Seeded randomness that gives the same numbers on every platform.
//
// The generator is xoshiro256** (Blackman & Vigna), seeded through splitmix64.
// The standard library's distributions are implementation-defined (libstdc++
// and libc++ draw different numbers from the same engine), so every
// distribution here is our own: Lemire's multiply-and-reject for integer
// ranges, and a logarithm built only from +, -, *, / (which IEEE 754 rounds
// identically everywhere, given -ffp-contract=off) for the exponential.
//
// Streams are forked by name: `root.fork("network")` depends only on the
// root's key and the name, never on how many numbers the root has drawn, so
// adding a component or a draw in one component does not shift any other
// component's numbers.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/assert.h"
#include "sim/time.h"

namespace sim {

// splitmix64's output function: a good 64-bit mixer.
uint64_t mix64(uint64_t x);
// FNV-1a over the bytes of `s`: a stable hash of a stream name.
uint64_t hash_name(std::string_view s);

class Rng {
 public:
  // The root stream of a run. Different seeds give unrelated streams.
  explicit Rng(uint64_t seed);

  // A child stream named `name`: a pure function of this stream's key and the
  // name. Forking twice with the same name gives the same stream.
  Rng fork(std::string_view name) const;
  // The value this stream was derived from (the seed, for a root stream).
  uint64_t key() const { return key_; }

  uint64_t next_u64();
  // Uniform in [0, n). n must be > 0.
  uint64_t below(uint64_t n);
  // Uniform in [lo, hi], both inclusive. lo <= hi.
  int64_t uniform(int64_t lo, int64_t hi);
  Duration uniform(Duration lo, Duration hi);
  // True with probability num/den. 0 <= num <= den, den > 0.
  bool chance(uint64_t num, uint64_t den);
  // Uniform double in [0, 1) with 53 random bits.
  double unit();
  // Exponentially distributed with the given mean, rounded to a microsecond.
  Duration exponential(Duration mean);
  // Approximately normal (Irwin-Hall sum of twelve uniforms), clamped to
  // [mean - 6 stddev, mean + 6 stddev] by construction. Integer arithmetic only.
  Duration normalish(Duration mean, Duration stddev);

  // Fisher-Yates with our own range reduction (std::shuffle is not portable).
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) {
      const size_t j = static_cast<size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    SIM_ASSERT(!v.empty(), "pick from an empty vector");
    return v[static_cast<size_t>(below(v.size()))];
  }

 private:
  struct FromKey {};
  Rng(FromKey, uint64_t key);
  uint64_t key_;
  uint64_t s_[4];
};

// ln(x) for x > 0, computed with +, -, *, / only so that the result is the same
// bit for bit on every IEEE 754 platform. Accurate to about 1e-15 relative.
double portable_log(double x);

}  // namespace sim
