// The nemesis's random fault schedule (model/scenario/nemesis.h): determinism,
// the quiet window, undo for every fault, target expansion, durations, the
// Poisson arrivals, and a property over random specs that every schedule is
// valid when played out against a model of what each fault does.
#include "model/scenario/nemesis.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace scenario {
namespace {

// Three nodes with a ZooKeeper server and a broker each, a client host with
// two clients, and a nemesis.
std::string scenario_json(const std::string& nemesis, int duration_s = 1000, const std::string& environment = "{}") {
  return fmt::format(R"({{
  "name": "nemesis",
  "duration_s": {},
  "environment": {},
  "zookeeper": {{"properties": {{"tickTime": 2000, "initLimit": 5, "syncLimit": 2}}}},
  "hosts": [
    {{"name": "node1", "address": "10.0.0.1", "zookeeper": {{"id": 1}}, "brokers": [{{"id": 1}}]}},
    {{"name": "node2", "address": "10.0.0.2", "zookeeper": {{"id": 2}}, "brokers": [{{"id": 2}}]}},
    {{"name": "node3", "address": "10.0.0.3", "zookeeper": {{"id": 3}}, "brokers": [{{"id": 3}}]}},
    {{"name": "client", "address": "10.0.0.10", "clients": ["producer", "consumer"]}}
  ],
  "topics": [{{"name": "t", "partitions": 2, "replication_factor": 3}}],
  "workload": {{"type": "lab"}},
  "nemesis": {}
}})",
                     duration_s, environment, nemesis);
}

Scenario parse(const std::string& nemesis, int duration_s = 1000, const std::string& environment = "{}") {
  return parse_scenario("n.json", scenario_json(nemesis, duration_s, environment));
}

std::vector<Fault> draw(const Scenario& s, uint64_t seed) {
  return generate_nemesis(s, *s.nemesis, s.duration_us, sim::Rng(seed).fork("nemesis"));
}

std::string show(const std::vector<Fault>& faults) {
  std::string out;
  for (const Fault& f : faults) {
    out += fmt::format("{} {} {}", f.at_us, to_string(f.action), f.target);
    for (const auto& g : f.groups) out += " [" + fmt::format("{}", fmt::join(g, ",")) + "]";
    out += "\n";
  }
  return out;
}

bool is_undo(FaultAction a) {
  return a == FaultAction::start || a == FaultAction::resume || a == FaultAction::power_on ||
         a == FaultAction::heal;
}

