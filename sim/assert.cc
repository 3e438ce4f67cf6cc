#include "sim/assert.h"

namespace sim {
namespace {

thread_local const RunInfo* t_active_run = nullptr;

std::string describe(const std::string& what, std::optional<uint64_t> seed,
                     std::optional<Time> at) {
  std::string out = what;
  if (seed || at) {
    out += " [";
    if (seed) out += fmt::format("seed={}", *seed);
    if (seed && at) out += " ";
    if (at) out += fmt::format("t={}", format_time(*at));
    out += "]";
  }
  return out;
}

std::optional<uint64_t> active_seed() {
  if (t_active_run == nullptr) return std::nullopt;
  return t_active_run->seed;
}

std::optional<Time> active_time() {
  if (t_active_run == nullptr || t_active_run->now == nullptr) return std::nullopt;
  return *t_active_run->now;
}

}  // namespace

RunScope::RunScope(const RunInfo* info) : previous_(t_active_run) { t_active_run = info; }
RunScope::~RunScope() { t_active_run = previous_; }

const RunInfo* active_run() { return t_active_run; }

SimulationError::SimulationError(const std::string& what, std::optional<uint64_t> seed,
                                 std::optional<Time> at)
    : std::runtime_error(describe(what, seed, at)), seed_(seed), at_(at) {}

InvariantViolation::InvariantViolation(const std::string& message, const char* file, int line)
    : SimulationError(fmt::format("invariant violated: {} ({}:{})", message, file, line),
                      active_seed(), active_time()),
      message_(message),
      file_(file),
      line_(line) {}

void assertion_failed(const char* condition, const std::string& message, const char* file,
                      int line) {
  std::string text = condition;
  if (!message.empty()) text += ": " + message;
  throw InvariantViolation(text, file, line);
}

}  // namespace sim
