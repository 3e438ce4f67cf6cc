#include "kafka/cluster.h"

#include <algorithm>

#include "model/kafka/config.h"
#include "model/properties.h"
#include "model/zk/config.h"
#include "sim/assert.h"

namespace kafka::testing {

namespace {
std::string broker_address(BrokerId id) { return fmt::format("10.0.1.{}", id); }
}  // namespace

Cluster::Cluster(ClusterOptions o) : options_(std::move(o)), world_(options_.seed, [&] {
  sim::WorldOptions w;
  w.boot_delay = options_.boot_delay;
  w.disk = options_.disk;
  w.network = options_.network;
  return w;
}()) {
  std::vector<sim::HostId> zk_hosts;
  for (int i = 1; i <= options_.zookeepers; ++i) {
    const std::string address = fmt::format("10.0.0.{}", i);
    zk_hosts.push_back(world_.add_host(fmt::format("zk{}", i), address));
    zk_addresses_.push_back(address);
  }
  for (int i = 1; i <= options_.zookeepers; ++i) {
    zk::ServerConfig c;
    c.myid = static_cast<zk::ServerId>(i);
    c.init_limit = options_.zk_init_limit;
    c.sync_limit = options_.zk_sync_limit;
    for (int j = 1; j <= options_.zookeepers; ++j) {
      c.servers[static_cast<zk::ServerId>(j)] = zk::PeerAddress{zk_addresses_[j - 1], 2888, 3888};
    }
    zk_procs_.push_back(world_.add_process(zk_hosts[i - 1], fmt::format("zk-{}", i), zk::server_factory(c)));
  }
  std::string connect;
  for (const std::string& a : zk_addresses_) connect += (connect.empty() ? "" : ",") + a + ":2181";
  connect += options_.chroot;
  for (BrokerId id = 1; id <= options_.brokers; ++id) {
    std::map<std::string, std::string> props = options_.broker_properties;
    props["broker.id"] = std::to_string(id);
    props["zookeeper.connect"] = connect;
    if (options_.brokers_share_host) {
      props["listeners"] = fmt::format("PLAINTEXT://:{}", 9000 + id);
      props["log.dirs"] = fmt::format("/tmp/kafka-logs-{}", id);
    }
    if (props.count("listeners") == 0) props["listeners"] = "PLAINTEXT://:9092";
    if (props.count("log.dirs") == 0) props["log.dirs"] = "/var/lib/kafka/data";
    properties_[id] = props;
    configs_[id] = parse_broker_config(model::from_map(props, fmt::format("broker {} properties", id)),
                                       options_.version);
    sim::HostId host;
    if (options_.brokers_share_host) {
      if (!shared_host_) shared_host_ = world_.add_host("kafka", "10.0.1.1");
      host = *shared_host_;
    } else if (options_.colocated && id <= options_.zookeepers) {
      host = zk_hosts[static_cast<size_t>(id - 1)];
    } else {
      host = world_.add_host(fmt::format("kafka{}", id), broker_address(id));
    }
    // The configuration as it is when the broker starts: reconfigure_broker
    // edits it for the next start, as an edit of server.properties would.
    broker_procs_[id] = world_.add_process(host, fmt::format("kafka-{}", id),
                                           [this, id] { return broker_factory(configs_.at(id))(); });
  }
  const sim::HostId client_host = world_.add_host("client", "10.0.9.1");
  client_proc_ = world_.add_process(client_host, "client",
                                    [] { return std::make_unique<ClientProcess>(); });
}

void Cluster::reconfigure_broker(BrokerId id, const std::map<std::string, std::string>& changes) {
  std::map<std::string, std::string>& props = properties_.at(id);
  for (const auto& [key, value] : changes) props[key] = value;
  configs_[id] = parse_broker_config(model::from_map(props, fmt::format("broker {} properties", id)),
                                     options_.version);
}

std::vector<BrokerId> Cluster::broker_ids() const {
  std::vector<BrokerId> ids;
  for (const auto& [id, _] : broker_procs_) ids.push_back(id);
  return ids;
}

std::vector<BrokerId> Cluster::broker_ids_except(BrokerId b) const {
  std::vector<BrokerId> ids = broker_ids();
  ids.erase(std::remove(ids.begin(), ids.end(), b), ids.end());
  return ids;
}

std::optional<BrokerId> Cluster::controller() const {
  std::optional<BrokerId> found;
  for (const auto& [id, _] : broker_procs_) {
    const Broker* b = broker(id);
    if (b != nullptr && b->is_controller()) {
      if (found) return std::nullopt;
      found = id;
    }
  }
  return found;
}

bool Cluster::await_topic_known(const std::string& topic, int32_t partitions, sim::Duration limit) {
  return run_until(
      [&] {
        for (const auto& [id, p] : broker_procs_) {
          if (!world_.is_running(p)) continue;
          const Broker* b = broker(id);
          if (b == nullptr) return false;
          for (int32_t i = 0; i < partitions; ++i) {
            auto it = b->metadata().partitions.find(TopicPartition{topic, i});
            if (it == b->metadata().partitions.end() || it->second.leader == kNoBroker) return false;
          }
        }
        return true;
      },
      limit);
}

bool Cluster::await_ready(sim::Duration limit) {
  return run_until(
      [this] {
        const size_t registered = zk_children(znodes::kBrokerIds).size();
        for (const auto& [id, p] : broker_procs_) {
          if (!world_.is_running(p)) continue;
          const Broker* b = broker(id);
          if (b == nullptr || !b->registered()) return false;
          // ... and knows, from the controller, of every registered broker.
          if (b->metadata().brokers.size() != registered) return false;
        }
        auto c = controller();
        return c.has_value() && broker(*c)->controller()->live_brokers().size() >= 1 &&
               !zk_children(znodes::kBrokerIds).empty();
      },
      limit);
}

std::optional<std::string> Cluster::zk_get(const std::string& path) const {
  // The most up-to-date running server's committed tree.
  const zk::Server* best = nullptr;
  for (sim::ProcessId p : zk_procs_) {
    const auto* s = world_.process_as<zk::Server>(p);
    if (s == nullptr) continue;
    if (best == nullptr || s->last_committed() > best->last_committed()) best = s;
  }
  if (best == nullptr) return std::nullopt;
  const auto* node = best->tree().find(options_.chroot + path);
  if (node == nullptr) return std::nullopt;
  return node->data;
}

std::vector<std::string> Cluster::zk_children(const std::string& path) const {
  const zk::Server* best = nullptr;
  for (sim::ProcessId p : zk_procs_) {
    const auto* s = world_.process_as<zk::Server>(p);
    if (s == nullptr) continue;
    if (best == nullptr || s->last_committed() > best->last_committed()) best = s;
  }
  if (best == nullptr) return {};
  return best->tree().children(options_.chroot + path).value_or(std::vector<std::string>{});
}

std::optional<znodes::LeaderAndIsr> Cluster::state(const TopicPartition& tp) const {
  auto data = zk_get(znodes::partition_state_path(tp));
  if (!data) return std::nullopt;
  return znodes::decode_partition_state(*data);
}

std::optional<ControllerEpoch> Cluster::controller_epoch() const {
  auto data = zk_get(znodes::kControllerEpoch);
  if (!data) return std::nullopt;
  return znodes::decode_controller_epoch(*data);
}

ClientProcess* Cluster::client() {
  if (!world_.is_running(client_proc_)) world_.start(client_proc_);
  return world_.process_as<ClientProcess>(client_proc_);
}

std::optional<Response> Cluster::request(BrokerId to, Request request, sim::Duration limit) {
  auto result = std::make_shared<std::optional<Response>>();
  auto done = std::make_shared<bool>(false);
  send(to, std::move(request), [result, done](SendError e, const Response* r) {
    if (e == SendError::none && r != nullptr) *result = *r;
    *done = true;
  });
  run_until([done] { return *done; }, limit);
  return *result;
}

void Cluster::send(BrokerId to, Request request, NetworkClient::Completion done,
                   bool expect_response, int connection) {
  const BrokerConfig& c = configs_.at(to);
  const std::string host = world_.network().address(broker_host(to));
  client()->client().send(client_node(to, connection), NodeAddress{host, c.listeners.front().port},
                          std::move(request), std::move(done), expect_response);
}

bool Cluster::client_connected(BrokerId to, int connection) {
  return client()->client().connected(client_node(to, connection));
}

ErrorCode Cluster::create_topic(const std::string& name, int32_t partitions, int16_t rf,
                                std::map<std::string, std::string> configs,
                                std::map<int32_t, std::vector<BrokerId>> assignment) {
  await_ready();
  auto c = controller();
  if (!c) return ErrorCode::not_controller;
  NewTopic t{name, partitions, rf, std::move(assignment), std::move(configs)};
  auto resp = request(*c, CreateTopicsRequest{{t}, 30000});
  if (!resp) return ErrorCode::request_timed_out;
  const auto& r = std::get<CreateTopicsResponse>(*resp);
  if (r.topics.empty()) return ErrorCode::unknown_server_error;
  if (r.topics[0].error != ErrorCode::none) return r.topics[0].error;
  const int32_t n = partitions > 0 ? partitions : static_cast<int32_t>(t.assignment.size());
  run_until(
      [&] {
        for (int32_t p = 0; p < n; ++p) {
          auto s = state({name, p});
          if (!s || s->leader == kNoBroker) return false;
          const Broker* leader = broker(s->leader);
          if (leader == nullptr) return false;
          const Partition* part = leader->partition({name, p});
          if (part == nullptr || !part->is_leader()) return false;
        }
        return true;
      },
      sim::Duration::seconds(30));
  return ErrorCode::none;
}

void Cluster::produce_async(const TopicPartition& tp, const std::vector<uint64_t>& values,
                            int16_t acks, std::shared_ptr<std::optional<ProducePartitionResponse>> out,
                            int32_t timeout_ms, int32_t size) {
  auto s = state(tp);
  if (!s || s->leader == kNoBroker) return;
  ProduceBatch b;
  b.tp = tp;
  for (uint64_t v : values) {
    Record r;
    r.value = v;
    r.size = size;
    b.records.push_back(r);
  }
  const BrokerId to = s->leader;
  const std::string host = world_.network().address(broker_host(to));
  client()->client().send(to, NodeAddress{host, configs_.at(to).listeners.front().port},
                          ProduceRequest{acks, timeout_ms, {b}},
                          [out](SendError e, const Response* r) {
                            if (e != SendError::none || r == nullptr) return;
                            const auto& pr = std::get<ProduceResponse>(*r);
                            if (!pr.partitions.empty()) *out = pr.partitions.front();
                          });
}

std::optional<ProducePartitionResponse> Cluster::produce(const TopicPartition& tp,
                                                         const std::vector<uint64_t>& values,
                                                         int16_t acks, int32_t timeout_ms,
                                                         int32_t size) {
  auto out = std::make_shared<std::optional<ProducePartitionResponse>>();
  produce_async(tp, values, acks, out, timeout_ms, size);
  if (acks == 0) {
    run_for(sim::Duration::millis(50));
    return std::nullopt;
  }
  run_until([out] { return out->has_value(); }, sim::Duration::millis(timeout_ms + 5000));
  return *out;
}

std::vector<uint64_t> Cluster::committed_values(const TopicPartition& tp) {
  std::vector<uint64_t> out;
  auto s = state(tp);
  if (!s || s->leader == kNoBroker) return out;
  const Broker* b = broker(s->leader);
  if (b == nullptr) return out;
  const Partition* p = b->partition(tp);
  if (p == nullptr) return out;
  for (const Record& r : p->log().read(p->log().log_start(), p->high_watermark(), INT64_MAX)) {
    out.push_back(r.value);
  }
  return out;
}

std::vector<uint64_t> Cluster::log_values(BrokerId id, const TopicPartition& tp) const {
  std::vector<uint64_t> out;
  const Broker* b = broker(id);
  if (b == nullptr) return out;
  const Partition* p = b->partition(tp);
  if (p == nullptr) return out;
  for (const Record& r : p->log().read(p->log().log_start(), p->log().log_end(), INT64_MAX)) {
    out.push_back(r.value);
  }
  return out;
}

ClusterOptions on_protocol(VersionProfile v, const char* protocol) {
  ClusterOptions o{.brokers = 3, .version = v};
  if (protocol != nullptr && *protocol != '\0') o.broker_properties = {{"inter.broker.protocol.version", protocol}};
  return o;
}

void cut(Cluster& c, BrokerId a, BrokerId b) {
  c.world().network().block(c.broker_host(a), c.broker_host(b));
  c.world().network().block(c.broker_host(b), c.broker_host(a));
}

size_t count_kind(const Cluster& c, const std::string& kind) {
  const std::string needle = "\"kind\":\"" + kind + "\"";
  size_t n = 0;
  for (const std::string& line : const_cast<Cluster&>(c).world().trace().lines()) {
    n += line.find(needle) != std::string::npos ? 1 : 0;
  }
  return n;
}

void cut_from_zookeeper(Cluster& c, BrokerId b) {
  const sim::HostId zk = c.world().host_of(c.zk_process(1));
  c.world().network().block(c.broker_host(b), zk);
  c.world().network().block(zk, c.broker_host(b));
}

bool registered(Cluster& c, BrokerId b) {
  const std::vector<std::string> ids = c.zk_children("/brokers/ids");
  return std::find(ids.begin(), ids.end(), std::to_string(b)) != ids.end();
}

BrokerId non_controller(Cluster& c) {
  const BrokerId ctl = *c.controller();
  for (BrokerId b : c.broker_ids()) {
    if (b != ctl) return b;
  }
  return ctl;
}

std::vector<BrokerId> leader_first(Cluster& c, BrokerId leader) {
  std::vector<BrokerId> r{leader};
  for (BrokerId b : c.broker_ids()) {
    if (b != leader) r.push_back(b);
  }
  return r;
}

}  // namespace kafka::testing