// Plays the schedule against a model of what each fault does and returns
// what is wrong with it ("" when valid): every entry within
// [start, duration - quiet], fault starts before duration - quiet, sorted by
// time, no fault on a process that is down/paused or on a host that is off
// (or whose processes are faulted), no two network faults at once, every
// undo undoes exactly the fault it belongs to, everything healed at the end,
// durations within [min, max] unless clipped at duration - quiet, and every
// entry's path "$.nemesis".
std::string check_schedule(const Scenario& s, const NemesisSpec& spec, int64_t duration_us,
                           const std::vector<Fault>& faults) {
  const int64_t end = duration_us - spec.quiet_us;
  std::map<std::string, std::pair<FaultAction, int64_t>> process;  // faulted processes: kind, since
  std::map<std::string, int64_t> host_off;                         // host -> since
  bool network = false;  // a partition or isolate is on
  int64_t network_since = 0;
  int64_t last = spec.start_us;
  auto duration_ok = [&](int64_t since, int64_t now) {
    const int64_t d = now - since;
    return (d >= spec.min_duration_us || now == end) && d <= spec.max_duration_us;
  };
  for (size_t i = 0; i < faults.size(); ++i) {
    const Fault& f = faults[i];
    const std::string where = fmt::format("entry {} ({} {} at {})", i, to_string(f.action), f.target, f.at_us);
    if (f.path != "$.nemesis") return where + ": path " + f.path;
    if (f.at_us < last) return where + ": out of order or before start";
    last = f.at_us;
    if (f.at_us > end) return where + ": inside the quiet window";
    if (!is_undo(f.action) && f.at_us >= end) return where + ": a fault starting at the quiet window";
    switch (f.action) {
      case FaultAction::kill:
      case FaultAction::stop:
      case FaultAction::pause: {
        const HostSpec* h = s.host_of_process(f.target);
        if (h == nullptr) return where + ": not a process";
        if (process.count(f.target)) return where + ": the process is already faulted";
        if (host_off.count(h->name)) return where + ": its host is off";
        process[f.target] = {f.action, f.at_us};
        break;
      }
      case FaultAction::start:
      case FaultAction::resume: {
        auto it = process.find(f.target);
        if (it == process.end()) return where + ": undoes nothing";
        const FaultAction want = f.action == FaultAction::resume ? FaultAction::pause : it->second.first;
        if (it->second.first != want || (f.action == FaultAction::start && want == FaultAction::pause)) {
          return where + ": undoes the wrong fault";
        }
        if (!duration_ok(it->second.second, f.at_us)) return where + ": duration out of bounds";
        process.erase(it);
        break;
      }
      case FaultAction::power_off: {
        if (s.host(f.target) == nullptr) return where + ": not a host";
        if (host_off.count(f.target)) return where + ": already off";
        for (const auto& [p, _] : process) {
          if (s.host_of_process(p)->name == f.target) return where + ": a process on it is faulted (" + p + ")";
        }
        host_off[f.target] = f.at_us;
        break;
      }
      case FaultAction::power_on: {
        auto it = host_off.find(f.target);
        if (it == host_off.end()) return where + ": undoes nothing";
        if (!duration_ok(it->second, f.at_us)) return where + ": duration out of bounds";
        host_off.erase(it);
        break;
      }
      case FaultAction::isolate:
      case FaultAction::partition: {
        if (network) return where + ": another network fault is on";
        if (f.action == FaultAction::isolate && s.host(f.target) == nullptr) return where + ": not a host";
        if (f.action == FaultAction::partition) {
          if (f.groups.size() != 2 || f.groups[0].empty() || f.groups[1].empty()) return where + ": bad groups";
          std::set<std::string> seen;
          for (const auto& g : f.groups) {
            for (const std::string& h : g) {
              if (s.host(h) == nullptr || !seen.insert(h).second) return where + ": bad host " + h;
            }
          }
        }
        network = true;
        network_since = f.at_us;
        break;
      }
      case FaultAction::heal: {
        if (!network) {
          // Only the final heal may find nothing to heal.
          if (i + 1 != faults.size() || f.at_us != end) return where + ": heals nothing";
          break;
        }
        if (!duration_ok(network_since, f.at_us)) return where + ": duration out of bounds";
        network = false;
        break;
      }
      default:
        return where + ": not a nemesis action";
    }
  }
  if (!process.empty()) return "process " + process.begin()->first + " never undone";
  if (!host_off.empty()) return "host " + host_off.begin()->first + " never powered on";
  if (network) return "network never healed";
  return "";
}

const char* const kAllKinds =
    R"({"kinds": ["kill", "pause", "stop", "power_off", "partition", "isolate"],
        "targets": ["brokers", "zookeepers"], "start_s": 30, "mean_interval_s": 20,
        "min_duration_s": 5, "max_duration_s": 40, "quiet_s": 100})";

TEST(ScenarioNemesis, SameSeedSameSchedule) {
  const Scenario s = parse(kAllKinds);
  const std::vector<Fault> a = draw(s, 7);
  EXPECT_EQ(show(a), show(draw(s, 7)));
  EXPECT_GT(a.size(), 10u);
}

TEST(ScenarioNemesis, DifferentSeedsDiffer) {
  const Scenario s = parse(kAllKinds);
  EXPECT_NE(show(draw(s, 7)), show(draw(s, 8)));
  EXPECT_NE(show(draw(s, 1)), show(draw(s, 2)));
}

TEST(ScenarioNemesis, ScheduleIsValidAndTheQuietWindowIsQuiet) {
  const Scenario s = parse(kAllKinds);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const std::vector<Fault> f = draw(s, seed);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(check_schedule(s, *s.nemesis, s.duration_us, f), "") << "seed " << seed << "\n" << show(f);
    for (const Fault& x : f) {
      EXPECT_GE(x.at_us, 30'000'000);
      EXPECT_LE(x.at_us, 900'000'000);
      if (!is_undo(x.action)) {
        EXPECT_LT(x.at_us, 900'000'000);
      }
    }
  }
}

