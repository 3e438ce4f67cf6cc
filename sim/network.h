// The simulated network: hosts with addresses, TCP-like connections between
// processes, per-link latency, and partitions.
//
// A connection is two in-order byte streams, each modelled as a queue of
// items (the SYN, the SYN-ACK, data, FIN, RST) that land no earlier than the
// item before them. What a caller sees when something goes wrong is what a
// real socket shows, because the three answers come from three mechanisms:
//   - connection refused at once: the peer host is up and reachable but no
//     process listens on the port (its kernel answers the SYN with RST);
//   - connection reset: the peer process died (kill -9) and its kernel
//     resets the connection, or the peer host rebooted and no longer knows it;
//   - silence: the peer host is powered off, its address was given to no one,
//     or a partition cuts the path. Nothing answers; the sender retransmits
//     with exponential backoff (like Linux: SYN every 1, 2, 4 ... s, data from
//     200 ms doubling to 120 s) and, unless the path returns, gives up after
//     `syn_retries` / `data_abort_after` with a timeout. A client almost
//     always gives up first, on its own timer.
// After a heal, a stalled stream resumes at its next retransmission, not at
// once — as with real TCP, a long partition leaves a long backoff behind.
//
// Reachability is a directed graph over hosts (Boost.Graph adjacency matrix):
// an edge a -> b means packets from a reach b. Partitions remove edges; heal
// restores them all. A stream needs only its own direction (data crossing a
// one-way cut in the other direction still lands). Loopback traffic on one
// host is never cut.
//
// The network knows processes only as `Endpoint`s and reaches them through a
// `NetworkHost` (the world), which runs a callback in the process's context —
// later if it is paused, never if it died.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_matrix.hpp>

#include "sim/event_loop.h"
#include "sim/fifo.h"
#include "sim/ids.h"
#include "sim/payload.h"
#include "sim/random.h"
#include "sim/trace.h"

namespace sim {

enum class ConnectError { refused, timed_out, unreachable };
enum class CloseReason { eof, reset, timed_out };
const char* to_string(ConnectError e);
const char* to_string(CloseReason r);

// What the network calls back on. A process implements this.
class SocketHandler {
 public:
  virtual ~SocketHandler() = default;
  // A listener accepted `socket`, a new connection to `port`.
  virtual void on_accept(SocketId socket, uint16_t port) = 0;
  virtual void on_connected(SocketId socket) = 0;
  virtual void on_connect_failed(SocketId socket, ConnectError error) = 0;
  // The payload is the receiver's: it may move the value out.
  virtual void on_message(SocketId socket, Payload& payload) = 0;
  // The peer closed (eof), reset, or the connection timed out. Not called
  // for a socket the process closed itself.
  virtual void on_closed(SocketId socket, CloseReason reason) = 0;
};

// A process incarnation as the network sees it.
struct Endpoint {
  ProcessId process;
  uint64_t incarnation = 0;
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// The world, as the network needs it.
class NetworkHost {
 public:
  virtual ~NetworkHost() = default;
  virtual bool alive(const Endpoint& e) const = 0;
  // Alive and not paused: something posted to it would run at once.
  virtual bool runnable(const Endpoint& e) const = 0;
  // Runs `fn` in the context of `e`: deferred while it is paused, dropped if
  // it is dead by then.
  virtual void post(const Endpoint& e, Callback fn) = 0;
  virtual SocketHandler* handler(const Endpoint& e) = 0;
};

// One-way latency of a link: `base` plus a random part.
struct LatencyModel {
  enum class Kind { constant, uniform, exponential, normal };
  Kind kind = Kind::uniform;
  Duration base = Duration::micros(200);
  // uniform: extra in [0, spread]; exponential: mean extra; normal: stddev
  // around base + spread (clamped at base).
  Duration spread = Duration::micros(300);

