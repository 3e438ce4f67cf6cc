#include "ping_protocol.h"

#include <map>
#include <variant>

#include <fmt/format.h>

namespace sim::testing {
namespace {

constexpr uint16_t kPort = 7000;

struct Ping {
  uint64_t seq;
};
struct Pong {
  uint64_t seq;
  uint64_t counter;
};
using Message = std::variant<Ping, Pong>;

struct Stats {
  uint64_t pongs = 0;
};

class PingNode final : public Process {
 public:
  PingNode(std::vector<std::string> peers, Stats& stats)
      : peers_(std::move(peers)), stats_(stats) {}

  void on_start() override {
    recover();
    ctx().listen(kPort);
    schedule_tick();
  }

  void on_terminate() override {
    // Orderly shutdown: make the counter durable, then leave.
    ctx().trace("shutting_down", {{"counter", counter_}});
    ctx().fsync(file_name(), [this] { ctx().exit(); });
  }

  void on_accept(SocketId socket, uint16_t) override { inbound_[socket.value] = socket; }

  void on_connected(SocketId socket) override {
    auto it = find_peer(socket);
    if (it == outbound_.end()) return;
    it->second.connected = true;
    ctx().cancel(it->second.connect_timer);
    ctx().trace("connected", {{"peer", it->first}});
    send_ping(it->second);
  }

  void on_connect_failed(SocketId socket, ConnectError error) override {
    auto it = find_peer(socket);
    if (it == outbound_.end()) return;
    ctx().trace("connect_failed", {{"peer", it->first}, {"error", to_string(error)}});
    ctx().cancel(it->second.connect_timer);
    outbound_.erase(it);
  }

  void on_message(SocketId socket, Payload& payload) override {
    const Message& m = *sim::payload_cast<Message>(&payload);
    if (const Ping* ping = std::get_if<Ping>(&m)) {
      ++counter_;
      ctx().disk().open(file_name()).append(std::to_string(counter_), ctx().now());
      if (counter_ % 4 == 0) ctx().fsync(file_name(), [] {});
      ctx().send(socket, Payload(Message(Pong{ping->seq, counter_})));
    } else {
      const Pong& pong = std::get<Pong>(m);
      ++stats_.pongs;
      ctx().trace("pong", {{"seq", pong.seq}, {"peer_counter", pong.counter}});
    }
  }

  void on_closed(SocketId socket, CloseReason reason) override {
    if (inbound_.erase(socket.value) != 0) {
      ctx().close(socket);
      return;
    }
    auto it = find_peer(socket);
    if (it == outbound_.end()) return;
    ctx().trace("disconnected", {{"peer", it->first}, {"reason", to_string(reason)}});
    ctx().close(socket);
    outbound_.erase(it);
  }

 private:
  struct Peer {
    SocketId socket;
    bool connected = false;
    TimerId connect_timer;
  };

  std::string file_name() const { return fmt::format("ping/{}/counter", ctx().name()); }

  void recover() {
    File& file = ctx().disk().open(file_name());
    size_t intact = file.size();
    if (intact > 0 && !file.records().back().intact) {
      --intact;
      file.truncate(intact, ctx().now());
    }
    for (size_t i = 0; i < intact; ++i) {
      SIM_ASSERT(file.records()[i].intact, "torn record inside the counter file");
      SIM_ASSERT(file.records()[i].data == std::to_string(i + 1),
                 "counter file of {} not consecutive at record {}", ctx().name(), i);
    }
    counter_ = intact;
    ctx().trace("recovered", {{"counter", counter_}});
  }

  void schedule_tick() {
    ctx().after(ctx().rng().uniform(Duration::millis(50), Duration::millis(150)), [this] {
      tick();
      schedule_tick();
    });
  }

  void tick() {
    const std::string& peer = ctx().rng().pick(peers_);
    auto it = outbound_.find(peer);
    if (it == outbound_.end()) {
      Peer p;
      p.socket = ctx().connect(peer, kPort);
      p.connect_timer = ctx().after(Duration::seconds(2), [this, peer] { connect_timeout(peer); });
      outbound_.emplace(peer, p);
      return;
    }
    if (it->second.connected) send_ping(it->second);
  }

  void connect_timeout(const std::string& peer) {
    auto it = outbound_.find(peer);
    if (it == outbound_.end() || it->second.connected) return;
    ctx().trace("connect_timeout", {{"peer", peer}});
    ctx().close(it->second.socket);
    outbound_.erase(it);
  }

  void send_ping(Peer& peer) { ctx().send(peer.socket, Payload(Message(Ping{++seq_}))); }