// The schedule checker itself catches a fault left undone, an overlap, a
// fault in the quiet window (it must be able to fail).
TEST(ScenarioNemesis, TheScheduleCheckerCatchesBrokenSchedules) {
  const Scenario s = parse(kAllKinds);
  const NemesisSpec& spec = *s.nemesis;
  auto fault = [](int64_t at, FaultAction a, std::string target) {
    Fault f;
    f.at_us = at;
    f.action = a;
    f.target = std::move(target);
    f.path = "$.nemesis";
    return f;
  };
  const int64_t d = s.duration_us;
  EXPECT_EQ(check_schedule(s, spec, d, {fault(40'000'000, FaultAction::kill, "kafka1"),
                                        fault(50'000'000, FaultAction::start, "kafka1")}),
            "");
  EXPECT_NE(check_schedule(s, spec, d, {fault(40'000'000, FaultAction::kill, "kafka1")}), "");
  EXPECT_NE(check_schedule(s, spec, d, {fault(40'000'000, FaultAction::kill, "kafka1"),
                                        fault(45'000'000, FaultAction::power_off, "node1"),
                                        fault(50'000'000, FaultAction::start, "kafka1"),
                                        fault(55'000'000, FaultAction::power_on, "node1")}),
            "");
  EXPECT_NE(check_schedule(s, spec, d, {fault(950'000'000, FaultAction::kill, "kafka1"),
                                        fault(960'000'000, FaultAction::start, "kafka1")}),
            "");
  EXPECT_NE(check_schedule(s, spec, d, {fault(40'000'000, FaultAction::kill, "kafka1"),
                                        fault(41'000'000, FaultAction::start, "kafka1")}),
            "");  // shorter than min_duration_s
}

TEST(ScenarioNemesis, EveryFaultHasItsUndo) {
  const Scenario s = parse(kAllKinds);
  const std::vector<Fault> f = draw(s, 3);
  std::map<FaultAction, int> count;
  for (const Fault& x : f) count[x.action]++;
  EXPECT_EQ(count[FaultAction::kill] + count[FaultAction::stop], count[FaultAction::start]);
  EXPECT_EQ(count[FaultAction::pause], count[FaultAction::resume]);
  EXPECT_EQ(count[FaultAction::power_off], count[FaultAction::power_on]);
  const int network = count[FaultAction::partition] + count[FaultAction::isolate];
  ASSERT_GT(network, 0);
  EXPECT_EQ(count[FaultAction::heal], network + 1);  // and the final heal
  EXPECT_EQ(f.back().action, FaultAction::heal);
  EXPECT_EQ(f.back().at_us, 900'000'000);
  // Each kind was drawn at least once over this run.
  for (FaultAction k : {FaultAction::kill, FaultAction::pause, FaultAction::stop, FaultAction::power_off,
                        FaultAction::partition, FaultAction::isolate}) {
    EXPECT_GT(count[k], 0) << to_string(k);
  }
  // Each undo follows its fault on the same target, for the process and host faults.
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i].action != FaultAction::kill && f[i].action != FaultAction::pause && f[i].action != FaultAction::stop &&
        f[i].action != FaultAction::power_off) {
      continue;
    }
    const FaultAction undo = nemesis_undo(f[i].action);
    size_t j = i + 1;
    while (j < f.size() && !(f[j].action == undo && f[j].target == f[i].target)) ++j;
    ASSERT_LT(j, f.size()) << "no undo for entry " << i;
    if (f[j].at_us != 900'000'000) {  // else clipped at the quiet window
      EXPECT_GE(f[j].at_us - f[i].at_us, 5'000'000);
    }
    EXPECT_LE(f[j].at_us - f[i].at_us, 40'000'000);
  }
  EXPECT_EQ(check_schedule(s, *s.nemesis, s.duration_us, f), "");
}

