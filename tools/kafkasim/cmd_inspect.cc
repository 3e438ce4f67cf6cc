// `kafkasim describe SCENARIO --seed N --at T` and
// `kafkasim zk SCENARIO --seed N --at T [PATH] [--get]`: run to virtual time
// T and look at the cluster the way an operator would.
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/scenario/run.h"
#include "model/scenario/scenario.h"
#include "sim/assert.h"
#include "tools/kafkasim/args.h"
#include "tools/kafkasim/commands.h"
#include "tools/kafkasim/results.h"

namespace cli {

namespace {

// The scenario lives on the heap: the Run may keep a reference to it, and a
// Stopped is moved around.
struct Stopped {
  std::unique_ptr<scenario::Scenario> scenario;
  std::unique_ptr<scenario::Run> run;
  uint64_t seed = 0;
  int64_t at_us = 0;
};

// Loads the scenario and runs it to --at; an invariant break on the way is
// reported (seed, time, reproducer) as exit 3 by returning nullopt.
std::optional<Stopped> run_to(const Args& a) {
  const std::string& file = a.positionals()[0];
  if (!a.value("at")) a.fail("missing --at T (virtual seconds)");
  int64_t at_us = parse_seconds_us(a.command(), "--at", *a.value("at"));
  uint64_t seed_arg = 0;
  if (auto v = a.value("seed")) {
    seed_arg = parse_uint(a.command(), "--seed", *v, 0, std::numeric_limits<uint64_t>::max());
  }
  Stopped st;
  st.scenario = std::make_unique<scenario::Scenario>(scenario::load_scenario(file));
  st.seed = a.value("seed") ? seed_arg : st.scenario->seed;
  st.at_us = at_us;
  if (at_us > st.scenario->duration_us) {
    throw BadInput(fmt::format("--at {}: after the end of {} (duration_s {})", *a.value("at"), file,
                               scenario::format_seconds(st.scenario->duration_us)));
  }
  try {
    st.run = std::make_unique<scenario::Run>(*st.scenario, st.seed);
    st.run->run_until(at_us);
  } catch (const sim::InvariantViolation& e) {
    std::fprintf(stderr,
                 "INVARIANT BROKEN (a kafkasim bug) before %ss: %s (%s:%d)\n  seed       %llu\n  reproduce: %s\n",
                 scenario::format_seconds(at_us).c_str(), e.message().c_str(), e.file(), e.line(),
                 static_cast<unsigned long long>(st.seed), reproducer(file, st.seed).c_str());
    return std::nullopt;
  }
  return st;
}

std::vector<OptionSpec> inspect_options(bool zk) {
  std::vector<OptionSpec> spec = {{.name = "seed", .takes_value = true, .repeatable = false},
                                  {.name = "at", .takes_value = true, .repeatable = false},
                                  {.name = "help", .takes_value = false, .repeatable = false}};
  if (zk) spec.push_back({.name = "get", .takes_value = false, .repeatable = false});
  return spec;
}

}  // namespace

int cmd_describe(const std::vector<std::string>& argv) {
  Args a("describe", argv, inspect_options(false));
  if (a.flag("help")) {
    std::fputs(usage("describe").c_str(), stdout);
    return 0;
  }
  a.expect_positionals(1, 1, "SCENARIO");
  std::optional<Stopped> st = run_to(a);
  if (!st) return scenario::kExitInvariant;
  // The topics are read from ZooKeeper, as kafka-topics.sh --zookeeper would.
  if (!st->run->zk_tree("/")) {
    throw BadInput(fmt::format("describe: no ZooKeeper server running at {}s to read the topics from",
                               scenario::format_seconds(st->at_us)));
  }
  const std::string text = st->run->describe();
  if (text.empty()) {
    std::fprintf(stderr, "kafkasim describe: no topics at %ss\n", scenario::format_seconds(st->at_us).c_str());
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

namespace {

// ZooKeeper's PathUtils.validatePath, for what a user types: absolute, no
// empty element (no "//", no trailing '/' but for the root), no "." or "..".
std::optional<std::string> bad_zk_path(const std::string& path) {
  if (path.empty() || path[0] != '/') return "it must start with '/'";
  if (path == "/") return std::nullopt;
  if (path.back() == '/') return "it must not end with '/'";
  size_t start = 1;
  for (;;) {
    const size_t end = path.find('/', start);
    const std::string element = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (element.empty()) return "it has an empty element ('//')";
    if (element == "." || element == "..") return fmt::format("it has a relative element '{}'", element);
    if (end == std::string::npos) return std::nullopt;
    start = end + 1;
  }
}

}  // namespace

int cmd_zk(const std::vector<std::string>& argv) {
  Args a("zk", argv, inspect_options(true));
  if (a.flag("help")) {
    std::fputs(usage("zk").c_str(), stdout);
    return 0;
  }
  a.expect_positionals(1, 2, "SCENARIO");
  std::string path = a.positionals().size() > 1 ? a.positionals()[1] : "/";
  if (const std::optional<std::string> why = bad_zk_path(path)) {
    a.fail(fmt::format("PATH '{}' is not a ZooKeeper path: {}", path, *why));
  }
  std::optional<Stopped> st = run_to(a);
  if (!st) return scenario::kExitInvariant;
  std::optional<std::string> text = a.flag("get") ? st->run->zk_get(path) : st->run->zk_tree(path);
  if (!text) {
    if (!st->run->zk_tree("/")) {
      throw BadInput(fmt::format("zk: no ZooKeeper server running at {}s", scenario::format_seconds(st->at_us)));
    }
    throw BadInput(fmt::format("zk: {}: no such node at {}s", path, scenario::format_seconds(st->at_us)));
  }
  std::fputs(text->c_str(), stdout);
  if (!text->empty() && text->back() != '\n') std::fputs("\n", stdout);
  return 0;
}

}  // namespace cli
