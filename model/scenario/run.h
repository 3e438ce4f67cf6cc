// Runs a scenario for one seed: builds the world the file describes, creates
// its topics through the controller the way `kafka-topics.sh --create` would,
// starts the workload's clients, applies the fault schedule (and the nemesis
// drawn from the seed) at their virtual times, and at the end reads the
// brokers' logs, runs every checker and evaluates the expectations.
//
//   scenario::Scenario s = scenario::load_scenario("scenarios/seeds/000_....json");
//   scenario::RunResult r = scenario::run_scenario(s, 7);
//   r.exit_code();   // 0 held, 1 an expectation failed, 2 bad input, 3 model bug
//   r.verdict;       // the document expectations are evaluated against
//
// Everything in a RunResult is a function of (scenario, seed): two runs give
// the same trace hash, verdict and timeline, byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/check/history.h"
#include "model/kafka/types.h"
#include "model/scenario/expect.h"
#include "model/scenario/scenario.h"
#include "sim/world.h"

namespace scenario {

// Exit codes of the command line; RunResult::exit_code gives one of them.
inline constexpr int kExitHeld = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInvariant = 3;

struct TimelineEntry {
  int64_t time_us = 0;
  std::string text;  // "power_off node1", "controller is now broker 2 (epoch 3)"
};

struct ExpectationOutcome {
  std::string text;  // as written in the file
  Expectation::Result::Outcome result = Expectation::Result::Outcome::held;
  std::string detail;  // for failed/error: what the operands were, or why it is an error
};

struct InvariantBreak {
  int64_t time_us = 0;
  std::string message;
  std::string where;  // file:line of the assertion
};

struct RunResult {
  uint64_t seed = 0;
  std::string scenario;       // the scenario's name
  std::string scenario_hash;  // Scenario::hash
  uint64_t trace_hash = 0;
  uint64_t trace_records = 0;
  uint64_t events = 0;           // events the loop ran
  int64_t end_time_us = 0;       // virtual time the run reached
  std::vector<TimelineEntry> timeline;
  // The verdict document (docs/scenario-format.md, "The verdict"); null
  // when the run broke an invariant before it finished.
  nlohmann::json verdict;
  std::vector<ExpectationOutcome> expectations;
  std::optional<InvariantBreak> invariant;

  // kExitInvariant when an invariant broke; else kExitBadInput when an
  // expectation was an error (names a field the verdict does not have);
  // else kExitFailed when one failed; else kExitHeld.
  int exit_code() const;
  // One JSON object (a line of a sweep's output): seed, scenario, hash,
  // exit code, expectation outcomes, the verdict's headline numbers.
  nlohmann::json to_json() const;
};

struct RunOptions {
  // Where to write the trace as JSON lines (`--trace`); null: nowhere.
  std::ostream* trace_json = nullptr;
  // Keeps the history, for `--history`.
  check::History* history_out = nullptr;
  // kafka::Invariants::check() after every event (a break ends the run with
  // exit code 3). Off only to measure what the checks cost (tools/bench).
  bool check_invariants = true;
};

// A copy of `s` with configuration keys overridden as if written in the file
// (`explore --grid`): a Kafka broker key ("min.insync.replicas") goes to every
// broker, a producer or consumer key ("acks") to the clients, "producer." /
// "consumer." prefixes to one side only, "zookeeper." + a zoo.cfg key to
// every ZooKeeper server. The file is re-read with the real parsers, so an
// unknown key or a bad value is an InputError naming "--grid" and the key.
// `source` names the overrides in messages ("--grid", "--set").
Scenario with_overrides(const Scenario& s, const std::map<std::string, std::string>& overrides,
                        const std::string& source = "--grid");

// A run in progress, for commands that stop at a virtual time and look
// (`describe`, `zk`) as well as for run_scenario.
class Run {
 public:
  Run(const Scenario& s, uint64_t seed, RunOptions options = {});
  ~Run();
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  // Runs to virtual time `t_us` (at most the scenario's duration), applying
  // faults on the way. Throws sim::InvariantViolation on a model bug.
  void run_until(int64_t t_us);
  // Runs to the end, checks and evaluates; never throws for an invariant
  // break (it is reported in the result).
  RunResult finish();

  sim::World& world();
  const Scenario& scenario() const;
  const std::map<kafka::BrokerId, sim::ProcessId>& brokers() const;
  const std::map<int32_t, sim::ProcessId>& zookeepers() const;

  // `kafka-topics.sh --describe` as of now, from the freshest ZooKeeper
  // state (topics sorted by name):
  //   Topic: t	PartitionCount: 2	ReplicationFactor: 3	Configs: ...
  //   	Topic: t	Partition: 0	Leader: 1	Replicas: 1,2,3	Isr: 1,2
  std::string describe() const;
  // A ZooKeeper shell's view of the server with the highest committed zxid
  // among the running ones: `tree` lists the paths under `path` (itself
  // first), one full path per line (zkCli's `ls -R`); `get` prints the data and the
  // stat. nullopt when no server runs or the path does not exist.
  std::optional<std::string> zk_tree(const std::string& path) const;
  std::optional<std::string> zk_get(const std::string& path) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The whole run; same as Run(s, seed, options).finish().
RunResult run_scenario(const Scenario& s, uint64_t seed, const RunOptions& options = {});

// "1.5" -> 1500000 etc. for messages: virtual microseconds as seconds with
// up to six decimals and no trailing zeros.
std::string format_seconds(int64_t us);

}  // namespace scenario
