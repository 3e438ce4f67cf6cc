// The nemesis's random fault schedule (nemesis.h explains what is drawn).
#include "model/scenario/nemesis.h"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "model/scenario/json_input.h"
#include "sim/assert.h"

namespace scenario {

FaultAction nemesis_undo(FaultAction kind) {
  switch (kind) {
    case FaultAction::kill:
    case FaultAction::stop:
      return FaultAction::start;
    case FaultAction::pause:
      return FaultAction::resume;
    case FaultAction::power_off:
      return FaultAction::power_on;
    case FaultAction::partition:
    case FaultAction::isolate:
      return FaultAction::heal;
    default:
      break;
  }
  SIM_ASSERT(false, "not a nemesis fault kind");
  return FaultAction::heal;
}

namespace {

bool is_process_kind(FaultAction a) {
  return a == FaultAction::kill || a == FaultAction::stop || a == FaultAction::pause;
}

// Appends `name` unless it is there already (first appearance wins).
void add_unique(std::vector<std::string>& v, const std::string& name) {
  if (std::find(v.begin(), v.end(), name) == v.end()) v.push_back(name);
}

// The processes on a host, in the scenario's order: ZooKeeper servers, brokers, clients.
std::vector<std::string> processes_on(const Scenario& s, const std::string& host) {
  std::vector<std::string> out;
  for (const ZooKeeperSpec& z : s.zookeepers) {
    if (z.host == host) out.push_back(fmt::format("zk{}", z.id));
  }
  for (const BrokerSpec& b : s.brokers) {
    if (b.host == host) out.push_back(fmt::format("kafka{}", b.id));
  }
  for (const ClientSpec& c : s.clients) {
    if (c.host == host) out.push_back(c.name);
  }
  return out;
}

struct Candidates {
  std::vector<std::string> processes;
  std::vector<std::string> hosts;
};

Candidates expand(const Scenario& s, const NemesisSpec& spec) {
  std::vector<std::string> names;  // processes and hosts, groups expanded
  for (const std::string& t : spec.targets) {
    if (t == "brokers") {
      for (const BrokerSpec& b : s.brokers) add_unique(names, fmt::format("kafka{}", b.id));
    } else if (t == "zookeepers") {
      for (const ZooKeeperSpec& z : s.zookeepers) add_unique(names, fmt::format("zk{}", z.id));
    } else if (t == "clients") {
      for (const ClientSpec& c : s.clients) add_unique(names, c.name);
    } else {
      add_unique(names, t);
    }
  }
  Candidates out;
  for (const std::string& n : names) {
    if (const HostSpec* h = s.host_of_process(n)) {
      add_unique(out.processes, n);
      add_unique(out.hosts, h->name);
    } else if (s.host(n) != nullptr) {
      for (const std::string& p : processes_on(s, n)) add_unique(out.processes, p);
      add_unique(out.hosts, n);
    } else {
      // The reader checks every target; a name that is neither is a caller's mistake.
      throw InputError(s.file, "$.nemesis.targets",
                       fmt::format("\"{}\" is neither a host nor a process of the scenario", n));
    }
  }
  return out;
}

std::string describe_targets(const NemesisSpec& spec) {
  std::string out;
  for (const std::string& t : spec.targets) out += (out.empty() ? "\"" : ", \"") + t + "\"";
  return "[" + out + "]";
}

}  // namespace

std::vector<Fault> generate_nemesis(const Scenario& s, const NemesisSpec& spec, int64_t duration_us,
                                    sim::Rng rng) {
  const Candidates c = expand(s, spec);
  for (FaultAction k : spec.kinds) {
    if (is_process_kind(k) && c.processes.empty()) {
      throw InputError(s.file, "$.nemesis.targets",
                       fmt::format("the nemesis kind \"{}\" needs a process to target, and the targets {} "
                                   "name none (add \"brokers\", \"zookeepers\" or a process name)",
                                   to_string(k), describe_targets(spec)));
    }
    if ((k == FaultAction::power_off || k == FaultAction::isolate) && c.hosts.empty()) {
      throw InputError(s.file, "$.nemesis.targets",
                       fmt::format("the nemesis kind \"{}\" needs a host to target, and the targets {} "
                                   "name none (add a host name, or \"brokers\" / \"zookeepers\")",
                                   to_string(k), describe_targets(spec)));
    }
    if (k == FaultAction::partition && c.hosts.size() < 2) {
      throw InputError(s.file, "$.nemesis.targets",
                       fmt::format("the nemesis kind \"partition\" splits the targets' hosts into two groups, "
                                   "and the targets {} are on {} host{}; it needs at least two",
                                   describe_targets(spec), c.hosts.size(), c.hosts.size() == 1 ? "" : "s"));
    }
  }
  SIM_ASSERT(!spec.kinds.empty(), "a nemesis without kinds");
  SIM_ASSERT(spec.min_duration_us >= 0 && spec.min_duration_us <= spec.max_duration_us,
             "nemesis durations out of order");
  SIM_ASSERT(spec.mean_interval_us > 0, "nemesis mean interval must be positive");

  const int64_t end = duration_us - spec.quiet_us;
  sim::Rng times = rng.fork("times");
  sim::Rng draws = rng.fork("faults");

  std::vector<Fault> out;
  // What each fault holds, and until when: "process:<name>", "host:<name>", "network".
  std::map<std::string, int64_t> busy_until;
  bool network_fault = false;

  int64_t t = spec.start_us;
  while (true) {
    t += times.exponential(sim::Duration::micros(spec.mean_interval_us)).us();
    if (t >= end) break;
    const FaultAction kind = draws.pick(spec.kinds);
    Fault f;
    f.at_us = t;
    f.action = kind;
    f.path = "$.nemesis";
    std::vector<std::string> locks;
    std::vector<std::string> booting;  // power_off: its processes, busy until they have booted again
    if (is_process_kind(kind)) {
      f.target = draws.pick(c.processes);
      locks.push_back("process:" + f.target);
    } else if (kind == FaultAction::power_off) {
      f.target = draws.pick(c.hosts);
      locks.push_back("host:" + f.target);
      for (const std::string& p : processes_on(s, f.target)) booting.push_back("process:" + p);
    } else if (kind == FaultAction::isolate) {
      f.target = draws.pick(c.hosts);
      locks.push_back("network");
    } else {
      SIM_ASSERT(kind == FaultAction::partition, "not a nemesis fault kind");
      std::vector<std::string> hosts = c.hosts;
      draws.shuffle(hosts);
      const int64_t cut = draws.uniform(int64_t{1}, static_cast<int64_t>(hosts.size()) - 1);
      std::vector<std::string> a(hosts.begin(), hosts.begin() + cut);
      std::vector<std::string> b(hosts.begin() + cut, hosts.end());
      // Each side in the order of the target list, for readable timelines.
      auto by_candidate_order = [&c](const std::string& x, const std::string& y) {
        return std::find(c.hosts.begin(), c.hosts.end(), x) < std::find(c.hosts.begin(), c.hosts.end(), y);
      };
      std::sort(a.begin(), a.end(), by_candidate_order);
      std::sort(b.begin(), b.end(), by_candidate_order);
      f.groups = {std::move(a), std::move(b)};
      locks.push_back("network");
    }
    const int64_t duration = draws.uniform(spec.min_duration_us, spec.max_duration_us);
    const int64_t undo_at = std::min(t + duration, end);

    bool free = true;
    for (const std::vector<std::string>* held : {&locks, &booting}) {
      for (const std::string& l : *held) {
        auto it = busy_until.find(l);
        if (it != busy_until.end() && it->second > t) free = false;
      }
    }
    if (!free) continue;  // skipped: the target is still faulted
    for (const std::string& l : locks) busy_until[l] = undo_at;
    // After power_on the host's processes start only after the boot delay; a
    // process fault before then would hit a process that is not running.
    for (const std::string& l : booting) busy_until[l] = undo_at + s.environment.boot_delay_us;
    if (kind == FaultAction::partition || kind == FaultAction::isolate) network_fault = true;

    Fault undo;
    undo.at_us = undo_at;
    undo.action = nemesis_undo(kind);
    undo.target = undo.action == FaultAction::heal ? "" : f.target;
    undo.path = "$.nemesis";
    out.push_back(std::move(f));
    out.push_back(std::move(undo));
  }
  if (network_fault) {
    Fault heal;
    heal.at_us = end;
    heal.action = FaultAction::heal;
    heal.path = "$.nemesis";
    out.push_back(std::move(heal));
  }
  // Faults were pushed in start order, each followed by its undo: a stable
  // sort by time puts an undo before a fault that starts at the same time.
  std::stable_sort(out.begin(), out.end(), [](const Fault& x, const Fault& y) { return x.at_us < y.at_us; });
  return out;
}

}  // namespace scenario
