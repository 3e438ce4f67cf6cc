#include "model/scenario/run.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/check/checkers.h"
#include "model/check/final_state.h"
#include "model/client/lab.h"
#include "model/client/steady.h"
#include "model/client/workload.h"
#include "model/kafka/broker.h"
#include "model/kafka/invariants.h"
#include "model/zk/invariants.h"
#include "model/kafka/network_client.h"
#include "model/kafka/znodes.h"
#include "model/scenario/inspect.h"
#include "model/scenario/nemesis.h"
#include "model/zk/server.h"
#include "sim/assert.h"

namespace scenario {

std::string format_seconds(int64_t us) {
  const bool negative = us < 0;
  const uint64_t a = negative ? static_cast<uint64_t>(-(us + 1)) + 1 : static_cast<uint64_t>(us);
  std::string out = fmt::format("{}{}", negative ? "-" : "", a / 1'000'000);
  uint64_t frac = a % 1'000'000;
  if (frac != 0) {
    std::string digits = fmt::format("{:06}", frac);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

namespace {


double seconds(int64_t us) { return static_cast<double>(us) / 1e6; }

// kafka-topics.sh --create --bootstrap-server ...: asks any broker for the
// controller (Metadata), sends it CreateTopics, and waits until every
// partition of every topic has a leader in the brokers' metadata; then hands
// over to the runner (which starts the clients). Retries every second on any
// error, as an operator re-running the command would.
class AdminProcess final : public sim::Process {
 public:
  struct Bootstrap {
    kafka::BrokerId id;
    kafka::NodeAddress address;
  };
  AdminProcess(std::vector<Bootstrap> brokers, std::vector<kafka::NewTopic> topics, std::function<void()> ready)
      : brokers_(std::move(brokers)), topics_(std::move(topics)), ready_(std::move(ready)) {}

  void on_start() override {
    client_ = std::make_unique<kafka::NetworkClient>(ctx(), kafka::NetworkClient::Options{30000, 1});
    step();
  }
  void on_connected(sim::SocketId s) override { client_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override { client_->on_connect_failed(s, e); }
  void on_message(sim::SocketId s, sim::Payload& p) override { client_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { client_->on_closed(s, r); }

 private:
  void retry(sim::Duration after) {
    ctx().after(after, [this] { step(); });
  }

  void step() {
    if (done_) return;
    const Bootstrap& b = brokers_[next_++ % brokers_.size()];
    kafka::MetadataRequest m;
    m.topics = std::vector<std::string>{};
    for (const kafka::NewTopic& t : topics_) m.topics->push_back(t.name);
    m.allow_auto_topic_creation = false;
    client_->send(-1 - static_cast<int32_t>(next_ % brokers_.size()), b.address, m,
                  [this](kafka::SendError e, const kafka::Response* r) {
                    if (e != kafka::SendError::none || r == nullptr) return retry(sim::Duration::seconds(1));
                    on_metadata(std::get<kafka::MetadataResponse>(*r));
                  });
  }

  void on_metadata(const kafka::MetadataResponse& m) {
    if (!created_) {
      std::optional<kafka::NodeAddress> controller;
      for (const kafka::BrokerMetadata& b : m.brokers) {
        if (b.id == m.controller_id) controller = kafka::NodeAddress{b.host, b.port};
      }
      if (!controller) return retry(sim::Duration::seconds(1));
      kafka::CreateTopicsRequest req;
      req.topics = topics_;
      req.timeout_ms = 30000;
      client_->send(m.controller_id, *controller, req, [this](kafka::SendError e, const kafka::Response* r) {
        if (e != kafka::SendError::none || r == nullptr) return retry(sim::Duration::seconds(1));
        bool ok = true;
        for (const kafka::CreateTopicResult& t : std::get<kafka::CreateTopicsResponse>(*r).topics) {
          if (t.error != kafka::ErrorCode::none && t.error != kafka::ErrorCode::topic_already_exists) {
            ctx().trace("admin_create_topics_failed", {{"topic", t.name}, {"error", kafka::to_string(t.error)}});
            ok = false;
          }
        }
        if (ok) created_ = true;
        retry(sim::Duration::millis(ok ? 200 : 1000));
      });
      return;
    }
    size_t ready = 0;
    for (const kafka::NewTopic& want : topics_) {
      for (const kafka::TopicMetadata& t : m.topics) {
        if (t.name != want.name || t.error != kafka::ErrorCode::none) continue;
        bool all = !t.partitions.empty() && static_cast<int32_t>(t.partitions.size()) == want.num_partitions;
        for (const kafka::PartitionMetadata& p : t.partitions) all = all && p.leader != kafka::kNoBroker;
        if (all) ++ready;
      }
    }
    if (ready != topics_.size()) return retry(sim::Duration::millis(200));
    done_ = true;
    ctx().trace("admin_topics_ready", {{"topics", static_cast<uint64_t>(topics_.size())}});
    ready_();
  }

  std::vector<Bootstrap> brokers_;
  std::vector<kafka::NewTopic> topics_;
  std::function<void()> ready_;
  std::unique_ptr<kafka::NetworkClient> client_;
  size_t next_ = 0;
  bool created_ = false;
  bool done_ = false;
};

// Where an override goes. Tried in order; the first reader that knows the
// key takes it (a key both clients know goes to both).
nlohmann::json& props_at(nlohmann::json& doc, const std::vector<std::string>& path) {
  nlohmann::json* j = &doc;
  for (const std::string& p : path) {
    if (!j->contains(p) || !(*j)[p].is_object()) (*j)[p] = nlohmann::json::object();
    j = &(*j)[p];
  }
  return *j;
}

// The reader's way of saying "not a key of this configuration" (as opposed
// to a bad value for one): unknown, or a key of the other client.
// A broker key set in a broker's own properties, or a topic key of the same
// name in a topic's config, would win over the cluster-wide value: an
// override replaces those too, so that it always takes effect.
void override_everywhere(nlohmann::json& doc, const std::string& key, const std::string& value) {
  if (doc.contains("hosts") && doc["hosts"].is_array()) {
    for (nlohmann::json& h : doc["hosts"]) {
      if (!h.contains("brokers") || !h["brokers"].is_array()) continue;
      for (nlohmann::json& b : h["brokers"]) {
        if (b.contains("properties") && b["properties"].is_object() && b["properties"].contains(key)) {
          b["properties"][key] = value;
        }
      }
    }
  }
  if (doc.contains("topics") && doc["topics"].is_array()) {
    for (nlohmann::json& t : doc["topics"]) {
      if (t.contains("config") && t["config"].is_object() && t["config"].contains(key)) t["config"][key] = value;
    }
  }
}

bool not_this_sides_key(const InputError& e, const std::string& key) {
  const std::string what = e.what();
  if (what.find(key) == std::string::npos) return false;
  return what.find("unknown key") != std::string::npos || what.find("does not take it") != std::string::npos;
}

}  // namespace

Scenario with_overrides(const Scenario& s, const std::map<std::string, std::string>& overrides,
                        const std::string& source) {
  nlohmann::json doc = s.source;
  for (const auto& [raw_key, value] : overrides) {
    if (raw_key == "version") {
      // The scenario's version profile: its defaults and mechanisms, under
      // whatever the scenario sets itself.
      nlohmann::json attempt = doc;
      attempt["version"] = value;
      try {
        (void)parse_scenario(s.file, attempt.dump());
      } catch (const InputError& e) {
        throw InputError(source, raw_key, fmt::format("{}={}: {}", raw_key, value, e.what()));
      }
      doc = std::move(attempt);
      continue;
    }
    std::string key = raw_key;
    std::vector<std::vector<std::string>> places;
    auto strip = [&](const char* prefix) {
      const std::string p = prefix;
      if (key.rfind(p, 0) == 0 && key.size() > p.size()) {
        key = key.substr(p.size());
        return true;
      }
      return false;
    };
    if (strip("producer.")) {
      places = {{"clients", "producer"}};
    } else if (strip("consumer.")) {
      places = {{"clients", "consumer"}};
    } else if (strip("zookeeper.")) {
      // "zookeeper.tickTime" is zoo.cfg's tickTime; a Kafka key with that
      // prefix (zookeeper.session.timeout.ms) is tried as itself after it.
      places = {{"zookeeper", "properties"}, {"kafka", "properties"}};
    } else {
      key = raw_key;
      places = {{"kafka", "properties"}, {"clients", "producer"}, {"clients", "consumer"}};
    }
    bool taken = false;
    std::string first_error;
    for (const auto& place : places) {
      nlohmann::json attempt = doc;
      const std::string k = place.front() == "kafka" && raw_key.rfind("zookeeper.", 0) == 0 ? raw_key : key;
      props_at(attempt, place)[k] = value;
      if (place.front() == "kafka") override_everywhere(attempt, k, value);
      try {
        (void)parse_scenario(s.file, attempt.dump());
        doc = std::move(attempt);
        taken = true;
        // A key both clients know goes to both; a broker key stops here.
        if (place.front() == "kafka") break;
      } catch (const InputError& e) {
        if (!not_this_sides_key(e, key)) {
          throw InputError(source, raw_key, fmt::format("{}={}: {}", raw_key, value, e.what()));
        }
        // The hint worth showing: a did-you-mean from whichever side has one.
        const std::string what = e.what();
        if (first_error.empty() || (first_error.find("did you mean") == std::string::npos &&
                                    what.find("did you mean") != std::string::npos)) {
          first_error = what;
        }
      }
    }
    if (!taken) {
      throw InputError(source, raw_key,
                       fmt::format("'{}' is not a Kafka broker, producer, consumer or zoo.cfg key ({})", raw_key,
                                   first_error));
    }
  }
  return parse_scenario(s.file, doc.dump());
}

int RunResult::exit_code() const {
  if (invariant) return kExitInvariant;
  bool failed = false;
  for (const ExpectationOutcome& e : expectations) {
    if (e.result == Expectation::Result::Outcome::error) return kExitBadInput;
    failed = failed || e.result == Expectation::Result::Outcome::failed;
  }
  return failed ? kExitFailed : kExitHeld;
}

nlohmann::json RunResult::to_json() const {
  nlohmann::json j;
  j["seed"] = seed;
  j["scenario"] = scenario;
  j["scenario_hash"] = scenario_hash;
  j["trace_hash"] = fmt::format("{:016x}", trace_hash);
  j["exit"] = exit_code();
  j["end_time_s"] = seconds(end_time_us);
  nlohmann::json ex = nlohmann::json::array();
  for (const ExpectationOutcome& e : expectations) {
    ex.push_back({{"expect", e.text},
                  {"result", e.result == Expectation::Result::Outcome::held     ? "held"
                             : e.result == Expectation::Result::Outcome::failed ? "failed"
                                                                       : "error"},
                  {"detail", e.detail}});
  }
  j["expectations"] = ex;
  if (invariant) {
    j["invariant"] = {{"time_s", seconds(invariant->time_us)}, {"message", invariant->message}, {"where", invariant->where}};
  }
  nlohmann::json headline = nlohmann::json::object();
  for (const char* k : {"lost", "duplicates", "order_violations", "dirty_reads", "divergent", "skipped", "sent", "acknowledged",
                        "consumed", "max_stall_s", "producer_gave_up", "controller_epoch_changes"}) {
    if (verdict.is_object() && verdict.contains(k)) headline[k] = verdict[k];
  }
  j["verdict"] = headline;
  return j;
}

struct Run::Impl {
  Impl(const Scenario& scenario, uint64_t run_seed, RunOptions run_options)
      : s(scenario),
        seed(run_seed), options(std::move(run_options)), world(run_seed, world_options(scenario)) {
    history = options.history_out != nullptr ? options.history_out : &own_history;
    history->reserve(history_size_hint());
    if (options.trace_json != nullptr) world.trace().set_json_sink(options.trace_json);
    build();
  }

  static sim::WorldOptions world_options(const Scenario& s) {
    sim::WorldOptions w;
    w.boot_delay = sim::Duration::micros(s.environment.boot_delay_us);
    if (s.environment.host_unreachable_after_us) {
      w.network.host_unreachable_after = sim::Duration::micros(*s.environment.host_unreachable_after_us);
    }
    w.disk.fsync_latency_min = sim::Duration::micros(s.environment.fsync_latency_min_us);
    w.disk.fsync_latency_max = sim::Duration::micros(s.environment.fsync_latency_max_us);
    w.disk.writeback_delay = s.environment.writeback_delay_us ? sim::Duration::micros(*s.environment.writeback_delay_us)
                                                              : sim::Duration::max();
    return w;
  }

  void build() {
    for (const HostSpec& h : s.hosts) hosts[h.name] = world.add_host(h.name, h.address);
    for (const ZooKeeperSpec& z : s.zookeepers) {
      zk_configs[z.id] = z.config;
      // The factory reads zoo.cfg as it is when the server starts (a
      // replace_address with update_ensemble rewrites it).
      const int32_t id = z.id;
      zookeepers[z.id] = world.add_process(hosts.at(z.host), fmt::format("zk{}", z.id),
                                           [this, id] { return zk::server_factory(zk_configs.at(id))(); });
      world.set_restart(zookeepers[z.id], s.environment.restart, sim::Duration::micros(s.environment.restart_delay_us));
    }
    for (const BrokerSpec& b : s.brokers) {
      brokers[b.id] = world.add_process(hosts.at(b.host), fmt::format("kafka{}", b.id), kafka::broker_factory(b.config));
      world.set_restart(brokers[b.id], s.environment.restart, sim::Duration::micros(s.environment.restart_delay_us));
    }
    if (!s.brokers.empty()) {
      const std::string& connect = s.brokers.front().config.zookeeper_connect;
      const size_t slash = connect.find('/');
      if (slash != std::string::npos) chroot = connect.substr(slash);
    }
    add_clients();
    // The admin: topics first, then the clients.
    std::vector<AdminProcess::Bootstrap> bootstrap;
    for (const BrokerSpec& b : s.brokers) {
      const uint16_t port = b.config.listeners.empty() ? 9092 : b.config.listeners.front().port;
      bootstrap.push_back({b.id, kafka::NodeAddress{s.host(b.host)->address, port}});
    }
    std::vector<kafka::NewTopic> topics;
    for (const TopicSpec& t : s.topics) {
      topics.push_back(kafka::NewTopic{t.name, t.partitions, t.replication_factor, {}, t.config});
    }
    if (!bootstrap.empty() && !topics.empty()) {
      const sim::HostId admin_host = world.add_host(kAdminName, kAdminAddress);
      admin = world.add_process(admin_host, kAdminName, [this, bootstrap, topics] {
        return std::make_unique<AdminProcess>(bootstrap, topics, [this] { on_topics_ready(); });
      });
    } else {
      start_clients_at_boot = true;
    }

    // The schedule: the file's faults and the nemesis's, by time (file
    // faults first at equal times).
    faults = s.faults;
    if (s.nemesis) {
      std::vector<Fault> drawn = generate_nemesis(s, *s.nemesis, s.duration_us, world.rng("nemesis"));
      faults.insert(faults.end(), drawn.begin(), drawn.end());
      std::stable_sort(faults.begin(), faults.end(), [](const Fault& a, const Fault& b) { return a.at_us < b.at_us; });
    }

    invariants = std::make_unique<kafka::Invariants>(world, brokers);
    std::vector<std::pair<zk::ServerId, sim::ProcessId>> servers;
    for (const auto& [id, proc] : zookeepers) servers.emplace_back(static_cast<zk::ServerId>(id), proc);
    zk_invariants = std::make_unique<zk::EnsembleInvariants>(world, servers);
    if (options.check_invariants) {
      world.set_invariant_check([this] {
        invariants->check_after_event();
        zk_invariants->check_after_event();
      });
    }
    truncations = std::make_unique<check::TruncationRecorder>(world, brokers);
    observer = world.trace().add_observer([this](const sim::TraceRecord& r) { observe(r); });
    world.boot();
    if (start_clients_at_boot) on_topics_ready();
  }

  void add_clients() {
    const WorkloadSpec& w = s.workload;
    if (w.type == "lab") {
      const LabWorkload& lab = w.lab;
      if (!lab.consumer.empty()) {
        const client::ConsumerConfig cc = lab.consumer_config;
        const client::LabOptions o = lab.options;
        clients[lab.consumer] = world.add_process(
            hosts.at(s.host_of_process(lab.consumer)->name), lab.consumer,
            [this, cc, o] { return std::make_unique<client::LabConsumer>(cc, o, history); }, sim::Autostart::no);
      }
      if (!lab.producer.empty()) {
        const client::ProducerConfig pc = lab.producer_config;
        const client::LabOptions o = lab.options;
        clients[lab.producer] = world.add_process(
            hosts.at(s.host_of_process(lab.producer)->name), lab.producer,
            [this, pc, o] { return std::make_unique<client::LabProducer>(pc, o, history); }, sim::Autostart::no);
      }
    } else {
      const SteadyWorkload& st = w.steady;
      for (size_t j = 0; j < st.consumers.size(); ++j) {
        clients[st.consumers[j]] = world.add_process(
            hosts.at(s.host_of_process(st.consumers[j])->name), st.consumers[j],
            client::steady_consumer_factory(st.options, static_cast<int32_t>(j), history), sim::Autostart::no);
      }
      for (size_t i = 0; i < st.producers.size(); ++i) {
        clients[st.producers[i]] = world.add_process(
            hosts.at(s.host_of_process(st.producers[i])->name), st.producers[i],
            client::steady_producer_factory(st.options, static_cast<int32_t>(i), history), sim::Autostart::no);
      }
    }
  }

  // The order the clients start in: consumers first, then (for the lab, a
  // head start later) producers.
  void on_topics_ready() {
    clients_started_us = world.now().us();
    epoch_at_start = controller_epoch();
    note(world.now().us(), s.topics.empty() ? "clients started" : "topics created; clients started");
    start_workload_clients();
  }

  void start_workload_clients() {
    const WorkloadSpec& w = s.workload;
    if (w.type == "lab") {
      if (!w.lab.consumer.empty()) world.start(clients.at(w.lab.consumer));
      if (!w.lab.producer.empty()) {
        const sim::ProcessId p = clients.at(w.lab.producer);
        world.loop().after(sim::Duration::micros(w.lab.consumer_head_start_us), [this, p] { world.start(p); });
      }
    } else {
      const int64_t consumers_at = w.steady.consumers_start_us.value_or(0);
      for (const std::string& c : w.steady.consumers) {
        const sim::ProcessId p = clients.at(c);
        if (consumers_at <= world.now().us()) {
          world.start(p);
        } else {
          world.loop().after(sim::Duration::micros(consumers_at - world.now().us()), [this, p] { world.start(p); });
        }
      }
      for (const std::string& p : w.steady.producers) world.start(clients.at(p));
    }
  }

  void note(int64_t t, std::string text) { timeline.push_back({t, std::move(text)}); }

  // `start` on a process still in its controlled shutdown (a `stop` a
  // moment ago): as an operator running `systemctl start` after `stop`
  // returned, it starts once the process is down (checked every 100 ms until
  // the stop's SIGKILL deadline). A `start` of a process that runs and is
  // not stopping does nothing, as `systemctl start` of a running unit.
  void start_when_down(sim::ProcessId p) {
    if (!world.is_running(p)) {
      stopping.erase(p);
      world.start(p);
      return;
    }
    auto it = stopping.find(p);
    if (it == stopping.end() || world.now().us() > it->second) return;
    world.loop().after(sim::Duration::millis(100), [this, p] { start_when_down(p); });
  }

  static std::string field_text(const sim::TraceRecord& r, std::string_view key) {
    const sim::TraceField::Value* v = r.field(key);
    if (v == nullptr) return "?";
    return std::visit(
        [](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
          else if constexpr (std::is_same_v<T, std::string_view>) return std::string(x);
          else return std::to_string(x);
        },
        *v);
  }

  void observe(const sim::TraceRecord& r) {
    const int64_t t = r.time.us();
    if (r.kind == "controller_elected") {
      note(t, fmt::format("controller: broker {} (epoch {})", field_text(r, "broker"), field_text(r, "epoch")));
    } else if (r.kind == "leading" && r.process.rfind("zk", 0) == 0) {
      note(t, fmt::format("ZooKeeper leader: {} (epoch {})", r.process, field_text(r, "epoch")));
    } else if (r.kind == "unclean_leader_election") {
      note(t, fmt::format("unclean leader election: {} -> broker {}", field_text(r, "partition"), field_text(r, "leader")));
    } else if (r.kind == "partition_offline") {
      const std::string p = field_text(r, "partition");
      if (offline.insert(p).second) note(t, fmt::format("{} offline (isr {})", p, field_text(r, "isr")));
    } else if (r.kind == "become_leader") {
      offline.erase(field_text(r, "partition"));
    } else if (r.kind == "zk_session_expired") {
      note(t, fmt::format("{}: ZooKeeper session expired", r.process));
    } else if (r.kind == "restarted_by_service_manager") {
      note(t, fmt::format("{} restarted by its service manager", r.process));
    } else if (r.kind == "zk_connect_timeout") {
      note(t, fmt::format("{}: no ZooKeeper connection within {} ms; the broker exits", r.process,
                          field_text(r, "timeout_ms")));
    } else if (r.kind == "registration_failed") {
      note(t, fmt::format("{}: /brokers/ids/{} still held by an old session; the broker exits", r.process,
                          field_text(r, "broker")));
    } else if (r.kind == "admin_create_topics_failed") {
      note(t, fmt::format("creating topic {} failed: {}", field_text(r, "topic"), field_text(r, "error")));
    }
  }

  std::optional<sim::ProcessId> process(const std::string& name) const { return world.find_process(name); }

  // Why a fault would change nothing, as things stand when it comes ("" if
  // it will act): a schedule that starts a running process or powers on a
  // host that is on says so in the timeline rather than passing silently.
  std::string no_effect(const Fault& f) const {
    switch (f.action) {
      case FaultAction::power_off:
        return world.is_up(hosts.at(f.target)) ? "" : "the host is already off";
      case FaultAction::power_on:
        return world.is_up(hosts.at(f.target)) ? "the host is already on" : "";
      case FaultAction::kill:
      case FaultAction::stop:
        return world.is_running(*process(f.target)) ? "" : "not running";
      case FaultAction::start: {
        const sim::ProcessId p = *process(f.target);
        if (!world.is_running(p)) return "";
        auto it = stopping.find(p);
        return it != stopping.end() && world.now().us() <= it->second ? "" : "already running";
      }
      case FaultAction::pause: {
        const sim::ProcessId p = *process(f.target);
        if (!world.is_running(p)) return "not running";
        return world.is_paused(p) ? "already paused" : "";
      }
      case FaultAction::resume:
        return world.is_paused(*process(f.target)) ? "" : "not paused";
      default:
        return "";
    }
  }

  void apply(const Fault& f) {
    std::string text = to_string(f.action);
    if (!f.target.empty()) text += " " + f.target;
    if (const std::string why = no_effect(f); !why.empty()) text += " (no effect: " + why + ")";
    switch (f.action) {
      case FaultAction::power_off:
        for (const auto& [name, p] : clients) {
          if (world.host_of(p) == hosts.at(f.target) && world.is_running(p)) {
            client::record_exit(*history, name, world.now().us(), "power_off");
          }
        }
        world.power_off(hosts.at(f.target));
        break;
      case FaultAction::power_on: world.power_on(hosts.at(f.target)); break;
      case FaultAction::kill:
        if (clients.count(f.target) != 0 && world.is_running(clients.at(f.target))) {
          client::record_exit(*history, f.target, world.now().us(), "killed");
        }
        world.kill(*process(f.target));
        break;
      case FaultAction::start: {
        const sim::ProcessId p = *process(f.target);
        // A client starts only once the workload has started (its topics exist).
        if (clients.count(f.target) == 0 || clients_started_us >= 0) start_when_down(p);
        break;
      }
      case FaultAction::stop: {
        const sim::ProcessId p = *process(f.target);
        if (world.is_running(p)) stopping[p] = f.at_us + f.grace_us;
        world.terminate(p, sim::Duration::micros(f.grace_us));
        break;
      }
      case FaultAction::pause: world.pause(*process(f.target)); break;
      case FaultAction::resume: world.resume(*process(f.target)); break;
      case FaultAction::partition: {
        if (!f.groups.empty()) {
          std::vector<std::vector<sim::HostId>> groups;
          std::string desc;
          for (const auto& g : f.groups) {
            groups.emplace_back();
            std::string side;
            for (const std::string& h : g) {
              groups.back().push_back(hosts.at(h));
              side += (side.empty() ? "" : ",") + h;
            }
            desc += (desc.empty() ? "" : " | ") + side;
          }
          world.network().partition(groups);
          text += " " + desc;
        } else if (!f.cuts.empty()) {
          for (const auto& [a, b] : f.cuts) {
            world.network().block(hosts.at(a), hosts.at(b));
            world.network().block(hosts.at(b), hosts.at(a));
            text += fmt::format(" {}<-/->{}", a, b);
          }
        } else {
          world.network().block(hosts.at(f.from), hosts.at(f.to));
          text += fmt::format(" {} -/-> {}", f.from, f.to);
        }
        break;
      }
      case FaultAction::isolate: world.network().isolate(hosts.at(f.target)); break;
      case FaultAction::heal: world.network().heal(); break;
      case FaultAction::replace_address: {
        const std::string old = world.network().address(hosts.at(f.target));
        world.replace_address(hosts.at(f.target), f.address);
        text += " -> " + f.address;
        if (f.update_ensemble) {
          for (auto& [id, config] : zk_configs) {
            for (auto& [peer, address] : config.servers) {
              if (address.host == old) address.host = f.address;
            }
          }
          text += " (zoo.cfg rewritten)";
        }
        break;
      }
      case FaultAction::restart_clients:
        // As an operator re-running the scripts: every client killed, then
        // started in the workload's order.
        for (const auto& [name, p] : clients) {
          if (world.is_running(p)) client::record_exit(*history, name, world.now().us(), "killed");
          world.kill(p);
        }
        if (clients_started_us >= 0) start_workload_clients();
        break;
    }
    note(f.at_us, text);
    applied.push_back(f);
  }

  void run_until(int64_t t_us) {
    t_us = std::min(t_us, s.duration_us);
    sim::RunInfo info{seed, world.loop().now_ptr()};
    sim::RunScope scope(&info);
    while (true) {
      int64_t next = t_us;
      bool fault = next_fault < faults.size() && faults[next_fault].at_us <= next;
      if (fault) next = faults[next_fault].at_us;
      bool snap = next_snapshot < s.snapshots.size() && s.snapshots[next_snapshot].at_us <= next;
      if (snap) next = s.snapshots[next_snapshot].at_us;
      fault = fault && faults[next_fault].at_us == next;
      if (world.now().us() < next) world.run_until(sim::Time::from_us(next));
      if (snap) {
        // A snapshot sees the state before the faults of its own instant.
        snapshots[s.snapshots[next_snapshot].name] = state_json();
        ++next_snapshot;
        continue;
      }
      if (fault) {
        apply(faults[next_fault++]);
        continue;
      }
      break;
    }
  }

  // --- state ----------------------------------------------------------------------

  const zk::Server* zk_server() const { return freshest_server(world, zookeepers); }

  const zk::DataTree::Node* znode(const std::string& path) const {
    const zk::Server* z = zk_server();
    return z == nullptr ? nullptr : z->tree().find(chroot + path);
  }

  int64_t controller_epoch() const {
    const auto* n = znode(kafka::znodes::kControllerEpoch);
    if (n == nullptr) return -1;
    auto e = kafka::znodes::decode_controller_epoch(n->data);
    return e ? e->value : -1;
  }

  const kafka::Broker* broker(kafka::BrokerId id) const {
    const sim::ProcessId p = brokers.at(id);
    return world.is_running(p) ? world.process_as<kafka::Broker>(p) : nullptr;
  }

  static nlohmann::json ids(const std::vector<kafka::BrokerId>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (kafka::BrokerId b : v) a.push_back(b);
    return a;
  }

  nlohmann::json state_json() const {
    nlohmann::json j;
    j["time_s"] = seconds(world.now().us());
    int64_t controller = -1;
    if (const auto* n = znode(kafka::znodes::kController)) {
      if (auto c = kafka::znodes::decode_controller(n->data)) controller = *c;
    }
    j["controller"] = controller;
    j["controller_epoch"] = controller_epoch();
    nlohmann::json registered = nlohmann::json::array();
    if (const zk::Server* z = zk_server()) {
      std::vector<int64_t> v;
      for (const std::string& c : z->tree().children(chroot + kafka::znodes::kBrokerIds).value_or(std::vector<std::string>{})) {
        v.push_back(std::stoll(c));
      }
      std::sort(v.begin(), v.end());
      for (int64_t b : v) registered.push_back(b);
    }
    j["brokers"] = registered;
    nlohmann::json running = nlohmann::json::object();
    for (const auto& [id, p] : zookeepers) running[fmt::format("zk{}", id)] = world.is_running(p);
    for (const auto& [id, p] : brokers) running[fmt::format("kafka{}", id)] = world.is_running(p);
    for (const auto& [name, p] : clients) running[name] = world.is_running(p);
    j["running"] = running;

    nlohmann::json servers = nlohmann::json::object();
    int64_t zk_leader = -1;
    for (const auto& [id, p] : zookeepers) {
      const auto* z = world.is_running(p) ? world.process_as<zk::Server>(p) : nullptr;
      if (z == nullptr) {
        servers[fmt::format("zk{}", id)] = "down";
        continue;
      }
      std::string state = zk::to_string(z->state());
      for (char& c : state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      servers[fmt::format("zk{}", id)] = state;
      if (z->state() == zk::PeerState::leading) zk_leader = id;
    }
    j["zookeeper"] = {{"leader", zk_leader}, {"servers", servers}};

    nlohmann::json partitions = nlohmann::json::object();
    std::vector<std::string> topic_names;
    if (const zk::Server* z = zk_server()) {
      topic_names = z->tree().children(chroot + kafka::znodes::kBrokerTopics).value_or(std::vector<std::string>{});
    }
    for (const std::string& topic : topic_names) {
      if (check::is_internal_topic(topic)) continue;
      const auto* an = znode(kafka::znodes::topic_path(topic));
      if (an == nullptr) continue;
      const auto assignment = kafka::znodes::decode_assignment(an->data);
      if (!assignment) continue;
      for (const auto& [p, replicas] : *assignment) {
        const kafka::TopicPartition tp{topic, p};
        nlohmann::json pj;
        pj["replicas"] = ids(replicas);
        int64_t leader = -1;
        pj["leader_epoch"] = -1;
        pj["isr"] = nlohmann::json::array();
        if (const auto* sn = znode(kafka::znodes::partition_state_path(tp))) {
          if (auto st = kafka::znodes::decode_partition_state(sn->data)) {
            leader = st->leader;
            pj["leader_epoch"] = st->leader_epoch.value;
            pj["isr"] = ids(st->isr);
          }
        }
        pj["leader"] = leader;
        int64_t hw = -1, end = -1, start = -1, segments = 0;
        nlohmann::json segment_bytes = nlohmann::json::array();
        const kafka::Broker* lb = leader >= 0 && brokers.count(static_cast<kafka::BrokerId>(leader))
                                      ? broker(static_cast<kafka::BrokerId>(leader))
                                      : nullptr;
        const kafka::Partition* part = lb == nullptr ? nullptr : lb->partition(tp);
        if (part == nullptr) {
          // No running leader: the longest log among the running replicas.
          for (kafka::BrokerId r : replicas) {
            const kafka::Broker* b = brokers.count(r) ? broker(r) : nullptr;
            const kafka::Partition* q = b == nullptr ? nullptr : b->partition(tp);
            if (q != nullptr && (part == nullptr || q->log().log_end().value > part->log().log_end().value)) part = q;
          }
        }
        if (part != nullptr) {
          if (part->is_leader()) hw = part->high_watermark().value;
          end = part->log().log_end().value;
          start = part->log().log_start().value;
          segments = static_cast<int64_t>(part->log().segments().size());
          for (const kafka::SegmentInfo& si : part->log().segments()) segment_bytes.push_back(si.bytes);
        }
        pj["high_watermark"] = hw;
        pj["log_end"] = end;
        pj["log_start"] = start;
        pj["segments"] = segments;
        pj["segment_bytes"] = std::move(segment_bytes);
        partitions[fmt::format("{}-{}", topic, p)] = pj;
      }
    }
    j["partition"] = partitions;

    nlohmann::json groups = nlohmann::json::object();
    if (s.workload.type == "steady") {
      for (const std::string& g : s.workload.steady.options.groups) {
        nlohmann::json gj = {{"state", "unknown"}, {"generation", -1}, {"members", 0}};
        for (const auto& [id, p] : brokers) {
          const kafka::Broker* b = broker(id);
          const kafka::GroupCoordinator* gc = b == nullptr ? nullptr : b->group_coordinator();
          if (gc == nullptr || !gc->owns(gc->partition_for(g))) continue;
          if (auto st = gc->group_state(g)) {
            gj["state"] = kafka::to_string(*st);
            gj["generation"] = gc->generation(g).value_or(-1);
            gj["members"] = gc->members(g).size();
          }
          break;
        }
        groups[g] = gj;
      }
    }
    j["groups"] = groups;
    return j;
  }

  // --- the verdict ------------------------------------------------------------------

  std::vector<check::FaultWindow> fault_windows() const {
    std::vector<check::FaultWindow> out;
    // A fault lasts until the action that undoes it on the same target (or a
    // heal, for cuts), else to the end of the run.
    for (size_t i = 0; i < applied.size(); ++i) {
      const Fault& f = applied[i];
      std::optional<FaultAction> undo;
      switch (f.action) {
        case FaultAction::power_off: undo = FaultAction::power_on; break;
        case FaultAction::kill:
        case FaultAction::stop: undo = FaultAction::start; break;
        case FaultAction::pause: undo = FaultAction::resume; break;
        case FaultAction::partition:
        case FaultAction::isolate: undo = FaultAction::heal; break;
        default: break;
      }
      if (!undo) continue;
      int64_t end = s.duration_us;
      for (size_t k = i + 1; k < applied.size(); ++k) {
        const Fault& g = applied[k];
        if (g.action != *undo) continue;
        if (*undo == FaultAction::heal || g.target == f.target) {
          end = g.at_us;
          break;
        }
      }
      std::string d = to_string(f.action);
      if (!f.target.empty()) d += " " + f.target;
      out.push_back({f.at_us, end, d});
    }
    return out;
  }

  struct ClientStats {
    uint64_t ok = 0;
    std::optional<int64_t> first_ok, last_ok;
    int64_t longest = 0;
    bool gave_up = false;
    uint64_t acknowledged = 0;
    uint64_t consumed = 0;
  };

  // Per client, within [from, to): ok ops, the longest time without one
  // (from `from` or the client's start to its first ok, between oks, from
  // the last ok to `to`).
  std::map<std::string, ClientStats> client_stats(int64_t from, int64_t to) const {
    std::map<std::string, ClientStats> out;
    std::map<std::string, int64_t> last;
    const int64_t start = clients_started_us < 0 ? to : std::max(from, clients_started_us);
    for (const auto& [name, p] : clients) {
      out[name];
      last[name] = start;
    }
    // Each history process resolved to its client once (null: not a client).
    std::vector<std::optional<std::pair<ClientStats*, int64_t*>>> resolved;
    // Only the ops in [from, to): found by binary search when the history is
    // in time order (as the clients record it), or else by looking at all.
    const std::vector<check::Op>& all = history->ops();
    auto range_begin = all.begin();
    auto range_end = all.end();
    if (history->in_time_order()) {
      const auto by_time = [](const check::Op& op, int64_t t) { return op.time_us < t; };
      range_begin = std::lower_bound(all.begin(), all.end(), from, by_time);
      range_end = std::lower_bound(range_begin, all.end(), to, by_time);
    }
    for (auto op_it = range_begin; op_it != range_end; ++op_it) {
      const check::Op& op = *op_it;
      if (op.time_us < from || op.time_us >= to) continue;
      if (op.process >= resolved.size()) resolved.resize(op.process + 1);
      auto& slot = resolved[op.process];
      if (!slot) {
        auto it = out.find(history->process_name(op.process));
        slot = it == out.end() ? std::pair<ClientStats*, int64_t*>{nullptr, nullptr}
                               : std::pair<ClientStats*, int64_t*>{&it->second, &last[it->first]};
      }
      if (slot->first == nullptr) continue;
      ClientStats& c = *slot->first;
      int64_t& last_ok = *slot->second;
      if (op.f == check::OpFunction::exit && history->string(op.detail).rfind("gave up", 0) == 0) c.gave_up = true;
      if (op.type != check::OpType::ok) continue;
      ++c.ok;
      // Data flowing: a send acknowledged, a record received.
      const bool flowed = op.f == check::OpFunction::send || (op.f == check::OpFunction::poll && op.partition >= 0);
      if (!flowed) continue;
      if (op.f == check::OpFunction::send) ++c.acknowledged;
      else ++c.consumed;
      if (!c.first_ok) c.first_ok = op.time_us;
      c.last_ok = op.time_us;
      c.longest = std::max(c.longest, op.time_us - last_ok);
      last_ok = std::max(last_ok, op.time_us);
    }
    for (auto& [name, c] : out) c.longest = std::max(c.longest, to - last[name]);
    return out;
  }

  nlohmann::json verdict_json(const check::Verdict& v, const nlohmann::json& final_state) const {
    nlohmann::json j;
    j["lost"] = v.lost.lost;
    j["duplicates"] = v.duplicates.duplicated;
    j["order_violations"] = v.order.violations;
    j["dirty_reads"] = v.dirty_reads.dirty;
    j["divergent"] = v.divergence.divergent_pairs;
    j["skipped"] = v.skips.skipped;
    uint64_t sent = 0;
    for (const check::Op& op : history->ops()) {
      if (op.f == check::OpFunction::send && op.type == check::OpType::invoke) ++sent;
    }
    j["sent"] = sent;
    const auto stats = client_stats(0, s.duration_us);
    uint64_t acknowledged = 0, consumed = 0;
    int64_t max_stall = 0;
    bool gave_up = false;
    nlohmann::json cj = nlohmann::json::object();
    for (const auto& [name, c] : stats) {
      const std::string role = s.workload.role_of(name);
      acknowledged += c.acknowledged;
      consumed += c.consumed;
      max_stall = std::max(max_stall, c.longest);
      const bool running = world.is_running(clients.at(name));
      if (role == "producer" && c.gave_up) gave_up = true;
      nlohmann::json one = {{"role", role},
                            {"ok", c.ok},
                            {"first_data_s", c.first_ok ? nlohmann::json(seconds(*c.first_ok)) : nlohmann::json()},
                            {"last_data_s", c.last_ok ? nlohmann::json(seconds(*c.last_ok)) : nlohmann::json()},
                            {"longest_stall_s", seconds(c.longest)},
                            {"gave_up", c.gave_up},
                            {"running", running}};
      if (role == "producer") one["acknowledged"] = c.acknowledged;
      else one["consumed"] = c.consumed;
      cj[name] = one;
    }
    j["acknowledged"] = acknowledged;
    j["consumed"] = consumed;
    j["max_stall_s"] = seconds(max_stall);
    j["producer_gave_up"] = gave_up;
    const int64_t final_epoch = final_state["controller_epoch"].get<int64_t>();
    j["controller_epoch_changes"] = epoch_at_start < 0 || final_epoch < 0 ? 0 : final_epoch - epoch_at_start;
    j["clients"] = cj;
    nlohmann::json phases = nlohmann::json::object();
    for (const PhaseSpec& p : s.phases) {
      nlohmann::json pj;
      uint64_t acks = 0, cons = 0;
      int64_t longest = 0;
      nlohmann::json pc = nlohmann::json::object();
      for (const auto& [name, c] : client_stats(p.from_us, p.to_us)) {
        acks += c.acknowledged;
        cons += c.consumed;
        longest = std::max(longest, c.longest);
        pc[name] = {{"ok", c.ok}, {"longest_stall_s", seconds(c.longest)}};
        if (s.workload.role_of(name) == "producer") pc[name]["acknowledged"] = c.acknowledged;
        else pc[name]["consumed"] = c.consumed;
      }
      pj["max_stall_s"] = seconds(longest);
      pj["acknowledged"] = acks;
      pj["consumed"] = cons;
      pj["clients"] = pc;
      phases[p.name] = pj;
    }
    j["phases"] = phases;
    j["final"] = final_state;
    j["snapshots"] = snapshots;
    j["checks"] = v.to_json();
    return j;
  }

  RunResult finish() {
    RunResult r;
    r.seed = seed;
    r.scenario = s.name;
    r.scenario_hash = s.hash;
    try {
      run_until(s.duration_us);
      if (world.now().us() < s.duration_us) world.run_until(sim::Time::from_us(s.duration_us));
      const nlohmann::json final_state = state_json();
      const check::FinalState fs = check::read_final_state(world, brokers, truncations->truncations());
      check::CheckOptions co;
      co.faults = fault_windows();
      co.end_time_us = s.duration_us;
      // A group whose members reset to the latest offset skips records when
      // a commit falls out of range, as Kafka documents: not judged.
      if (s.workload.type == "steady" &&
          s.workload.steady.options.consumer.auto_offset_reset != client::ConsumerConfig::Reset::latest) {
        co.skip_checked_groups.insert(s.workload.steady.options.groups.begin(), s.workload.steady.options.groups.end());
      }
      const check::Verdict v = check::check_all(*history, fs, co);
      r.verdict = verdict_json(v, final_state);
      for (const Expectation& e : s.expectations) {
        const Expectation::Result o = e.evaluate(r.verdict);
        r.expectations.push_back({e.text(), o.outcome, o.detail});
      }
    } catch (const sim::InvariantViolation& e) {
      r.invariant = InvariantBreak{world.now().us(), e.message(), fmt::format("{}:{}", e.file(), e.line())};
    }
    r.trace_hash = world.trace().hash();
    r.trace_records = world.trace().records();
    r.events = world.loop().executed();
    r.end_time_us = world.now().us();
    r.timeline = timeline;
    std::stable_sort(r.timeline.begin(), r.timeline.end(),
                     [](const TimelineEntry& a, const TimelineEntry& b) { return a.time_us < b.time_us; });
    return r;
  }

  // The length of the last history recorded on this thread, up to a bound:
  // the seeds of a sweep run the same scenario, so the next history will be
  // about as long, and reserving that much spares the copies of a growing
  // vector (a tenth of a second in a 1,000-seed sweep). Capacity only, so a
  // wrong guess changes nothing but memory: a small scenario run after a big
  // one on the same thread reserves what the big one used (224 MiB at most).
  static size_t& history_size_hint() {
    thread_local size_t hint = 0;
    return hint;
  }

  ~Impl() {
    constexpr size_t kMaxHint = size_t{1} << 22;  // 4 Mi ops, 224 MiB
    // Only from the run's own history: one the caller keeps (history_out)
    // may already be gone when the Run is.
    if (history == &own_history) {
      history_size_hint() = std::min(own_history.size() + own_history.size() / 8, kMaxHint);
    }
    world.set_invariant_check({});
    world.trace().remove_observer(observer);
  }

  Scenario s;
  uint64_t seed;
  RunOptions options;
  sim::World world;
  check::History own_history;
  check::History* history = nullptr;
  std::map<std::string, sim::HostId> hosts;
  std::map<int32_t, sim::ProcessId> zookeepers;
  std::map<int32_t, zk::ServerConfig> zk_configs;
  std::map<kafka::BrokerId, sim::ProcessId> brokers;
  std::map<std::string, sim::ProcessId> clients;
  std::optional<sim::ProcessId> admin;
  // Processes in a controlled shutdown after a `stop`: its SIGKILL deadline.
  std::map<sim::ProcessId, int64_t> stopping;
  std::string chroot;
  bool start_clients_at_boot = false;
  int64_t clients_started_us = -1;
  int64_t epoch_at_start = -1;
  std::vector<Fault> faults;
  size_t next_fault = 0;
  std::vector<Fault> applied;
  size_t next_snapshot = 0;
  nlohmann::json snapshots = nlohmann::json::object();
  std::vector<TimelineEntry> timeline;
  std::set<std::string> offline;
  std::unique_ptr<kafka::Invariants> invariants;
  std::unique_ptr<zk::EnsembleInvariants> zk_invariants;
  std::unique_ptr<check::TruncationRecorder> truncations;
  uint64_t observer = 0;
};

Run::Run(const Scenario& s, uint64_t seed, RunOptions options)
    : impl_(std::make_unique<Impl>(s, seed, std::move(options))) {}
Run::~Run() = default;
void Run::run_until(int64_t t_us) { impl_->run_until(t_us); }
RunResult Run::finish() { return impl_->finish(); }
sim::World& Run::world() { return impl_->world; }
const Scenario& Run::scenario() const { return impl_->s; }
const std::map<kafka::BrokerId, sim::ProcessId>& Run::brokers() const { return impl_->brokers; }
const std::map<int32_t, sim::ProcessId>& Run::zookeepers() const { return impl_->zookeepers; }

std::string Run::describe() const {
  const zk::Server* z = impl_->zk_server();
  if (z == nullptr) return "";
  return describe_topics(z->tree(), impl_->chroot);
}

std::optional<std::string> Run::zk_tree(const std::string& path) const {
  const zk::Server* z = impl_->zk_server();
  if (z == nullptr) return std::nullopt;
  const std::string p = path;
  if (z->tree().find(p) == nullptr) return std::nullopt;
  return ::scenario::zk_tree(z->tree(), p);
}

std::optional<std::string> Run::zk_get(const std::string& path) const {
  const zk::Server* z = impl_->zk_server();
  if (z == nullptr) return std::nullopt;
  return ::scenario::zk_get(z->tree(), path);
}

RunResult run_scenario(const Scenario& s, uint64_t seed, const RunOptions& options) {
  Run run(s, seed, options);
  return run.finish();
}

}  // namespace scenario