  static LatencyModel constant(Duration d) { return {Kind::constant, d, Duration::zero()}; }
  static LatencyModel uniform(Duration lo, Duration hi) { return {Kind::uniform, lo, hi - lo}; }
  Duration sample(Rng& rng) const;
};

struct NetworkOptions {
  LatencyModel latency;
  LatencyModel loopback = LatencyModel::constant(Duration::micros(30));
  // Linux defaults: tcp_syn_retries = 6 (1+2+4+8+16+32+64 s ~ 127 s), and
  // tcp_retries2 = 15 which with a 200 ms minimum RTO comes to ~924.6 s.
  int syn_retries = 6;
  Duration syn_initial_rto = Duration::seconds(1);
  Duration data_initial_rto = Duration::millis(200);
  Duration max_rto = Duration::seconds(120);
  Duration data_abort_after = Duration::micros(924'600'000);
  // On one L2 segment a connect to a host that is powered off fails with
  // EHOSTUNREACH ("No route to host") once ARP gives up — on Linux after 3
  // unanswered solicitations a second apart — instead of retrying the SYN
  // for two minutes. Duration::max() (the default) models a routed network,
  // where the SYN just goes unanswered. A partition is never "unreachable":
  // the host still answers ARP; only its TCP traffic is cut.
  Duration host_unreachable_after = Duration::max();
};

class Network {
 public:
  Network(EventLoop& loop, Trace& trace, Rng rng, NetworkHost& world, NetworkOptions options = {});

  // --- hosts ---------------------------------------------------------------
  HostId add_host(const std::string& name, const std::string& address);
  const std::string& address(HostId h) const { return hosts_.at(h.value).address; }
  const std::string& name(HostId h) const { return hosts_.at(h.value).name; }
  std::optional<HostId> host_at(const std::string& address) const;
  size_t host_count() const { return hosts_.size(); }
  // The host behind `address` from now on; the old address answers nothing.
  void set_address(HostId h, const std::string& address);
  // A host whose power went off: its kernel and every connection state die.
  void host_down(HostId h);
  void host_up(HostId h);
  bool is_up(HostId h) const { return hosts_.at(h.value).up; }

  // --- partitions ----------------------------------------------------------
  // Hosts in different groups stop reaching each other, both ways. Hosts in
  // no group keep every link they have. Cuts accumulate until `heal`.
  void partition(const std::vector<std::vector<HostId>>& groups);
  // Packets from `from` no longer reach `to` (the reverse is untouched).
  void block(HostId from, HostId to);
  void isolate(HostId h);
  void heal();
  bool reachable(HostId from, HostId to) const;
  // Groups of hosts that reach each other both ways, each sorted, ordered by
  // their smallest host id.
  std::vector<std::vector<HostId>> components() const;

  // --- latency -------------------------------------------------------------
  void set_latency(LatencyModel m) { options_.latency = m; }
  // Overrides the latency from `from` to `to` (one direction).
  void set_link_latency(HostId from, HostId to, LatencyModel m);

  // --- sockets -------------------------------------------------------------
  void listen(HostId host, uint16_t port, const Endpoint& owner);
  void unlisten(HostId host, uint16_t port);
  // Opens a connection from a process on `from` to `address:port`. The answer
  // comes later: on_connected, on_connect_failed(refused or timed_out), or
  // nothing until the caller closes the socket.
  SocketId connect(HostId from, const Endpoint& owner, const std::string& address, uint16_t port);
  // Sends on an open socket. Sending on a socket the peer has closed or reset
  // is allowed and lost, as with a real socket before it notices.
  void send(SocketId s, Payload&& payload);
  // Closes the socket: the peer gets eof after what was already sent.
  void close(SocketId s);
  bool is_open(SocketId s) const;
  std::string peer_address(SocketId s) const;

  // The process behind `owner` died: its kernel resets (kill) or closes
  // (orderly exit) every connection it had and drops its listeners.
  void process_exited(const Endpoint& owner, CloseReason how);

  size_t open_connections() const { return links_.size(); }

