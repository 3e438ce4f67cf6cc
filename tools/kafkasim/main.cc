// kafkasim — the command line (docs/cli.md).
//
// Exit codes (DESIGN.md, "The command line"): 0 every expectation held; 1 an
// expectation failed; 2 bad input or usage; 3 the model broke one of its own
// invariants (a kafkasim bug); 130 a sweep interrupted by SIGINT/SIGTERM.
// Any exception that is not bad input is a kafkasim bug too: it is reported
// and exits 3, never escapes as a crash.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/scenario/json_input.h"
#include "model/scenario/run.h"
#include "sim/assert.h"
#include "tools/kafkasim/args.h"
#include "tools/kafkasim/commands.h"

// KAFKASIM_COMMIT, written at build time (tools/kafkasim/commit_stamp.cmake).
#include "commit_stamp.h"

namespace cli {

const char* build_commit() { return KAFKASIM_COMMIT; }

std::string usage(const std::string& command) {
  static const std::map<std::string, std::string> texts = {
      {"run",
       "usage: kafkasim run SCENARIO [--seed N] [--trace FILE] [--history FILE] [--format text|json]\n"
       "  Runs one seed (default: the scenario's \"seed\") and prints the seed, scenario hash and\n"
       "  build commit, the timeline, the verdict and each expectation with PASS/FAIL/ERROR.\n"
       "  --trace FILE     write the trace as JSON lines\n"
       "  --history FILE   write the clients' history as JSON lines\n"
       "  --format json    one JSON document instead of text\n"},
      {"sweep",
       "usage: kafkasim sweep SCENARIO --seeds A..B [--jobs N] [--shard I/N] [--out DIR] [--resume]\n"
       "                      [--junit FILE]\n"
       "  Runs seeds A..B (inclusive) in parallel; one JSON line per seed goes to\n"
       "  DIR/results.jsonl (default DIR: sweep-<scenario stem>) as it finishes; ends with the\n"
       "  verdict table and a reproducer for each distinct failure.\n"
       "  --jobs N         simulations at a time (default 2)\n"
       "  --shard I/N      only the seeds with (seed - A) % N == I - 1\n"
       "  --resume         continue DIR/results.jsonl, skipping the seeds it holds\n"
       "  --junit FILE     a JUnit XML report, one testcase per seed\n"},
      {"merge",
       "usage: kafkasim merge DIR... [--junit FILE]\n"
       "  Combines the results.jsonl of sweeps (shards) of one scenario and prints the verdict\n"
       "  table, the same whatever the shard count.\n"},
      {"explore",
       "usage: kafkasim explore SCENARIO --grid KEY=V1,V2 [--grid ...] --seeds A..B [--jobs N]\n"
       "                        [--stall-bound S] [--stall-metric PATH] [--format text|csv|json]\n"
       "  For each combination of the grid's values, runs the seeds with those configuration\n"
       "  overrides and reports the share of seeds that lost data, duplicated, or stalled\n"
       "  longer than S seconds (default 20), each with a 95% Wilson interval. The stall is\n"
       "  the verdict's PATH (default max_stall_s; e.g. phases.rolling.max_stall_s).\n"},
      {"fuzz",
       "usage: kafkasim fuzz [--property NAME] [--runs N] [--seed S] [--out DIR] [--set KEY=VALUE ...]\n"
       "                     [--faults KIND,...] [--brokers A..B] [--zookeepers A..B] [--max-faults N]\n"
       "                     [--group-members A..B] [--version V] [--reproduce STRING] [--quiet]\n"
       "  Generates cluster shapes, configurations and fault schedules, runs each as a scenario\n"
       "  and checks a property: safety, determinism, durability or liveness (default: each in\n"
       "  turn). A failure is shrunk to a smallest schedule and written to DIR (default\n"
       "  fuzz-out) as a scenario file; exit 1 when a property failed.\n"
       "  --runs N          cases per property (default 100)\n"
       "  --seed S          rapidcheck's seed and each run's simulation seed (default 1)\n"
       "  --set KEY=VALUE   pin a configuration key in every case (as explore's --grid keys)\n"
       "  --faults K,...    the fault kinds to draw: kill, stop, pause, power_off, isolate, halves,\n"
       "                    one_way, bridge, majority_ring, replace_address\n"
       "  --brokers A..B, --zookeepers A..B, --max-faults N   the shapes and schedule sizes\n"
       "  --group-members A..B  consumers in one group, running through the faults (default\n"
       "                    0..3: half the cases have none, a consumer reading after the faults)\n"
       "  --reproduce STR   replay one failure from its reproduce string\n"},
      {"describe",
       "usage: kafkasim describe SCENARIO [--seed N] --at T\n"
       "  The topics as `kafka-topics.sh --describe` prints them, at virtual time T seconds\n"
       "  (seed N, default the scenario's \"seed\").\n"},
      {"zk",
       "usage: kafkasim zk SCENARIO [--seed N] --at T [PATH] [--get]\n"
       "  The ZooKeeper tree under PATH (default /) at virtual time T seconds, or with --get the\n"
       "  data and stat of PATH.\n"},
  };
  if (auto it = texts.find(command); it != texts.end()) return it->second;
  std::string all =
      "usage: kafkasim COMMAND [ARGS...]\n"
      "  A deterministic simulator of an Apache Kafka cluster in ZooKeeper mode.\n"
      "\ncommands:\n"
      "  run       one seed of a scenario: timeline, verdict, expectations\n"
      "  sweep     many seeds in parallel, a verdict table (resumable, shardable)\n"
      "  merge     combine the results of sweep shards\n"
      "  explore   a what-if table over a grid of configuration values\n"
      "  fuzz      search for the smallest fault schedule that breaks a property\n"
      "  describe  the topics at a virtual time (kafka-topics.sh --describe)\n"
      "  zk        the ZooKeeper tree at a virtual time (tree / get)\n"
      "  help      this text; `kafkasim COMMAND --help` for a command\n"
      "\nexit codes: 0 every expectation held, 1 an expectation failed, 2 bad input or usage,\n"
      "            3 an internal invariant broke (a kafkasim bug), 130 interrupted\n"
      "\nsee docs/cli.md\n";
  return all;
}

namespace {

using Command = int (*)(const std::vector<std::string>&);

int dispatch(const std::vector<std::string>& argv) {
  static const std::map<std::string, Command> commands = {
      {"run", cmd_run},         {"sweep", cmd_sweep},       {"merge", cmd_merge},
      {"explore", cmd_explore}, {"describe", cmd_describe}, {"zk", cmd_zk},
      {"fuzz", cmd_fuzz},
  };
  if (argv.empty()) {
    std::fputs(usage("").c_str(), stderr);
    return scenario::kExitBadInput;
  }
  const std::string& name = argv[0];
  if (name == "help" || name == "--help" || name == "-h") {
    if (argv.size() > 2) throw UsageError("", fmt::format("unexpected '{}' after 'help {}'", argv[2], argv[1]));
    if (argv.size() == 2 && !commands.contains(argv[1])) {
      throw UsageError("", fmt::format("unknown command '{}'", argv[1]));
    }
    std::fputs(usage(argv.size() == 2 ? argv[1] : "").c_str(), stdout);
    return 0;
  }
  if (name == "--version") {
    if (argv.size() > 1) throw UsageError("", fmt::format("unexpected '{}' after --version", argv[1]));
    std::printf("kafkasim %s\n", build_commit());
    return 0;
  }
  auto it = commands.find(name);
  if (it == commands.end()) {
    throw UsageError("", fmt::format("unknown command '{}'", name));
  }
  std::vector<std::string> rest(argv.begin() + 1, argv.end());
  return it->second(rest);
}

}  // namespace

}  // namespace cli

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const int code = cli::dispatch(args);
    // Output that did not reach its file (a full disk, /dev/full, a closed
    // pipe) is not a success: what was printed is incomplete.
    errno = 0;
    const bool flush_failed = std::fflush(stdout) != 0;
    if (flush_failed || std::ferror(stdout) != 0) {
      // A failure of this flush has its errno; an earlier one (a command
      // flushes as it goes) left only the stream's error flag.
      std::fprintf(stderr, "kafkasim: writing the standard output failed%s%s\n", flush_failed ? ": " : "",
                   flush_failed ? std::strerror(errno) : "");
      return code == 0 ? scenario::kExitBadInput : code;
    }
    return code;
  } catch (const cli::UsageError& e) {
    std::string prefix = e.command().empty() ? "kafkasim" : "kafkasim " + e.command();
    std::fprintf(stderr, "%s: %s\n\n%s", prefix.c_str(), e.what(), cli::usage(e.command()).c_str());
    return scenario::kExitBadInput;
  } catch (const cli::BadInput& e) {
    std::fprintf(stderr, "kafkasim: %s\n", e.what());
    return scenario::kExitBadInput;
  } catch (const scenario::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return scenario::kExitBadInput;
  } catch (const sim::InvariantViolation& e) {
    std::fprintf(stderr, "kafkasim: invariant broken: %s (%s:%d)\n", e.message().c_str(), e.file(), e.line());
    return scenario::kExitInvariant;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kafkasim: internal error (a kafkasim bug): %s\n", e.what());
    return scenario::kExitInvariant;
  }
}
