// Strict option parsing for the kafkasim command line: every option is
// declared by its command, an unknown option, a missing value, a repeated
// single-valued option or a value out of range is a UsageError (the message,
// then the command's usage, exit 2) — never silently ignored.
//
//   Args a("run", argv_tail, {{"seed", true}, {"format", true}, {"help", false}});
//   std::optional<std::string> seed = a.value("seed");
//   a.positionals();  // SCENARIO ...
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cli {

// Bad usage of a command: exit 2 with the message and the command's usage.
class UsageError : public std::runtime_error {
 public:
  UsageError(std::string command, const std::string& message)
      : std::runtime_error(message), command_(std::move(command)) {}
  const std::string& command() const { return command_; }

 private:
  std::string command_;
};

// Bad input that is not a matter of usage (a results file of another
// scenario, an output directory in the way): exit 2 with the message only.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;   // without the leading "--"
  bool takes_value = false;
  bool repeatable = false;
};

class Args {
 public:
  // Parses `args` (what follows the subcommand). "--name value" and
  // "--name=value" both work; "--" ends the options; "-h" is "--help".
  Args(std::string command, const std::vector<std::string>& args, std::vector<OptionSpec> spec);

  const std::string& command() const { return command_; }
  bool flag(const std::string& name) const;
  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }

  // Exactly `n` positionals (min..max), else a UsageError naming `what`.
  void expect_positionals(size_t min, size_t max, const std::string& what) const;

  [[noreturn]] void fail(const std::string& message) const { throw UsageError(command_, message); }

 private:
  const OptionSpec* find(const std::string& name) const;
  std::string command_;
  std::vector<OptionSpec> spec_;
  std::map<std::string, std::vector<std::string>> seen_;
  std::vector<std::string> positionals_;
};

struct SeedRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
  // Saturates: 0..2^64-1 holds one seed more than a uint64_t counts.
  uint64_t count() const { return last - first == UINT64_MAX ? UINT64_MAX : last - first + 1; }
};

// Seeds first + (index - 1), first + (index - 1) + count, ... up to last:
// worked out, never listed (a range may hold 2^64 seeds).
struct Shard {
  uint64_t index = 1;  // 1-based
  uint64_t count = 1;
  bool contains(const SeedRange& r, uint64_t seed) const { return (seed - r.first) % count == index - 1; }
  // How many seeds of `r` are this shard's (saturating at UINT64_MAX, which
  // only 0..2^64-1 in one shard reaches).
  uint64_t size(const SeedRange& r) const {
    const uint64_t span = r.last - r.first;  // count - 1, without overflow
    if (index - 1 > span) return 0;
    const uint64_t n = (span - (index - 1)) / count;
    return n == UINT64_MAX ? n : n + 1;
  }
  // The k-th seed of the shard, k < size(r).
  uint64_t seed(const SeedRange& r, uint64_t k) const { return r.first + (index - 1) + k * count; }
};

// Strict parsers; `option` names the option in the message ("--seeds").
// An unsigned decimal integer in [min, max], nothing else.
uint64_t parse_uint(const std::string& command, const std::string& option, const std::string& text,
                    uint64_t min, uint64_t max);
// "A..B" with A <= B, or a single "N" (N..N).
SeedRange parse_seeds(const std::string& command, const std::string& text);
// "I/N", 1 <= I <= N.
Shard parse_shard(const std::string& command, const std::string& text);
// Seconds with up to six decimals ("12", "12.5", "0.000001") → microseconds,
// exactly (no floating point).
int64_t parse_seconds_us(const std::string& command, const std::string& option, const std::string& text);
// One of `allowed`.
std::string parse_choice(const std::string& command, const std::string& option, const std::string& text,
                         const std::vector<std::string>& allowed);

// Files a command is about to write (option, path), checked before it runs
// anything: each must be creatable (its directory exists, it is not a
// directory), no two may be one file, and none may be one of `inputs`
// (what, path: "the scenario file", the sweep's results) — writing one would
// destroy or corrupt the other.
void check_outputs(const std::string& command, const std::vector<std::pair<std::string, std::string>>& outputs,
                   const std::vector<std::pair<std::string, std::string>>& inputs);

// A word as a POSIX shell would need it quoted to be passed as one argument.
std::string shell_quote(const std::string& word);

}  // namespace cli