 private:
  // What travels on a stream; `timeout` never travels, the sender's kernel
  // reports it.
  enum class ItemKind : uint8_t { syn, syn_ack, refused, data, fin, rst, timeout, unreachable };
  struct Item {
    ItemKind kind;
    Time arrival;
    Payload payload;
  };
  struct Stream {
    Fifo<Item> items;  // mostly one or none
    Time last_arrival = Time::zero();
    TimerId timer;
    // Retransmission state while the head cannot be delivered.
    bool stalled = false;
    Time stalled_since = Time::zero();
    Duration rto = Duration::zero();
    int retries = 0;
  };
  enum class SideState : uint8_t { connecting, open, closed };
  struct Side {
    HostId host;
    std::string address;  // the host's address when this side was created
    uint64_t boot = 0;    // the host's boot count then
    Endpoint owner;
    SideState state = SideState::connecting;  // as the side's kernel sees it
    bool released = false;  // closed by its process, or the process is gone
    uint32_t address_id = 0;  // `address`, interned (address_id())
  };
  struct Link {
    Side side[2];          // 0: the connecting side, 1: the accepting side
    Stream stream[2];      // stream[i] carries side i's packets to side 1-i
    uint16_t port = 0;
    bool accepted = false;  // a listener took the SYN; side[1] is a real socket
  };
  // Links by id: ordered, for the walks over every link (a host powering
  // off, a process exiting), with an index by id for the lookups on every
  // packet. Ids are handed out in sequence, so the index is a vector; it
  // holds a pointer (8 bytes) for each link the run ever made.
  class LinkTable {
   public:
    Link* find(uint64_t id) const { return id < index_.size() ? index_[id] : nullptr; }
    Link& at(uint64_t id) const {
      Link* l = find(id);
      SIM_ASSERT(l != nullptr, "unknown link {}", id);
      return *l;
    }
    Link& create(uint64_t id) {
      auto [it, inserted] = by_id_.try_emplace(id);
      SIM_ASSERT(inserted, "link {} made twice", id);
      if (index_.size() <= id) index_.resize(id + 1, nullptr);
      index_[id] = &it->second;  // map nodes do not move
      return it->second;
    }
    void erase(uint64_t id) {
      by_id_.erase(id);
      if (id < index_.size()) index_[id] = nullptr;
    }
    size_t size() const { return by_id_.size(); }
    auto begin() { return by_id_.begin(); }
    auto end() { return by_id_.end(); }
    auto begin() const { return by_id_.begin(); }
    auto end() const { return by_id_.end(); }

   private:
    std::map<uint64_t, Link> by_id_;
    std::vector<Link*> index_;
  };
  struct HostState {
    std::string name;
    std::string address;
    bool up = true;
    uint64_t boot = 0;
    uint32_t address_id = 0;  // `address`, interned (address_id())
  };
  using Graph = boost::adjacency_matrix<boost::directedS>;

  static uint64_t link_of(SocketId s) { return s.value >> 1; }
  static int side_of(SocketId s) { return static_cast<int>(s.value & 1); }
  static SocketId socket_of(uint64_t link, int side) { return SocketId{(link << 1) | uint64_t(side)}; }

  Duration latency(HostId from, HostId to);
  void enqueue(uint64_t link_id, int from_side, ItemKind kind, Payload&& payload = Payload{});
  void schedule_head(uint64_t link_id, int from_side, Time at);
  void deliver_head(uint64_t link_id, int from_side);
  void stall(uint64_t link_id, int from_side);
  void accept_syn(uint64_t link_id);
  // Notifies `side` of the link and marks it closed.
  void notify(uint64_t link_id, int side, ItemKind kind, Payload&& payload = Payload{});
  // The sender of a stream gives up retransmitting.
  void give_up(uint64_t link_id, int from_side, bool unreachable = false);
  // The kernel at the far end of a stream does not know the connection.
  void reset_sender(uint64_t link_id, int from_side);
  void maybe_erase(uint64_t link_id);
  void rebuild_graph(size_t n);
  // "node1,node2|node3": groups of host names, for the trace.
  std::string describe(const std::vector<std::vector<HostId>>& groups) const;
  void emit(HostId host, std::string_view kind, std::initializer_list<TraceField> fields);

  EventLoop& loop_;
  Trace& trace_;
  Rng rng_;
  NetworkHost& world_;
  NetworkOptions options_;
  std::vector<HostState> hosts_;
  std::map<std::string, HostId> by_address_;
  // Every address ever used, numbered: the same string always gets the same
  // number, so every packet compares two numbers, not two strings, to learn
  // whether its ends still hold the addresses the connection was made with.
  std::map<std::string, uint32_t> address_ids_;
  uint32_t address_id(const std::string& address);
  Graph graph_{0};
  std::map<std::pair<uint32_t, uint32_t>, LatencyModel> link_latency_;
  std::map<std::pair<uint32_t, uint16_t>, Endpoint> listeners_;
  LinkTable links_;
  uint64_t next_link_ = 1;
};

}  // namespace sim
