#include "model/fuzz/fuzz.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/Property.h>
#include <rapidcheck/detail/Results.h>
#include <rapidcheck/detail/TestListener.h>

#include "model/scenario/json_input.h"

namespace fuzz {

namespace {

constexpr const char* kTopic = "t";
constexpr const char* kClientHost = "client";
constexpr const char* kGroup = "g";
constexpr int64_t kBootDelayMs = 1'000;
// How long the clients are watched once the liveness bound has passed.
constexpr int64_t kAfterBoundMs = 20'000;
// Liveness: what the bound adds to the configured timeouts.
constexpr int64_t kSlackMs = 10'000;

}  // namespace

const char* to_string(Property p) {
  switch (p) {
    case Property::safety: return "safety";
    case Property::determinism: return "determinism";
    case Property::durability: return "durability";
    case Property::liveness: return "liveness";
  }
  return "?";
}

std::vector<Property> all_properties() {
  return {Property::safety, Property::determinism, Property::durability, Property::liveness};
}

std::optional<Property> property_from(std::string_view name) {
  for (Property p : all_properties()) {
    if (name == to_string(p)) return p;
  }
  return std::nullopt;
}

const char* to_string(FaultKind k) {
  switch (k) {
    case FaultKind::kill: return "kill";
    case FaultKind::stop: return "stop";
    case FaultKind::pause: return "pause";
    case FaultKind::power_off: return "power_off";
    case FaultKind::isolate: return "isolate";
    case FaultKind::halves: return "halves";
    case FaultKind::one_way: return "one_way";
    case FaultKind::bridge: return "bridge";
    case FaultKind::majority_ring: return "majority_ring";
    case FaultKind::replace_address: return "replace_address";
  }
  return "?";
}

std::vector<FaultKind> all_fault_kinds() {
  return {FaultKind::kill,    FaultKind::stop,    FaultKind::pause,  FaultKind::power_off,     FaultKind::isolate,
          FaultKind::halves,  FaultKind::one_way, FaultKind::bridge, FaultKind::majority_ring, FaultKind::replace_address};
}

std::optional<FaultKind> fault_kind_from(std::string_view name) {
  for (FaultKind k : all_fault_kinds()) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

// --- spaces ---------------------------------------------------------------------

namespace {

// The declared configuration space: keys an operator tunes, each with values
// inside its valid range; the first is the version's default and is never
// written. Chosen for what they change in failure handling: how fast a dead
// broker is noticed (sessions, ticks), how fast a slow follower leaves the
// ISR, how the clients time out, batch and back off.
std::vector<Dimension> declared_dimensions() {
  return {
      {"zookeeper.session.timeout.ms", {"18000", "6000", "10000"}},
      {"replica.lag.time.max.ms", {"30000", "10000"}},
      {"replica.fetch.wait.max.ms", {"500", "100"}},
      {"zookeeper.tickTime", {"2000", "1000"}},
      // The producer's own wait for an answer (librdkafka's socket.timeout.ms;
      // request.timeout.ms is only the broker's ack timeout).
      {"producer.socket.timeout.ms", {"60000", "5000"}},
      {"producer.linger.ms", {"5", "0", "50"}},
      {"producer.retry.backoff.ms", {"100", "1000"}},
      {"consumer.fetch.wait.max.ms", {"500", "100"}},
  };
}

}  // namespace

Space default_space(Property p) {
  Space s;
  s.property = p;
  s.dimensions = declared_dimensions();
  if (p == Property::durability || p == Property::liveness) {
    s.min_brokers = 3;
    s.max_brokers = 5;
    s.min_replication_factor = 3;
    s.max_replication_factor = 3;
    s.pinned = {
        {"producer.acks", "all"},
        {"producer.enable.idempotence", "true"},
        {"min.insync.replicas", "2"},
        {"unclean.leader.election.enable", "false"},
        {"kafkasim.truncation", "leader-epoch"},
    };
    // Durability is promised without power loss only (the default flush
    // policy leaves recent writes in the page cache); liveness after a heal
    // is expected whatever the faults were, as every fault is undone.
    if (p == Property::durability) std::erase(s.kinds, FaultKind::power_off);
  }
  return s;
}

void pin(Space& space, const std::string& key, const std::string& value) {
  space.pinned[key] = value;
  std::erase_if(space.dimensions, [&](const Dimension& d) { return d.key == key; });
}

void validate(const Space& s) {
  auto range = [](const char* what, int64_t lo, int64_t hi, int64_t min, int64_t max) {
    if (lo < min || hi > max || lo > hi) {
      throw std::invalid_argument(fmt::format("{}: {}..{} is not a range inside {}..{}", what, lo, hi, min, max));
    }
  };
  range("ZooKeeper servers", s.min_zookeepers, s.max_zookeepers, 1, 5);
  range("brokers", s.min_brokers, s.max_brokers, 1, 6);
  range("replication factor", s.min_replication_factor, s.max_replication_factor, 1, 6);
  range("partitions", 1, s.max_partitions, 1, 16);
  range("group members", s.min_group_members, s.max_group_members, 0, 6);
  range("faults", 0, s.max_faults, 0, 20);
  range("fault duration (ms)", s.min_duration_ms, s.max_duration_ms, 1, s.window_ms);
  if (s.kinds.empty() && s.max_faults > 0) throw std::invalid_argument("no fault kind to draw from");
  if (s.rate_per_s < 1) throw std::invalid_argument("the producer's rate must be at least 1 per second");
  if (s.window_start_ms < 5'000) throw std::invalid_argument("the fault window starts before the workload");
  for (const Dimension& d : s.dimensions) {
    if (d.values.empty()) throw std::invalid_argument(fmt::format("dimension {} has no values", d.key));
  }
}

// --- a case as a scenario ---------------------------------------------------------

namespace {

struct Topology {
  std::vector<std::string> cluster_hosts;  // hosts with a ZooKeeper server or a broker, in order
  std::vector<std::string> processes;      // zk1.., kafka1..
  std::map<std::string, std::string> host_of;  // process -> host
  std::map<std::string, std::string> address;  // host -> address
};

int32_t clamp_rf(const Case& c) { return std::clamp(c.replication_factor, 1, std::max(1, c.brokers)); }

// A case's group members, clamped as its other counts are (0: no group).
int32_t members_of(const Case& c) { return std::clamp(c.group_members, 0, 6); }

// The consumers of a case: "consumer", or the group's members.
std::vector<std::string> consumer_names(const Case& c) {
  if (members_of(c) == 0) return {"consumer"};
  std::vector<std::string> out;
  for (int32_t i = 1; i <= members_of(c); ++i) out.push_back(fmt::format("member{}", i));
  return out;
}

nlohmann::json topology_json(const Case& c, Topology& t) {
  nlohmann::json hosts = nlohmann::json::array();
  auto add_host = [&](const std::string& name, const std::string& address, int zk, int broker) {
    nlohmann::json h = {{"name", name}, {"address", address}};
    if (zk > 0) {
      h["zookeeper"] = {{"id", zk}};
      t.processes.push_back(fmt::format("zk{}", zk));
      t.host_of[t.processes.back()] = name;
    }
    if (broker > 0) {
      h["brokers"] = nlohmann::json::array({{{"id", broker}}});
      t.processes.push_back(fmt::format("kafka{}", broker));
      t.host_of[t.processes.back()] = name;
    }
    t.cluster_hosts.push_back(name);
    t.address[name] = address;
    hosts.push_back(std::move(h));
  };
  if (c.colocated) {
    const int32_t n = std::max(c.brokers, c.zookeepers);
    for (int32_t i = 1; i <= n; ++i) {
      add_host(fmt::format("node{}", i), fmt::format("10.0.0.{}", i), i <= c.zookeepers ? i : 0, i <= c.brokers ? i : 0);
    }
  } else {
    for (int32_t i = 1; i <= c.zookeepers; ++i) add_host(fmt::format("zkhost{}", i), fmt::format("10.0.1.{}", i), i, 0);
    for (int32_t i = 1; i <= c.brokers; ++i) add_host(fmt::format("node{}", i), fmt::format("10.0.0.{}", i), 0, i);
  }
  std::sort(t.processes.begin(), t.processes.end(), [](const std::string& a, const std::string& b) {
    // ZooKeeper servers first, then brokers, each by id.
    const bool za = a.rfind("zk", 0) == 0;
    const bool zb = b.rfind("zk", 0) == 0;
    if (za != zb) return za;
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  std::vector<std::string> clients = consumer_names(c);
  clients.insert(clients.begin(), "producer");
  hosts.push_back({{"name", kClientHost}, {"address", "10.0.9.1"}, {"clients", clients}});
  t.address[kClientHost] = "10.0.9.1";
  return hosts;
}

// One entry of the schedule: its time, an order within the time (undo
// before a new fault, the final heal last) and the JSON fault.
struct Entry {
  int64_t at_us;
  int order;
  nlohmann::json fault;
};

nlohmann::json at_json(int64_t us) { return nlohmann::json(static_cast<double>(us) / 1e6); }

// Rotates `v` left by `by` (modulo its size).
std::vector<std::string> rotated(std::vector<std::string> v, int32_t by) {
  if (!v.empty()) std::rotate(v.begin(), v.begin() + (by % static_cast<int32_t>(v.size())), v.end());
  return v;
}

nlohmann::json cuts_json(const std::vector<std::pair<std::string, std::string>>& cuts) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [a, b] : cuts) j.push_back({a, b});
  return j;
}

// The schedule of a case: each step with its undo, steps whose target is
// still faulted (or whose shape does not fit the hosts) left out. Returns the
// number of steps kept.
// `replace_settle_ms`: how long after any fault ends a replace_address may
// not start (replace_settle_ms below).
int32_t schedule(const Case& c, const Space& sp, const Topology& t, int64_t replace_settle_ms,
                 std::vector<Entry>& out) {
  std::vector<FaultStep> steps = c.faults;
  std::stable_sort(steps.begin(), steps.end(), [](const FaultStep& a, const FaultStep& b) { return a.at_ms < b.at_ms; });
  const int64_t window_end_ms = sp.window_start_ms + sp.window_ms;
  std::map<std::string, int64_t> busy_until;  // process or host -> ms
  // Until when a replace_address may not start: a broker may still be
  // exiting and being restarted, or waiting to register, after a fault
  // (see replace_settle_ms). Any fault counts, wherever it was: a cut or a
  // ZooKeeper fault elsewhere can keep a starting broker from registering
  // (it exits at zookeeper.connection.timeout.ms and is started again).
  int64_t unsettled_until = -1;
  int64_t network_busy_until = -1;
  bool any_network = false;
  int32_t kept = 0;
  std::vector<std::string> all_hosts = t.cluster_hosts;
  all_hosts.push_back(kClientHost);
  auto free_at = [&](const std::string& name, int64_t ms) {
    auto it = busy_until.find(name);
    return it == busy_until.end() || it->second <= ms;
  };
  auto host_free = [&](const std::string& h, int64_t ms) {
    if (!free_at(h, ms)) return false;
    for (const auto& [p, host] : t.host_of) {
      if (host == h && !free_at(p, ms)) return false;
    }
    return true;
  };
  for (const FaultStep& f : steps) {
    const int64_t start = sp.window_start_ms + std::clamp<int64_t>(f.at_ms, 0, sp.window_ms);
    const int64_t end = std::min(start + std::max<int64_t>(f.duration_ms, 1), window_end_ms);
    if (end <= start) continue;
    const int64_t s_us = start * 1000;
    const int64_t e_us = end * 1000;
    const int32_t target = std::max(0, f.target);
    const int32_t other = std::max(0, f.other);
    auto add = [&](int64_t at, int order, nlohmann::json j) {
      j["at"] = at_json(at);
      out.push_back({at, order, std::move(j)});
    };
    switch (f.kind) {
      case FaultKind::kill:
      case FaultKind::stop:
      case FaultKind::pause: {
        if (t.processes.empty()) continue;
        const std::string& p = t.processes[target % t.processes.size()];
        if (!free_at(p, start) || !free_at(t.host_of.at(p), start)) continue;
        busy_until[p] = end;
        const char* undo = f.kind == FaultKind::pause ? "resume" : "start";
        nlohmann::json j = {{"action", to_string(f.kind)}, {"target", p}};
        if (f.kind == FaultKind::stop) j["grace_s"] = 30;
        add(s_us, 1, std::move(j));
        add(e_us, 0, {{"action", undo}, {"target", p}});
        break;
      }
      case FaultKind::power_off: {
        const std::string& h = t.cluster_hosts[target % t.cluster_hosts.size()];
        if (!host_free(h, start)) continue;
        busy_until[h] = end + kBootDelayMs;
        for (const auto& [p, host] : t.host_of) {
          if (host == h) busy_until[p] = end + kBootDelayMs;
        }
        add(s_us, 1, {{"action", "power_off"}, {"target", h}});
        add(e_us, 0, {{"action", "power_on"}, {"target", h}});
        break;
      }
      case FaultKind::replace_address: {
        const std::string& h = t.cluster_hosts[target % t.cluster_hosts.size()];
        if (!host_free(h, start)) continue;
        // A broker that starts while its host is at the temporary address
        // registers that address and keeps it while it runs, as Kafka does:
        // the heal cannot undo that, and liveness would fail as a real
        // cluster's would (docs/fuzzing.md). No replace_address, then,
        // while a broker may still be restarting or registering.
        if (unsettled_until > start) continue;
        busy_until[h] = end;
        const size_t index =
            static_cast<size_t>(std::find(t.cluster_hosts.begin(), t.cluster_hosts.end(), h) - t.cluster_hosts.begin());
        add(s_us, 1, {{"action", "replace_address"}, {"target", h}, {"address", fmt::format("10.0.2.{}", index + 1)}});
        add(e_us, 0, {{"action", "replace_address"}, {"target", h}, {"address", t.address.at(h)}});
        break;
      }
      case FaultKind::isolate:
      case FaultKind::halves:
      case FaultKind::one_way:
      case FaultKind::bridge:
      case FaultKind::majority_ring: {
        if (network_busy_until > start) continue;
        nlohmann::json j;
        if (f.kind == FaultKind::isolate) {
          j = {{"action", "isolate"}, {"target", t.cluster_hosts[target % t.cluster_hosts.size()]}};
        } else if (f.kind == FaultKind::halves) {
          if (all_hosts.size() < 2) continue;
          const std::vector<std::string> r = rotated(all_hosts, target);
          const size_t cut = 1 + static_cast<size_t>(other) % (r.size() - 1);
          // (nlohmann would read two pairs in braces as an object: build the array.)
          nlohmann::json groups = nlohmann::json::array();
          groups.push_back(std::vector<std::string>(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(cut)));
          groups.push_back(std::vector<std::string>(r.begin() + static_cast<std::ptrdiff_t>(cut), r.end()));
          j = {{"action", "partition"}, {"groups", std::move(groups)}};
        } else if (f.kind == FaultKind::one_way) {
          if (all_hosts.size() < 2) continue;
          const size_t n = all_hosts.size();
          const size_t from = static_cast<size_t>(target) % n;
          const size_t to = (from + 1 + static_cast<size_t>(other) % (n - 1)) % n;
          j = {{"action", "partition"}, {"from", all_hosts[from]}, {"to", all_hosts[to]}};
        } else {
          // Jepsen's shapes over the cluster's hosts (the client host reaches
          // everyone). Bridge: two sides that only the middle host reaches.
          // Majority ring: each host reaches the nearest hosts on a ring, a
          // majority with itself, and no two hosts see the same majority.
          const std::vector<std::string> r = rotated(t.cluster_hosts, target);
          const size_t n = r.size();
          std::vector<std::pair<std::string, std::string>> cuts;
          if (f.kind == FaultKind::bridge) {
            if (n < 3) continue;
            const size_t mid = n / 2;
            for (size_t a = 0; a < mid; ++a) {
              for (size_t b = mid + 1; b < n; ++b) cuts.emplace_back(r[a], r[b]);
            }
          } else {
            if (n < 4) continue;
            const size_t majority = n / 2 + 1;
            const size_t reach = (majority - 1 + 1) / 2;  // neighbours on each side
            for (size_t a = 0; a < n; ++a) {
              for (size_t b = a + 1; b < n; ++b) {
                const size_t d = std::min(b - a, n - (b - a));
                if (d > reach) cuts.emplace_back(r[a], r[b]);
              }
            }
          }
          if (cuts.empty()) continue;
          j = {{"action", "partition"}, {"cuts", cuts_json(cuts)}};
        }
        network_busy_until = end;
        any_network = true;
        add(s_us, 1, std::move(j));
        add(e_us, 0, {{"action", "heal"}});
        break;
      }
    }
    // Kept: no replace_address until it has settled (a powered-off host's
    // processes start a boot delay after its power comes back).
    unsettled_until = std::max(unsettled_until,
                               end + (f.kind == FaultKind::power_off ? kBootDelayMs : 0) + replace_settle_ms);
    ++kept;
  }
  // The healing phase: every cut removed at the end of the window, however
  // the steps ended.
  if (any_network) out.push_back({window_end_ms * 1000, 2, {{"action", "heal"}, {"at", at_json(window_end_ms * 1000)}}});
  std::stable_sort(out.begin(), out.end(),
                   [](const Entry& a, const Entry& b) { return std::tie(a.at_us, a.order) < std::tie(b.at_us, b.order); });
  return kept;
}

std::string expectation_of(Property p, const Case& c) {
  switch (p) {
    // Dirty reads count with a group: its members read during the faults,
    // so an acknowledged value that vanished after a member read it is a
    // dirty read rather than lost.
    case Property::durability:
      return members_of(c) > 0 ? "lost == 0 && duplicates == 0 && divergent == 0 && dirty_reads == 0 && skipped == 0"
                                 : "lost == 0 && duplicates == 0 && divergent == 0";
    case Property::liveness: {
      const std::string flowing = "phases.after_bound.acknowledged > 0 && phases.after_bound.consumed > 0";
      if (members_of(c) == 0) return flowing + " && phases.after_bound.max_stall_s < 5";
      // Every member is in the group at the end, and each one with a
      // partition gets records without a stall (members beyond the
      // partition count are idle, as the assignor leaves them).
      std::string e = flowing + " && phases.after_bound.clients.producer.longest_stall_s < 5";
      e += fmt::format(" && final.groups.{}.members == {}", kGroup, members_of(c));
      for (const std::string& m : consumer_names(c)) {
        e += fmt::format(" && (phases.after_bound.clients.{0}.longest_stall_s < 5 || "
                         "len(checks.groups[0].assignment.{0}) == 0)",
                         m);
      }
      return e;
    }
    case Property::safety:
    case Property::determinism: return "";
  }
  return "";
}

// The liveness bound from the case's configuration: after the final heal a
// broker whose session died must see it expire and register again (the
// session timeout), the ensemble may have to elect a leader and sync
// (initLimit ticks), a crashed process is restarted by its service manager
// (restart delay), and the clients' requests that went into the cut time
// out before they are retried (the producer's socket.timeout.ms, or its
// message.timeout.ms if shorter); plus 10 s for the
// controller, metadata refreshes and back-offs.
//
// A consumer that runs through the faults (a group member) counts too: a
// fetch its broker took in just before its host lost power leaves nothing
// unacknowledged on the consumer's side, so no retransmission meets the
// rebooted host's reset, and the consumer waits out its own request timeout
// (socket.timeout.ms, 60 s in librdkafka) before it asks for metadata and
// finds the new leader, as a real one would. (Found by `kafkasim fuzz
// --property liveness --seed 901`: a 1 s power-off stalled a member 60 s.)
int64_t liveness_bound_ms(const scenario::Scenario& s) {
  int64_t session = 0;
  for (const scenario::BrokerSpec& b : s.brokers) session = std::max<int64_t>(session, b.config.zookeeper_session_timeout_ms);
  int64_t sync = 0;
  for (const scenario::ZooKeeperSpec& z : s.zookeepers) sync = std::max(sync, z.config.tick_time_ms * z.config.init_limit);
  const client::SteadyOptions& w = s.workload.steady.options;
  // The producer's own wait for an answer: socket.timeout.ms, cut to the
  // message timeout (ProducerConfig::socket_timeout_ms).
  int64_t request = w.producer.socket_timeout_ms;
  if (!w.producer.single_request_timeout) request = std::min(request, w.producer.message_timeout_ms);
  if (!w.groups.empty()) {
    request = std::max<int64_t>(request, w.consumer.request_timeout_ms);
  }
  return session + sync + s.environment.restart_delay_us / 1000 + request + kSlackMs;
}

// How long after a fault ends a broker may still be exiting, restarting or
// registering: one that comes back while its old ZooKeeper session still
// holds /brokers/ids/N exits, and its service manager starts it again a
// restart delay later, until that session has expired (the session
// timeout); one that cannot reach ZooKeeper exits after
// zookeeper.connection.timeout.ms (the session timeout by default) and is
// started again; then one more restart delay and boot for the last start to
// register.
int64_t replace_settle_ms(const scenario::Scenario& s) {
  int64_t wait = 0;
  for (const scenario::BrokerSpec& b : s.brokers) {
    wait = std::max<int64_t>(wait, b.config.zookeeper_session_timeout_ms);
    wait = std::max<int64_t>(wait, b.config.zookeeper_connection_timeout_ms);
  }
  return wait + 2 * (s.environment.restart_delay_us / 1000) + s.environment.boot_delay_us / 1000;
}

}  // namespace

Built build(const Case& c, const Space& sp, uint64_t seed) {
  Topology t;
  nlohmann::json doc;
  doc["name"] = fmt::format("fuzz {}", to_string(sp.property));
  doc["version"] = sp.version;
  doc["seed"] = 1;
  doc["hosts"] = topology_json(c, t);
  // zoo_sample.cfg's limits: an ensemble of several servers needs them.
  doc["zookeeper"] = {{"properties", {{"initLimit", 10}, {"syncLimit", 5}}}};
  doc["topics"] = {{{"name", kTopic}, {"partitions", std::max(1, c.partitions)}, {"replication_factor", clamp_rf(c)}}};
  doc["workload"] = {{"type", "steady"},
                     {"topic", kTopic},
                     {"producers", {"producer"}},
                     {"consumers", consumer_names(c)},
                     {"rate_per_s", sp.rate_per_s}};
  if (members_of(c) > 0) {
    // The members run through the faults: rebalances, coordinator moves
    // and commits are what they exercise (check_skips judges the commits).
    doc["workload"]["groups"] = {kGroup};
  } else {
    doc["workload"]["groups"] = nlohmann::json::array();
    // The consumer reads everything once the faults are over: an
    // acknowledged value that vanished in them is then lost (no consumer saw
    // it, the final log lacks it), not a dirty read of a value seen before.
    doc["workload"]["consumers_start_s"] = (sp.window_start_ms + sp.window_ms) / 1000.0;
  }
  doc["clients"] = {{"consumer", {{"auto.offset.reset", "earliest"}}}};
  // Processes run under a service manager that restarts what crashes
  // (systemd's Restart=always): a kill is a crash and a restart 10 s later,
  // a stop or a power-off keeps the process down until its undo.
  doc["environment"] = {{"restart", "always"}, {"restart_delay_s", 10}};
  // The schedule comes once the configuration is known (replace_settle_ms).
  doc["faults"] = nlohmann::json::array();
  Built b;
  b.heal_us = (sp.window_start_ms + sp.window_ms) * 1000;
  // A first reading with room for any bound, to learn the configuration.
  doc["duration_s"] = static_cast<double>(b.heal_us) / 1e6 + 3600;
  std::map<std::string, std::string> config = sp.pinned;
  for (size_t i = 0; i < sp.dimensions.size(); ++i) {
    const Dimension& d = sp.dimensions[i];
    const int32_t pick = i < c.config.size() ? std::max(0, c.config[i]) : 0;
    const size_t k = static_cast<size_t>(pick) % d.values.size();
    if (k != 0 && !config.contains(d.key)) config[d.key] = d.values[k];
  }
  scenario::Scenario first = scenario::parse_scenario("fuzz.json", doc.dump());
  if (!config.empty()) first = scenario::with_overrides(first, config, "--set");
  b.bound_us = liveness_bound_ms(first) * 1000;
  std::vector<Entry> entries;
  b.faults = schedule(c, sp, t, replace_settle_ms(first), entries);
  nlohmann::json full = first.source;
  for (Entry& e : entries) full["faults"].push_back(std::move(e.fault));
  const int64_t after_from = b.heal_us + b.bound_us;
  full["duration_s"] = static_cast<double>(after_from + kAfterBoundMs * 1000) / 1e6;
  full["phases"] = {{{"name", "faults"}, {"from_s", sp.window_start_ms / 1000.0}, {"to_s", at_json(b.heal_us)}},
                    {{"name", "after_bound"}, {"from_s", at_json(after_from)}, {"to_s", full["duration_s"]}}};
  full["seed"] = seed;
  b.expectation = expectation_of(sp.property, c);
  full["expect"] = nlohmann::json::array();
  if (!b.expectation.empty()) full["expect"].push_back(b.expectation);
  b.scenario = scenario::parse_scenario("fuzz.json", full.dump());
  b.document = std::move(full);
  return b;
}

// --- judging -------------------------------------------------------------------------

Judgement judge(const Built& b, const Space& sp) {
  Judgement j;
  const uint64_t seed = b.scenario.seed;
  const scenario::RunResult r = scenario::run_scenario(b.scenario, seed);
  if (r.invariant) {
    j.held = false;
    j.message = fmt::format("invariant broken at {} s: {} ({})", scenario::format_seconds(r.invariant->time_us),
                            r.invariant->message, r.invariant->where);
    return j;
  }
  switch (sp.property) {
    case Property::safety: break;
    case Property::determinism: {
      const scenario::RunResult again = scenario::run_scenario(b.scenario, seed);
      if (again.trace_hash != r.trace_hash || again.trace_records != r.trace_records ||
          again.verdict.dump() != r.verdict.dump()) {
        j.held = false;
        j.message = fmt::format("two runs differ: trace hash {:016x} ({} records) then {:016x} ({} records)",
                                r.trace_hash, r.trace_records, again.trace_hash, again.trace_records);
      }
      break;
    }
    case Property::durability:
    case Property::liveness:
      for (const scenario::ExpectationOutcome& e : r.expectations) {
        if (e.result == scenario::Expectation::Result::Outcome::held) continue;
        j.held = false;
        j.message += fmt::format("{}{}: {}", j.message.empty() ? "" : "; ", e.text, e.detail);
      }
      break;
  }
  return j;
}

// --- generation ---------------------------------------------------------------------

Case smallest_case(const Space& sp) {
  Case c;
  c.zookeepers = sp.min_zookeepers;
  c.brokers = sp.min_brokers;
  c.replication_factor = sp.min_replication_factor;
  c.group_members = sp.min_group_members;
  return c;
}

rc::Gen<Case> gen_case(const Space& sp) {
  const int32_t max_target = 6;
  // Start times in steps of 100 ms; they shrink toward the window's start,
  // durations toward the shortest.
  const rc::Gen<FaultStep> step = rc::gen::apply(
      [](FaultKind k, int64_t at, int64_t d, int32_t target, int32_t other) {
        return FaultStep{k, at * 100, d * 100, target, other};
      },
      sp.kinds.empty() ? rc::gen::just(FaultKind::kill) : rc::gen::elementOf(sp.kinds),
      rc::gen::inRange<int64_t>(0, sp.window_ms / 100 + 1),
      rc::gen::inRange<int64_t>(std::max<int64_t>(1, sp.min_duration_ms / 100), sp.max_duration_ms / 100 + 1),
      rc::gen::inRange<int32_t>(0, max_target), rc::gen::inRange<int32_t>(0, max_target));
  const size_t dims = sp.dimensions.size();
  return rc::gen::apply(
      [](int32_t zookeepers, bool colocated, int32_t brokers, int32_t partitions, int32_t rf,
         std::vector<int32_t> config, std::vector<FaultStep> faults, int32_t group_members) {
        Case c;
        c.zookeepers = zookeepers;
        c.colocated = colocated;
        c.brokers = brokers;
        c.partitions = partitions;
        c.replication_factor = rf;
        c.config = std::move(config);
        c.faults = std::move(faults);
        c.group_members = group_members;
        return c;
      },
      rc::gen::inRange(sp.min_zookeepers, sp.max_zookeepers + 1),
      sp.colocation_varies ? rc::gen::arbitrary<bool>() : rc::gen::just(true),
      rc::gen::inRange(sp.min_brokers, sp.max_brokers + 1), rc::gen::inRange(1, sp.max_partitions + 1),
      rc::gen::inRange(sp.min_replication_factor, sp.max_replication_factor + 1),
      // Most cases keep most keys at their defaults (index 0 three times in
      // four); a deviation shrinks to the default first.
      rc::gen::container<std::vector<int32_t>>(
          dims, rc::gen::map(rc::gen::inRange(0, 32), [](int32_t x) { return x < 24 ? 0 : x - 23; })),
      // At most max_faults steps (rapidcheck's size bounds a container's
      // length); each step drawn at full size, so that its times and targets
      // spread over their whole ranges however small the case.
      rc::gen::resize(sp.max_faults, rc::gen::container<std::vector<FaultStep>>(rc::gen::resize(100, step))),
      // Drawn last, so that the cases of a seed are otherwise as they were
      // before groups were drawn, and at full size (as the steps), so that
      // small cases have groups too. When the space allows none, half the
      // cases have no group and the others 1..max members; it shrinks
      // toward the fewest.
      rc::gen::resize(100, sp.min_group_members > 0 || sp.max_group_members <= 0
                               ? rc::gen::inRange(sp.min_group_members, sp.max_group_members + 1)
                               : rc::gen::map(rc::gen::inRange(0, 2 * sp.max_group_members),
                                              [hi = sp.max_group_members](int32_t x) {
                                                return x < hi ? 0 : 1 + (x - hi);
                                              })));
}

std::string describe(const Case& c, const Space& sp) {
  std::string out = fmt::format("{} ZooKeeper, {} brokers{}, {} partitions, RF {}", c.zookeepers, c.brokers,
                                c.colocated ? " (co-located)" : "", c.partitions, clamp_rf(c));
  if (members_of(c) > 0) out += fmt::format(", a group of {} consumers", members_of(c));
  for (size_t i = 0; i < sp.dimensions.size() && i < c.config.size(); ++i) {
    const Dimension& d = sp.dimensions[i];
    const size_t k = static_cast<size_t>(std::max(0, c.config[i])) % d.values.size();
    if (k != 0) out += fmt::format(", {}={}", d.key, d.values[k]);
  }
  for (const FaultStep& f : c.faults) {
    out += fmt::format("\n  {} target={} other={} at={}s for {}s", to_string(f.kind), f.target, f.other,
                       f.at_ms / 1000.0, f.duration_ms / 1000.0);
  }
  return out;
}

void showValue(const Case& c, std::ostream& os) { os << describe(c, default_space(Property::safety)); }

// --- the search ---------------------------------------------------------------------

namespace {

class Listener : public rc::detail::TestListener {
 public:
  Listener(FuzzResult& result, const std::function<void(const Progress&)>& progress)
      : result_(result), progress_(progress) {}

  void onTestCaseFinished(const rc::detail::CaseDescription& d) override {
    ++result_.cases;
    report(d.result.type == rc::detail::CaseResult::Type::Failure ? Progress::Kind::case_failed
                                                                  : Progress::Kind::case_passed);
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++result_.shrinks_tried;
    if (accepted) ++result_.shrinks_accepted;
    report(accepted ? Progress::Kind::shrink_accepted : Progress::Kind::shrink_rejected);
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

  int32_t faults = 0;  // of the latest failing case

 private:
  void report(Progress::Kind kind) {
    if (!progress_) return;
    progress_(Progress{kind, result_.cases, result_.shrinks_tried, result_.shrinks_accepted, faults});
  }
  FuzzResult& result_;
  const std::function<void(const Progress&)>& progress_;
};

}  // namespace

FuzzResult fuzz(const Space& sp, const FuzzOptions& options, const std::function<void(const Progress&)>& progress) {
  validate(sp);
  // A pinned key or value the parsers reject fails here, before any search.
  (void)build(smallest_case(sp), sp);
  FuzzResult result;
  Listener listener(result, progress);
  std::optional<Case> last_failure;
  std::string last_message;
  const auto property = [&] {
    const Case c = *gen_case(sp);
    const Built b = build(c, sp, options.seed);
    const Judgement j = judge(b, sp);
    if (!j.held) {
      last_failure = c;
      last_message = j.message;
      listener.faults = b.faults;
    }
    if (!j.held) RC_FAIL(j.message);
  };
  rc::detail::TestMetadata metadata;
  metadata.id = fmt::format("fuzz/{}", to_string(sp.property));
  metadata.description = metadata.id;
  rc::detail::TestParams params;
  params.seed = options.seed;
  params.maxSuccess = options.runs;
  params.maxSize = options.max_size;
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
  if (!options.reproduce.empty()) {
    rc::detail::Configuration config;
    try {
      config = rc::detail::configFromString(options.reproduce, rc::detail::Configuration());
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("not a rapidcheck reproduce string: {}", e.what()));
    }
    if (!config.reproduce.contains(metadata.id)) {
      throw std::invalid_argument(fmt::format("the reproduce string is not one of {}", metadata.id));
    }
    reproduce = config.reproduce;
  }
  const rc::detail::TestResult r =
      rc::detail::checkProperty(rc::detail::toProperty(property), metadata, params, listener, reproduce);
  rc::detail::FailureResult failure;
  if (r.match(failure)) {
    if (!last_failure) {
      result.error = failure.description;
      return result;
    }
    result.counterexample = last_failure;
    result.message = last_message;
    result.built = build(*last_failure, sp, options.seed);
    rc::detail::Configuration config;
    config.reproduce[metadata.id] = failure.reproduce;
    result.reproduce = rc::detail::configToMinimalString(config);
    return result;
  }
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (r.match(gave_up)) result.error = gave_up.description;
  if (r.match(error)) result.error = error.description;
  return result;
}

}  // namespace fuzz
