// A small DSL for Kafka scenario tests: a ZooKeeper ensemble and brokers,
// each on a host of its own (or sharing hosts), and a client process that
// sends raw protocol requests — enough to drive the brokers in tests below the
// client library (model/client/).
//
//   Cluster c({.brokers = 3});
//   c.start();
//   c.create_topic("t", 3, 3);
//   c.kill_broker(2);
//   EXPECT_EQ(c.state({"t", 0})->leader, 1);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/kafka/broker.h"
#include "model/kafka/invariants.h"
#include "model/kafka/network_client.h"
#include "model/kafka/znodes.h"
#include "model/zk/server.h"
#include "sim/world.h"

namespace kafka::testing {

// A process holding a NetworkClient; tests send it requests and wait.
class ClientProcess final : public sim::Process {
 public:
  void on_start() override {
    client_ = std::make_unique<NetworkClient>(ctx(), NetworkClient::Options{30000, 5});
  }
  void on_connected(sim::SocketId s) override { client_->on_connected(s); }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override {
    client_->on_connect_failed(s, e);
  }
  void on_message(sim::SocketId s, sim::Payload& p) override { client_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { client_->on_closed(s, r); }
  NetworkClient& client() { return *client_; }

 private:
  std::unique_ptr<NetworkClient> client_;
};

struct ClusterOptions {
  int zookeepers = 1;
  int brokers = 3;
  uint64_t seed = 1;
  VersionProfile version = VersionProfile::v2_8;
  // Extra broker properties (Kafka names) applied to every broker.
  std::map<std::string, std::string> broker_properties = {};
  std::string chroot = "";  // e.g. "/kafka"
  // When true, ZooKeeper server i and broker i share host i.
  bool colocated = false;
  // When true, every broker runs on one host "kafka" (seeds/004): each gets
  // its own port (9000 + id) and log directory (/tmp/kafka-logs-<id>).
  bool brokers_share_host = false;
  sim::Duration boot_delay = sim::Duration::seconds(1);
  sim::DiskOptions disk = {};
  sim::NetworkOptions network = {};
  // zoo.cfg's initLimit and syncLimit (ticks of 2 s).
  int32_t zk_init_limit = 10;
  int32_t zk_sync_limit = 5;
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions o = {});

  sim::World& world() { return world_; }
  const ClusterOptions& options() const { return options_; }
  void start() { world_.boot(); }
  void run_for(sim::Duration d) { world_.run_for(d); }
  bool run_until(const std::function<bool()>& done, sim::Duration limit) {
    return world_.run_until(done, world_.now() + limit);
  }

  // --- brokers --------------------------------------------------------------------
  sim::ProcessId broker_process(BrokerId id) const { return broker_procs_.at(id); }
  const std::map<BrokerId, sim::ProcessId>& broker_processes() const { return broker_procs_; }
  sim::HostId broker_host(BrokerId id) const { return world_.host_of(broker_procs_.at(id)); }
  sim::ProcessId zk_process(int i) const { return zk_procs_.at(static_cast<size_t>(i - 1)); }
  Broker* broker(BrokerId id) const { return world_.process_as<Broker>(broker_procs_.at(id)); }
  std::vector<BrokerId> broker_ids() const;
  // The brokers other than `b` (e.g. the controller), in id order.
  std::vector<BrokerId> broker_ids_except(BrokerId b) const;
  const BrokerConfig& broker_config(BrokerId id) const { return configs_.at(id); }
  // Changes broker `id`'s properties from its next start on (a running
  // broker keeps the configuration it started with).
  void reconfigure_broker(BrokerId id, const std::map<std::string, std::string>& changes);
  void kill_broker(BrokerId id) { world_.kill(broker_process(id)); }
  void start_broker(BrokerId id) { world_.start(broker_process(id)); }
  // SIGTERM with a grace period (docker stop waits 10 s).
  void stop_broker(BrokerId id, sim::Duration grace = sim::Duration::seconds(30)) {
    world_.terminate(broker_process(id), grace);
  }
  void pause_broker(BrokerId id) { world_.pause(broker_process(id)); }
  void resume_broker(BrokerId id) { world_.resume(broker_process(id)); }
  void power_off_broker(BrokerId id) { world_.power_off(broker_host(id)); }
  void power_on_broker(BrokerId id) { world_.power_on(broker_host(id)); }