TEST(ScenarioNemesis, NoFinalHealWithoutNetworkFaults) {
  const Scenario s = parse(R"({"kinds": ["kill"], "targets": ["brokers"]})");
  for (const Fault& x : draw(s, 5)) EXPECT_NE(x.action, FaultAction::heal);
}

// Which names each kind targets, over many seeds.
std::set<std::string> targets_of(const std::string& nemesis, FaultAction kind) {
  const Scenario s = parse(nemesis, 5000);
  std::set<std::string> out;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    for (const Fault& f : draw(s, seed)) {
      if (f.action == kind) out.insert(f.target);
    }
  }
  return out;
}

TEST(ScenarioNemesis, TargetsExpand) {
  using Set = std::set<std::string>;
  EXPECT_EQ(targets_of(R"({"kinds": ["kill"], "targets": ["brokers"]})", FaultAction::kill),
            (Set{"kafka1", "kafka2", "kafka3"}));
  EXPECT_EQ(targets_of(R"({"kinds": ["pause"], "targets": ["zookeepers"]})", FaultAction::pause),
            (Set{"zk1", "zk2", "zk3"}));
  EXPECT_EQ(targets_of(R"({"kinds": ["stop"], "targets": ["clients"]})", FaultAction::stop),
            (Set{"producer", "consumer"}));
  // A host names the processes on it for a process kind...
  EXPECT_EQ(targets_of(R"({"kinds": ["kill"], "targets": ["node2"]})", FaultAction::kill),
            (Set{"zk2", "kafka2"}));
  // ... and a process its host for a host kind.
  EXPECT_EQ(targets_of(R"({"kinds": ["power_off"], "targets": ["kafka2", "zk3"]})", FaultAction::power_off),
            (Set{"node2", "node3"}));
  EXPECT_EQ(targets_of(R"({"kinds": ["isolate"], "targets": ["clients", "kafka1"]})", FaultAction::isolate),
            (Set{"client", "node1"}));
  EXPECT_EQ(targets_of(R"({"kinds": ["power_off"], "targets": ["brokers", "node1", "kafka1"]})",
                       FaultAction::power_off),
            (Set{"node1", "node2", "node3"}));
}

TEST(ScenarioNemesis, PartitionsSplitTheTargetsHostsInTwo) {
  const Scenario s = parse(R"({"kinds": ["partition"], "targets": ["brokers"]})", 5000);
  std::set<std::string> splits;
  for (const Fault& f : draw(s, 11)) {
    if (f.action != FaultAction::partition) continue;
    ASSERT_EQ(f.groups.size(), 2u);
    std::set<std::string> all;
    for (const auto& g : f.groups) {
      EXPECT_FALSE(g.empty());
      all.insert(g.begin(), g.end());
    }
    EXPECT_EQ(all, (std::set<std::string>{"node1", "node2", "node3"}));  // the client host is in neither
    splits.insert(fmt::format("{}|{}", fmt::join(f.groups[0], ","), fmt::join(f.groups[1], ",")));
  }
  EXPECT_EQ(splits.size(), 6u) << fmt::format("{}", fmt::join(splits, " "));  // every ordered split of 3 hosts
}

TEST(ScenarioNemesis, DurationsWithinBounds) {
  const Scenario s = parse(R"({"kinds": ["kill", "power_off"], "targets": ["brokers"],
                               "min_duration_s": 12, "max_duration_s": 17, "mean_interval_s": 10, "quiet_s": 50})",
                           3000);
  const std::vector<Fault> f = draw(s, 9);
  int checked = 0, clipped = 0;
  int64_t shortest = INT64_MAX, longest = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (is_undo(f[i].action)) continue;
    const FaultAction undo = nemesis_undo(f[i].action);
    size_t j = i + 1;
    while (j < f.size() && !(f[j].action == undo && f[j].target == f[i].target)) ++j;
    ASSERT_LT(j, f.size());
    const int64_t d = f[j].at_us - f[i].at_us;
    if (f[j].at_us == 2'950'000'000) {
      ++clipped;
      EXPECT_LE(d, 17'000'000);
      continue;
    }
    EXPECT_GE(d, 12'000'000);
    EXPECT_LE(d, 17'000'000);
    shortest = std::min(shortest, d);
    longest = std::max(longest, d);
    ++checked;
  }
  EXPECT_GT(checked, 50);
  EXPECT_LE(clipped, 1);
  // Uniform over the range: both ends are approached.
  EXPECT_LT(shortest, 13'000'000);
  EXPECT_GT(longest, 16'000'000);
}

