#include "sim/random.h"

#include <cmath>

namespace sim {
namespace {

__extension__ typedef unsigned __int128 u128;

constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t hash_name(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(uint64_t seed) : Rng(FromKey{}, seed) {}

Rng::Rng(FromKey, uint64_t key) : key_(key) {
  // Seed the four words from successive splitmix64 outputs, as the xoshiro
  // authors recommend; the state can never be all zero this way.
  uint64_t x = key;
  for (uint64_t& word : s_) {
    x += 0x9e3779b97f4a7c15ULL;
    word = mix64(x - 0x9e3779b97f4a7c15ULL);
  }
}

Rng Rng::fork(std::string_view name) const {
  return Rng(FromKey{}, mix64(key_ ^ mix64(hash_name(name))));
}

uint64_t Rng::next_u64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  SIM_ASSERT(n > 0, "Rng::below(0)");
  // Lemire, "Fast Random Integer Generation in an Interval" (2019): take the
  // high word of a 128-bit product, rejecting the few low words that would
  // bias the result.
  u128 m = static_cast<u128>(next_u64()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<u128>(next_u64()) * n;
      low = static_cast<uint64_t>(m);
    }
  }
  return static_cast<uint64_t>(m >> 64);
}

int64_t Rng::uniform(int64_t lo, int64_t hi) {
  SIM_ASSERT(lo <= hi, "Rng::uniform({}, {})", lo, hi);
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  const uint64_t offset = span == UINT64_MAX ? next_u64() : below(span + 1);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + offset);
}

Duration Rng::uniform(Duration lo, Duration hi) {
  return Duration::micros(uniform(lo.us(), hi.us()));
}

bool Rng::chance(uint64_t num, uint64_t den) {
  SIM_ASSERT(den > 0 && num <= den, "Rng::chance({}, {})", num, den);
  if (num == 0) return false;
  if (num == den) return true;
  return below(den) < num;
}

double Rng::unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

Duration Rng::exponential(Duration mean) {
  SIM_ASSERT(mean >= Duration::zero(), "exponential with negative mean");
  // 1 - unit() lies in (0, 1], so the logarithm is finite and <= 0.
  const double u = 1.0 - unit();
  const double v = -portable_log(u) * static_cast<double>(mean.us());
  return Duration::micros(static_cast<int64_t>(v + 0.5));
}

Duration Rng::normalish(Duration mean, Duration stddev) {
  SIM_ASSERT(stddev >= Duration::zero(), "normalish with negative stddev");
  // Sum of 12 uniforms on [0, 2^20) has mean 6 * 2^20 and variance 2^40.
  constexpr int64_t kUnit = int64_t{1} << 20;
  int64_t sum = 0;
  for (int i = 0; i < 12; ++i) sum += static_cast<int64_t>(next_u64() >> 44);
  const int64_t z = sum - 6 * kUnit;  // ~ N(0, kUnit^2)
  // stddev.us() * z could overflow for stddevs above ~2^40 us; split it.
  const int64_t s = stddev.us();
  const int64_t scaled = (s / kUnit) * z + ((s % kUnit) * z) / kUnit;
  return mean + Duration::micros(scaled);
}

double portable_log(double x) {
  SIM_ASSERT(x > 0 && std::isfinite(x), "portable_log({})", x);
  int exponent = 0;
  // frexp is exact: x = m * 2^exponent with m in [0.5, 1).
  double m = std::frexp(x, &exponent);
  // Move m into [sqrt(1/2), sqrt(2)) so the series below converges fast.
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    exponent -= 1;
  }
  // ln(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| < 0.1716.
  const double z = (m - 1.0) / (m + 1.0);
  const double z2 = z * z;
  double term = z;
  double sum = 0.0;
  for (int k = 1; k <= 31; k += 2) {  // z^33 / 33 < 1e-27: beyond double precision
    sum += term / k;
    term *= z2;
  }
  constexpr double kLn2 = 0.69314718055994530942;
  return 2.0 * sum + exponent * kLn2;
}

}  // namespace sim