  // The active controller (exactly one broker says so), if any.
  std::optional<BrokerId> controller() const;
  // Waits until every running broker is registered and a controller exists.
  bool await_ready(sim::Duration limit = sim::Duration::seconds(60));
  // Waits until every running broker's metadata cache has each of the
  // topic's `partitions` partitions with a leader (the controller's
  // UpdateMetadata has reached it): CreateTopics answers once the
  // controller's own cache has them, the others may lag by a round trip.
  bool await_topic_known(const std::string& topic, int32_t partitions,
                         sim::Duration limit = sim::Duration::seconds(10));

  // --- ZooKeeper, read straight from the serving leader's tree --------------------
  std::optional<std::string> zk_get(const std::string& path) const;
  std::vector<std::string> zk_children(const std::string& path) const;
  std::optional<znodes::LeaderAndIsr> state(const TopicPartition& tp) const;
  std::optional<ControllerEpoch> controller_epoch() const;

  // --- requests from a client process ---------------------------------------------
  // Sends `request` to broker `to` and waits (virtual time) for the answer.
  std::optional<Response> request(BrokerId to, Request request,
                                  sim::Duration limit = sim::Duration::seconds(60));
  // Queues `request` for broker `to` without waiting; `done` runs with the
  // answer (or at once, when `expect_response` is false: acks=0). Requests
  // with another `connection` number go over a connection of their own, as
  // a second client's would (a broker serves one request per connection at
  // a time).
  void send(BrokerId to, Request request, NetworkClient::Completion done,
            bool expect_response = true, int connection = 0);
  // Whether send()'s connection `connection` to `to` is up.
  bool client_connected(BrokerId to, int connection = 0);
  // CreateTopics through the controller; waits until every partition has a
  // leader in ZooKeeper. Returns the error of the request.
  ErrorCode create_topic(const std::string& name, int32_t partitions, int16_t rf,
                         std::map<std::string, std::string> configs = {},
                         std::map<int32_t, std::vector<BrokerId>> assignment = {});
  // Produces `values` (one record each, `size` bytes) to the leader of `tp`
  // named in ZooKeeper; returns the response (nullopt: no answer / failure).
  std::optional<ProducePartitionResponse> produce(const TopicPartition& tp,
                                                  const std::vector<uint64_t>& values,
                                                  int16_t acks, int32_t timeout_ms = 30000,
                                                  int32_t size = 70);
  // Like produce, but does not wait: the answer lands in `*out` later.
  void produce_async(const TopicPartition& tp, const std::vector<uint64_t>& values, int16_t acks,
                     std::shared_ptr<std::optional<ProducePartitionResponse>> out,
                     int32_t timeout_ms = 30000, int32_t size = 70);
  // Values below the high watermark of the current leader (a consumer's view).
  std::vector<uint64_t> committed_values(const TopicPartition& tp);
  // Values in a broker's local log, whatever its role.
  std::vector<uint64_t> log_values(BrokerId id, const TopicPartition& tp) const;

 private:
  ClientProcess* client();
  // The client keeps a connection per node id: another id, another connection.
  static int32_t client_node(BrokerId to, int connection) { return to + 1000 * connection; }

  ClusterOptions options_;
  sim::World world_;
  std::vector<sim::ProcessId> zk_procs_;
  std::vector<std::string> zk_addresses_;
  std::map<BrokerId, sim::ProcessId> broker_procs_;
  std::map<BrokerId, std::map<std::string, std::string>> properties_;
  std::map<BrokerId, BrokerConfig> configs_;
  sim::ProcessId client_proc_;
  std::optional<sim::HostId> shared_host_;
};

// The model's invariants (model/kafka/invariants.h), checked after every
// event of the cluster's world.
class InvariantChecker : public Invariants {
 public:
  explicit InvariantChecker(Cluster& c) : Invariants(c.world(), c.broker_processes()) {
    c.world().set_invariant_check([this] { check(); });
  }
};

// Helpers the scenario tests share.
// Cuts broker `a` off from broker `b` in both directions.
void cut(Cluster& c, BrokerId a, BrokerId b);
// Three brokers of release `v`, on inter-broker protocol `protocol` when one
// is given (nullptr or "": the release's own).
ClusterOptions on_protocol(VersionProfile v, const char* protocol);
// Cuts broker `b` off from the (first) ZooKeeper server in both directions.
void cut_from_zookeeper(Cluster& c, BrokerId b);
// A broker other than the controller, so that killing it does not also move
// the controller.
BrokerId non_controller(Cluster& c);
// A replica list with `leader` first (the preferred leader), then the others.
std::vector<BrokerId> leader_first(Cluster& c, BrokerId leader);
// How many trace lines of this kind were kept (trace().keep_lines(true)).
size_t count_kind(const Cluster& c, const std::string& kind);
// Whether /brokers/ids/<b> exists.
bool registered(Cluster& c, BrokerId b);

}  // namespace kafka::testing
