#include "sim/time.h"

#include <fmt/format.h>

namespace sim {

std::string format_time(Time t) {
  int64_t us = t.us();
  const char* sign = "";
  if (us < 0) {
    sign = "-";
    us = -us;
  }
  return fmt::format("{}{}.{:06}s", sign, us / 1'000'000, us % 1'000'000);
}

std::string format_duration(Duration d) {
  const int64_t us = d.us();
  if (us % 1'000'000 == 0) return fmt::format("{}s", us / 1'000'000);
  if (us % 1'000 == 0) return fmt::format("{}ms", us / 1'000);
  return fmt::format("{}us", us);
}

}  // namespace sim
