// Assertions that stay on in every build.
//
// A kafkasim assertion guards an invariant of the model (one controller per
// epoch, a leader inside its ISR, ...). Breaking one is a bug in kafkasim,
// never an outcome of a scenario, so it must never fall through into undefined
// behaviour: SIM_ASSERT throws `sim::InvariantViolation`, which unwinds out of
// the event loop and carries the seed, the virtual time and the message. The
// command line turns it into exit code 3 and a reproducer line.
//
// The seed and the time come from the run that is active on this thread (see
// `RunScope`); parallel sweeps run one simulation per thread, so the pointer
// is thread-local.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "sim/time.h"

namespace sim {

// What an assertion reports about the run it happened in.
struct RunInfo {
  uint64_t seed = 0;
  // Reads the current virtual time; null when no loop is attached.
  const Time* now = nullptr;
};

// Marks `info` as the active run on this thread for the scope's lifetime.
// Scopes nest (a test may run a simulation inside another's callback).
class RunScope {
 public:
  explicit RunScope(const RunInfo* info);
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  const RunInfo* previous_;
};

// The active run on this thread, or null.
const RunInfo* active_run();

// Base of every error a simulation raises on its own (as opposed to bad input).
class SimulationError : public std::runtime_error {
 public:
  SimulationError(const std::string& what, std::optional<uint64_t> seed, std::optional<Time> at);
  std::optional<uint64_t> seed() const { return seed_; }
  std::optional<Time> at() const { return at_; }

 private:
  std::optional<uint64_t> seed_;
  std::optional<Time> at_;
};

// A violated invariant: a bug in kafkasim.
class InvariantViolation : public SimulationError {
 public:
  InvariantViolation(const std::string& message, const char* file, int line);
  const std::string& message() const { return message_; }
  const char* file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string message_;
  const char* file_;
  int line_;
};

[[noreturn]] void assertion_failed(const char* condition, const std::string& message,
                                   const char* file, int line);

}  // namespace sim

// SIM_ASSERT(cond) or SIM_ASSERT(cond, "fmt {}", args...). Always evaluated.
#define SIM_ASSERT(cond, ...)                                                       \
  do {                                                                              \
    if (!(cond)) [[unlikely]] {                                                     \
      ::sim::assertion_failed(#cond, ::sim::detail::assert_message(__VA_ARGS__),    \
                              __FILE__, __LINE__);                                  \
    }                                                                               \
  } while (false)

namespace sim::detail {
inline std::string assert_message() { return {}; }
template <typename... Args>
std::string assert_message(fmt::format_string<Args...> f, Args&&... args) {
  return fmt::format(f, std::forward<Args>(args)...);
}
}  // namespace sim::detail