// With zero-length faults nothing is ever skipped, so the starts are the
// Poisson process itself: the mean gap of 10000 gaps is within 5% of the
// mean (the standard error is 1%).
TEST(ScenarioNemesis, MeanGapIsTheMeanInterval) {
  const int duration_s = 30 * 10'000 + 30 + 60;
  const Scenario s = parse(R"({"kinds": ["kill"], "targets": ["brokers"], "start_s": 30,
                               "min_duration_s": 0, "max_duration_s": 0})",
                           duration_s);
  const std::vector<Fault> f = draw(s, 20261202);
  std::vector<int64_t> starts;
  for (const Fault& x : f) {
    if (x.action == FaultAction::kill) starts.push_back(x.at_us);
  }
  ASSERT_GT(starts.size(), 9000u);
  ASSERT_LT(starts.size(), 11000u);
  const double mean = static_cast<double>(starts.back() - 30'000'000) / static_cast<double>(starts.size());
  EXPECT_NEAR(mean, 30e6, 1.5e6);
  // Exponential: about e^-1 of the gaps are longer than the mean.
  size_t longer = 0;
  for (size_t i = 1; i < starts.size(); ++i) longer += starts[i] - starts[i - 1] > 30'000'000 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(longer) / static_cast<double>(starts.size() - 1), 0.3679, 0.03);
}

TEST(ScenarioNemesis, OverlapsAreSkipped) {
  // One target, faults every 10 s on average lasting 30–40 s: most draws
  // fall on a target still faulted and are skipped.
  const Scenario s = parse(R"({"kinds": ["kill"], "targets": ["kafka1"], "mean_interval_s": 10,
                               "min_duration_s": 30, "max_duration_s": 40, "quiet_s": 60})",
                           2000);
  const std::vector<Fault> f = draw(s, 4);
  EXPECT_EQ(check_schedule(s, *s.nemesis, s.duration_us, f), "");
  // Without skipping there would be ~194 faults; at most one per 30 s fits.
  const size_t kills = static_cast<size_t>(std::count_if(
      f.begin(), f.end(), [](const Fault& x) { return x.action == FaultAction::kill; }));
  EXPECT_GT(kills, 20u);
  EXPECT_LE(kills, 1940u / 30u + 1);
}

// After power_on a host's processes boot for the environment's boot delay;
// no process fault lands on them before they run again.
TEST(ScenarioNemesis, NoProcessFaultWhileAHostBoots) {
  const Scenario s = parse(R"({"kinds": ["kill", "pause", "power_off"], "targets": ["node1"],
                               "mean_interval_s": 5, "min_duration_s": 5, "max_duration_s": 10})",
                           5000, R"({"boot_delay_s": 20})");
  const std::vector<Fault> f = draw(s, 6);
  ASSERT_EQ(s.environment.boot_delay_us, 20'000'000);
  EXPECT_EQ(check_schedule(s, *s.nemesis, s.duration_us, f), "");
  int64_t booted_at = -1;
  int power_ons = 0, process_faults = 0;
  for (const Fault& x : f) {
    if (x.action == FaultAction::power_on) {
      booted_at = x.at_us + 20'000'000;
      ++power_ons;
    }
    if (x.action == FaultAction::kill || x.action == FaultAction::pause) {
      ++process_faults;
      EXPECT_GE(x.at_us, booted_at) << to_string(x.action) << " " << x.target << " at " << x.at_us;
    }
  }
  EXPECT_GT(power_ons, 10);
  EXPECT_GT(process_faults, 10);
}