  std::map<std::string, Peer>::iterator find_peer(SocketId socket) {
    for (auto it = outbound_.begin(); it != outbound_.end(); ++it) {
      if (it->second.socket == socket) return it;
    }
    return outbound_.end();
  }

  std::vector<std::string> peers_;
  Stats& stats_;
  uint64_t counter_ = 0;
  uint64_t seq_ = 0;
  std::map<std::string, Peer> outbound_;
  std::map<uint64_t, SocketId> inbound_;
};

// Draws one fault from the seed and schedules its undoing.
class Nemesis {
 public:
  Nemesis(World& world, std::vector<HostId> hosts, std::vector<ProcessId> nodes)
      : world_(world), rng_(world.rng("nemesis")), hosts_(std::move(hosts)), nodes_(std::move(nodes)) {}

  void start(Time until) {
    until_ = until;
    next();
  }
  uint64_t faults() const { return faults_; }

 private:
  void next() {
    const Time at = world_.now() + rng_.uniform(Duration::millis(300), Duration::seconds(3));
    if (at >= until_) return;
    world_.loop().at(at, [this] {
      inject();
      next();
    });
  }

  Duration undo_after() { return rng_.uniform(Duration::millis(100), Duration::seconds(4)); }

  void later(Callback fn) { world_.loop().after(undo_after(), std::move(fn)); }

  void inject() {
    ++faults_;
    const size_t i = rng_.below(nodes_.size());
    const ProcessId node = nodes_[i];
    const HostId host = hosts_[i];
    switch (rng_.below(7)) {
      case 0:
        world_.kill(node);
        later([this, node] { world_.start(node); });
        break;
      case 1:
        world_.power_off(host);
        later([this, host] { world_.power_on(host); });
        break;
      case 2:
        world_.pause(node);
        later([this, node] { world_.resume(node); });
        break;
      case 3: {
        std::vector<HostId> shuffled = hosts_;
        rng_.shuffle(shuffled);
        const size_t cut = 1 + rng_.below(shuffled.size() - 1);
        world_.network().partition({std::vector<HostId>(shuffled.begin(), shuffled.begin() + cut),
                                    std::vector<HostId>(shuffled.begin() + cut, shuffled.end())});
        later([this] { world_.network().heal(); });
        break;
      }
      case 4:
        world_.network().isolate(host);
        later([this] { world_.network().heal(); });
        break;
      case 5:
        world_.network().block(host, hosts_[rng_.below(hosts_.size())]);
        later([this] { world_.network().heal(); });
        break;
      case 6:
        world_.terminate(node, rng_.uniform(Duration::millis(1), Duration::millis(50)));
        later([this, node] { world_.start(node); });
        break;
    }
  }

  World& world_;
  Rng rng_;
  std::vector<HostId> hosts_;
  std::vector<ProcessId> nodes_;
  Time until_;
  uint64_t faults_ = 0;
};

}  // namespace

PingRunResult run_ping_protocol(const PingRunOptions& options) {
  WorldOptions world_options;
  world_options.boot_delay = Duration::millis(500);
  World world(options.seed, world_options);
  world.trace().keep_lines(options.keep_lines);
  world.trace().set_text_sink(options.text);

  Stats stats;
  std::vector<std::string> addresses;
  std::vector<HostId> hosts;
  std::vector<ProcessId> nodes;
  for (int i = 1; i <= options.hosts; ++i) addresses.push_back(fmt::format("10.0.0.{}", i));
  for (int i = 1; i <= options.hosts; ++i) {
    const HostId h = world.add_host(fmt::format("node{}", i), addresses[i - 1]);
    std::vector<std::string> peers;
    for (const std::string& a : addresses) {
      if (a != addresses[i - 1]) peers.push_back(a);
    }
    hosts.push_back(h);
    nodes.push_back(world.add_process(h, fmt::format("ping{}", i), [peers, &stats] {
      return std::make_unique<PingNode>(peers, stats);
    }));
  }
  world.boot();

  Nemesis nemesis(world, hosts, nodes);
  nemesis.start(world.now() + options.chaos);
  world.run_for(options.chaos);
  // Let every undo land, then make sure the cluster is whole again.
  world.run_for(Duration::seconds(5));
  world.network().heal();
  for (HostId h : hosts) world.power_on(h);
  for (ProcessId p : nodes) {
    world.resume(p);
    world.start(p);
  }
  world.run_for(options.settle);

  PingRunResult result;
  result.hash = world.trace().hash();
  result.records = world.trace().records();
  result.events = world.loop().executed();
  result.pongs = stats.pongs;
  result.faults = nemesis.faults();
  result.lines = world.trace().lines();
  return result;
}

}  // namespace sim::testing
