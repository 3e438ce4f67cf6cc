// A small DSL for ZooKeeper scenario tests: an ensemble of servers on their
// own hosts, and client processes that wrap zk::Client and record what they
// saw. Used by the ensemble tests and the properties.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/zk/client.h"
#include "model/zk/invariants.h"
#include "model/zk/server.h"
#include "sim/world.h"

namespace zk::testing {

// A process that only holds a ZooKeeper client and records its events.
class ClientProcess final : public sim::Process, public ClientListener {
 public:
  explicit ClientProcess(ClientConfig config) : config_(std::move(config)) {}

  void on_start() override {
    client_ = std::make_unique<Client>(ctx(), config_, *this);
    client_->start();
  }
  void on_connected(sim::SocketId s) override {
    if (client_->on_connected(s)) tcp_connected_at.push_back(ctx().now());
  }
  void on_connect_failed(sim::SocketId s, sim::ConnectError e) override {
    client_->on_connect_failed(s, e);
  }
  void on_message(sim::SocketId s, sim::Payload& p) override { client_->on_message(s, p); }
  void on_closed(sim::SocketId s, sim::CloseReason r) override { client_->on_closed(s, r); }

  void on_session_state(SessionState state) override {
    states.push_back(state);
    ctx().trace("session_state", {{"state", to_string(state)}});
  }
  void on_watch(const WatchEvent& e) override { watches.push_back(e); }

  Client& client() { return *client_; }

  std::vector<SessionState> states;
  std::vector<WatchEvent> watches;
  // When each of the client's TCP connections to a server completed.
  std::vector<sim::Time> tcp_connected_at;

 private:
  ClientConfig config_;
  std::unique_ptr<Client> client_;
};

struct EnsembleOptions {
  int servers = 3;
  uint64_t seed = 1;
  int64_t tick_ms = 2000;
  int32_t init_limit = 10;
  int32_t sync_limit = 5;
  bool force_sync = true;
};

class Ensemble {
 public:
  explicit Ensemble(EnsembleOptions o = {}) : options_(o), world_(o.seed) {
    for (int i = 1; i <= o.servers; ++i) {
      const std::string address = fmt::format("10.0.0.{}", i);
      hosts_.push_back(world_.add_host(fmt::format("zk{}", i), address));
      addresses_.push_back(address);
    }
    for (int i = 1; i <= o.servers; ++i) {
      ServerConfig c;
      c.tick_time_ms = o.tick_ms;
      c.init_limit = o.init_limit;
      c.sync_limit = o.sync_limit;
      c.force_sync = o.force_sync;
      c.myid = static_cast<ServerId>(i);
      for (int j = 1; j <= o.servers; ++j) {
        c.servers[static_cast<ServerId>(j)] = PeerAddress{addresses_[j - 1], 2888, 3888};
      }
      servers_.push_back(world_.add_process(hosts_[i - 1], fmt::format("zk-{}", i), server_factory(c)));
    }
  }

  sim::World& world() { return world_; }
  int size() const { return options_.servers; }
  sim::HostId host(int i) const { return hosts_.at(i - 1); }
  sim::ProcessId process(int i) const { return servers_.at(i - 1); }
  Server* server(int i) const { return world_.process_as<Server>(servers_.at(i - 1)); }
  std::string connect_string() const {
    std::string s;
    for (const std::string& a : addresses_) s += (s.empty() ? "" : ",") + a + ":2181";
    return s;
  }

  // Adds a client on a host of its own (10.0.1.N).
  ClientProcess* add_client(const std::string& name, int32_t timeout_ms = 6000,
                            std::optional<std::string> connect = std::nullopt) {
    const sim::HostId h =
        world_.add_host(name, fmt::format("10.0.1.{}", ++clients_));
    ClientConfig config{{connect.value_or(connect_string())}, timeout_ms};
    const sim::ProcessId p = world_.add_process(
        h, name, [config] { return std::make_unique<ClientProcess>(config); });
    world_.start(p);
    client_ids_[name] = p;
    return world_.process_as<ClientProcess>(p);
  }
  sim::ProcessId client_process(const std::string& name) const { return client_ids_.at(name); }
  ClientProcess* client(const std::string& name) const {
    return world_.process_as<ClientProcess>(client_ids_.at(name));
  }

  void start() { world_.boot(); }
  void run_for(sim::Duration d) { world_.run_for(d); }
  bool run_until(const std::function<bool()>& done, sim::Duration limit) {
    return world_.run_until(done, world_.now() + limit);
  }

  // The server that leads and serves, if exactly one does.
  std::optional<int> leader() const {
    std::optional<int> found;
    for (int i = 1; i <= size(); ++i) {
      const Server* s = server(i);
      if (s != nullptr && s->state() == PeerState::leading && s->serving()) {
        if (found) return std::nullopt;
        found = i;
      }
    }
    return found;
  }
  int serving_count() const {
    int n = 0;
    for (int i = 1; i <= size(); ++i) n += server(i) != nullptr && server(i)->serving() ? 1 : 0;
    return n;
  }

 private:
  EnsembleOptions options_;
  sim::World world_;
  std::vector<sim::HostId> hosts_;
  std::vector<std::string> addresses_;
  std::vector<sim::ProcessId> servers_;
  std::map<std::string, sim::ProcessId> client_ids_;
  int clients_ = 0;
};

// Runs `op` (which must call the completion it is given) and waits for the
// completion, at most `limit` of virtual time.
template <typename Result>
std::optional<Result> await(Ensemble& e, const std::function<void(std::function<void(Result)>)>& op,
                            sim::Duration limit = sim::Duration::seconds(30)) {
  auto result = std::make_shared<std::optional<Result>>();
  op([result](Result r) { *result = std::move(r); });
  e.run_until([&] { return result->has_value(); }, limit);
  return *result;
}

// Checks the ensemble's safety invariants after every event:
//  - at most one established leader per epoch, ever;
//  - every committed transaction is the same on every server that has it
//    (zxid -> the same bytes), and servers at the same committed zxid hold
//    the same tree (digest), so committed history forms one sequence;
//  - epochs never go backwards on a running server.
// The ensemble's invariants after every event (model/zk/invariants.h), and
// one more the scenario runner leaves out for its cost: every server's tree
// has the same digest at the same committed zxid.
class EnsembleChecker {
 public:
  explicit EnsembleChecker(Ensemble& e) : e_(e), invariants_(e.world(), servers(e)) {
    e.world().set_invariant_check([this] { check(); });
  }
  void check() {
    invariants_.check();
    for (int i = 1; i <= e_.size(); ++i) {
      const Server* s = e_.server(i);
      if (s == nullptr) continue;
      const Zxid committed = s->last_committed();
      uint64_t& seen = checked_[i];
      if (committed.value == seen) continue;
      const uint64_t digest = s->tree().digest();
      auto [it, inserted] = digests_.emplace(committed.value, digest);
      SIM_ASSERT(inserted || it->second == digest, "server {} diverged at {}", i,
                 to_string(committed));
      seen = committed.value;
    }
  }
  size_t epochs_with_leaders() const { return invariants_.epochs_with_leaders(); }

 private:
  static std::vector<std::pair<ServerId, sim::ProcessId>> servers(Ensemble& e) {
    std::vector<std::pair<ServerId, sim::ProcessId>> out;
    for (int i = 1; i <= e.size(); ++i) out.emplace_back(static_cast<ServerId>(i), e.process(i));
    return out;
  }
  Ensemble& e_;
  EnsembleInvariants invariants_;
  std::map<int, uint64_t> checked_;
  std::map<uint64_t, uint64_t> digests_;
};

}  // namespace zk::testing