std::string error_of(const std::string& nemesis, const std::string& hosts_json = "") {
  try {
    Scenario s = hosts_json.empty() ? parse(nemesis) : parse_scenario("n.json", hosts_json);
    (void)draw(s, 1);
  } catch (const InputError& e) {
    return e.path() + ": " + e.message();
  }
  return "(no error)";
}

TEST(ScenarioNemesis, KindsWithoutCandidatesAreErrors) {
  EXPECT_EQ(error_of(R"({"kinds": ["partition"], "targets": ["kafka1", "node1"]})"),
            "$.nemesis.targets: the nemesis kind \"partition\" splits the targets' hosts into two groups, "
            "and the targets [\"kafka1\", \"node1\"] are on 1 host; it needs at least two");
  // A scenario without clients: "clients" names nothing.
  const std::string no_clients = R"({
    "duration_s": 1000,
    "hosts": [{"name": "node1", "address": "10.0.0.1", "zookeeper": {"id": 1}, "brokers": [{"id": 1}]}],
    "topics": [{"name": "t"}],
    "workload": {"type": "lab", "producer": "", "consumer": ""},
    "nemesis": {"kinds": ["power_off"], "targets": ["clients"]}
  })";
  EXPECT_EQ(error_of("", no_clients),
            "$.nemesis.targets: the nemesis kind \"power_off\" needs a host to target, and the targets "
            "[\"clients\"] name none (add a host name, or \"brokers\" / \"zookeepers\")");
  EXPECT_EQ(error_of(R"({"kinds": ["partition", "kill"], "targets": ["brokers"]})"), "(no error)");
}

// --- the property ------------------------------------------------------------------------

RC_GTEST_PROP(ScenarioNemesis, EveryScheduleIsValid, ()) {
  static const Scenario s = parse(R"({"kinds": ["kill"], "targets": ["brokers"]})", 100000);
  const std::vector<FaultAction> all_kinds = {FaultAction::kill,      FaultAction::pause,     FaultAction::stop,
                                              FaultAction::power_off, FaultAction::partition, FaultAction::isolate};
  const std::vector<std::string> all_targets = {"brokers", "zookeepers", "clients", "node1", "node2",
                                                "client",  "kafka3",     "zk1",     "producer"};
  NemesisSpec spec;
  const auto kinds = *rc::gen::inRange<uint32_t>(1, 1u << all_kinds.size());
  for (size_t i = 0; i < all_kinds.size(); ++i) {
    if (kinds & (1u << i)) spec.kinds.push_back(all_kinds[i]);
  }
  const auto targets = *rc::gen::inRange<uint32_t>(1, 1u << all_targets.size());
  for (size_t i = 0; i < all_targets.size(); ++i) {
    if (targets & (1u << i)) spec.targets.push_back(all_targets[i]);
  }
  const int64_t duration = *rc::gen::inRange<int64_t>(10'000'000, 5'000'000'000);
  spec.start_us = *rc::gen::inRange<int64_t>(0, duration / 2);
  spec.quiet_us = *rc::gen::inRange<int64_t>(0, duration - spec.start_us - 1);
  spec.mean_interval_us = *rc::gen::inRange<int64_t>(100'000, 200'000'000);
  spec.min_duration_us = *rc::gen::inRange<int64_t>(0, 100'000'000);
  spec.max_duration_us = *rc::gen::inRange<int64_t>(spec.min_duration_us, 200'000'000);
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();

  std::vector<Fault> f;
  try {
    f = generate_nemesis(s, spec, duration, sim::Rng(seed));
  } catch (const InputError& e) {
    // Only a partition over the hosts of one target list entry (one host) has no candidates here.
    RC_ASSERT(e.path() == "$.nemesis.targets");
    RC_ASSERT(std::find(spec.kinds.begin(), spec.kinds.end(), FaultAction::partition) != spec.kinds.end());
    return;
  }
  RC_ASSERT(check_schedule(s, spec, duration, f) == std::string());
  // And again: the same inputs give the same schedule.
  RC_ASSERT(show(generate_nemesis(s, spec, duration, sim::Rng(seed))) == show(f));
  RC_TAG(f.empty() ? "empty" : f.size() < 10 ? "short" : "long");
}

}  // namespace
}  // namespace scenario
