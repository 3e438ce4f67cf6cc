#include "sim/network.h"

#include <algorithm>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>

#include "sim/assert.h"

namespace sim {

const char* to_string(ConnectError e) {
  switch (e) {
    case ConnectError::refused: return "refused";
    case ConnectError::timed_out: return "timed_out";
    case ConnectError::unreachable: return "unreachable";
  }
  return "?";
}

const char* to_string(CloseReason r) {
  switch (r) {
    case CloseReason::eof: return "eof";
    case CloseReason::reset: return "reset";
    case CloseReason::timed_out: return "timed_out";
  }
  return "?";
}

Duration LatencyModel::sample(Rng& rng) const {
  switch (kind) {
    case Kind::constant: return base;
    case Kind::uniform: return base + rng.uniform(Duration::zero(), spread);
    case Kind::exponential: return base + rng.exponential(spread);
    case Kind::normal: return std::max(base, rng.normalish(base + spread, spread));
  }
  return base;
}

Network::Network(EventLoop& loop, Trace& trace, Rng rng, NetworkHost& world,
                 NetworkOptions options)
    : loop_(loop), trace_(trace), rng_(std::move(rng)), world_(world), options_(options) {}

// --- hosts -------------------------------------------------------------------

HostId Network::add_host(const std::string& name, const std::string& address) {
  SIM_ASSERT(!by_address_.count(address), "address {} is already in use", address);
  const HostId id(static_cast<uint32_t>(hosts_.size()));
  hosts_.push_back(HostState{name, address, true, 0, address_id(address)});
  by_address_.emplace(address, id);
  rebuild_graph(hosts_.size());
  return id;
}

void Network::rebuild_graph(size_t n) {
  Graph g(n);
  const size_t old = boost::num_vertices(graph_);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (a == b) continue;
      const bool keep = a < old && b < old ? boost::edge(a, b, graph_).second : true;
      if (keep) boost::add_edge(a, b, g);
    }
  }
  graph_ = std::move(g);
}

uint32_t Network::address_id(const std::string& address) {
  return address_ids_.try_emplace(address, static_cast<uint32_t>(address_ids_.size())).first->second;
}

std::optional<HostId> Network::host_at(const std::string& address) const {
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return std::nullopt;
  return it->second;
}

void Network::set_address(HostId h, const std::string& address) {
  HostState& host = hosts_.at(h.value);
  if (host.address == address) return;
  SIM_ASSERT(!by_address_.count(address), "address {} is already in use", address);
  by_address_.erase(host.address);
  emit(h, "address_changed", {{"from", host.address}, {"to", address}});
  host.address = address;
  host.address_id = address_id(address);
  by_address_.emplace(address, h);
}

void Network::host_down(HostId h) {
  HostState& host = hosts_.at(h.value);
  host.up = false;
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    it = it->first.first == h.value ? listeners_.erase(it) : std::next(it);
  }
  // The kernel is gone: its sockets vanish without a word to the peers, and
  // nothing more leaves this host. Peers find out by retransmitting into
  // silence, or by a reset from the next boot's kernel.
  std::vector<uint64_t> touched;
  for (auto& [id, link] : links_) {
    for (int side = 0; side < 2; ++side) {
      Side& s = link.side[side];
      if (s.host != h || (side == 1 && !link.accepted)) continue;
      s.released = true;
      s.state = SideState::closed;
      Stream& out = link.stream[side];
      out.items.clear();
      loop_.cancel(out.timer);
      out.timer = {};
      out.stalled = false;
      touched.push_back(id);
    }
  }
  for (uint64_t id : touched) maybe_erase(id);
}

void Network::host_up(HostId h) {
  HostState& host = hosts_.at(h.value);
  host.up = true;
  ++host.boot;
}

// --- partitions --------------------------------------------------------------

std::string Network::describe(const std::vector<std::vector<HostId>>& groups) const {
  std::string out;
  for (const auto& group : groups) {
    if (!out.empty()) out += '|';
    for (size_t i = 0; i < group.size(); ++i) {
      if (i > 0) out += ',';
      out += hosts_.at(group[i].value).name;
    }
  }
  return out;
}

void Network::partition(const std::vector<std::vector<HostId>>& groups) {
  trace_.emit("network", "net", "partition", {{"groups", describe(groups)}});
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = 0; j < groups.size(); ++j) {
      if (i == j) continue;
      for (HostId a : groups[i]) {
        for (HostId b : groups[j]) {
          if (a != b) boost::remove_edge(a.value, b.value, graph_);
        }
      }
    }
  }
}

void Network::block(HostId from, HostId to) {
  trace_.emit("network", "net", "block",
              {{"from", hosts_.at(from.value).name}, {"to", hosts_.at(to.value).name}});
  if (from != to) boost::remove_edge(from.value, to.value, graph_);
}

void Network::isolate(HostId h) {
  trace_.emit("network", "net", "isolate", {{"host", hosts_.at(h.value).name}});
  for (uint32_t other = 0; other < hosts_.size(); ++other) {
    if (other == h.value) continue;
    boost::remove_edge(h.value, other, graph_);
    boost::remove_edge(other, h.value, graph_);
  }
}

void Network::heal() {
  trace_.emit("network", "net", "heal");
  Graph g(hosts_.size());
  for (size_t a = 0; a < hosts_.size(); ++a) {
    for (size_t b = 0; b < hosts_.size(); ++b) {
      if (a != b) boost::add_edge(a, b, g);
    }
  }
  graph_ = std::move(g);
}

bool Network::reachable(HostId from, HostId to) const {
  if (from == to) return true;
  return boost::edge(from.value, to.value, graph_).second;
}

std::vector<std::vector<HostId>> Network::components() const {
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  const size_t n = hosts_.size();
  Undirected g(n);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) {
      if (boost::edge(a, b, graph_).second && boost::edge(b, a, graph_).second) {
        boost::add_edge(a, b, g);
      }
    }
  }
  std::vector<int> component(n);
  const int count = n == 0 ? 0 : boost::connected_components(g, component.data());
  std::vector<std::vector<HostId>> groups(static_cast<size_t>(count));
  // Vertices are visited in id order, so each group is sorted and groups are
  // ordered by their smallest member when we sort on the first element.
  for (size_t v = 0; v < n; ++v) {
    groups[static_cast<size_t>(component[v])].push_back(HostId(static_cast<uint32_t>(v)));
  }
  std::sort(groups.begin(), groups.end(),
            [](const auto& x, const auto& y) { return x.front() < y.front(); });
  return groups;
}

// --- latency -----------------------------------------------------------------

void Network::set_link_latency(HostId from, HostId to, LatencyModel m) {
  link_latency_[{from.value, to.value}] = m;
}

Duration Network::latency(HostId from, HostId to) {
  if (from == to) return options_.loopback.sample(rng_);
  auto it = link_latency_.find({from.value, to.value});
  return (it == link_latency_.end() ? options_.latency : it->second).sample(rng_);
}

// --- sockets -----------------------------------------------------------------

void Network::listen(HostId host, uint16_t port, const Endpoint& owner) {
  auto [it, inserted] = listeners_.emplace(std::make_pair(host.value, port), owner);
  SIM_ASSERT(inserted || !world_.alive(it->second), "port {} on {} is already in use", port,
             hosts_.at(host.value).name);
  it->second = owner;
}

void Network::unlisten(HostId host, uint16_t port) { listeners_.erase({host.value, port}); }

SocketId Network::connect(HostId from, const Endpoint& owner, const std::string& address,
                          uint16_t port) {
  const uint64_t id = next_link_++;
  Link& link = links_.create(id);
  const HostState& src = hosts_.at(from.value);
  link.side[0] = Side{from, src.address, src.boot, owner, SideState::connecting, false, src.address_id};
  link.port = port;
  // The SYN goes to whoever holds the address now; if no one does, it goes
  // nowhere and the connect times out (side[1].host stays invalid).
  if (auto dst = host_at(address)) {
    link.side[1].host = *dst;
  } else {
    link.side[1].host = HostId(UINT32_MAX);
  }
  link.side[1].address = address;
  link.side[1].address_id = address_id(address);
  link.side[1].released = true;  // until a listener accepts
  enqueue(id, 0, ItemKind::syn);
  return socket_of(id, 0);
}

void Network::enqueue(uint64_t link_id, int from_side, ItemKind kind, Payload&& payload) {
  Link& link = links_.at(link_id);
  Stream& s = link.stream[from_side];
  const HostId src = link.side[from_side].host;
  const HostId dst = link.side[1 - from_side].host;
  const Duration d = dst.value == UINT32_MAX ? options_.latency.sample(rng_) : latency(src, dst);
  const Time arrival = std::max(loop_.now() + d, s.last_arrival);
  s.last_arrival = arrival;
  s.items.push_back(Item{kind, arrival, std::move(payload)});
  if (!s.timer && !s.stalled) schedule_head(link_id, from_side, arrival);
}

void Network::schedule_head(uint64_t link_id, int from_side, Time at) {
  Stream& s = links_.at(link_id).stream[from_side];
  s.timer = loop_.at(std::max(at, loop_.now()),
                     [this, link_id, from_side] { deliver_head(link_id, from_side); });
}

void Network::deliver_head(uint64_t link_id, int from_side) {
  Link* found = links_.find(link_id);
  if (found == nullptr) return;
  Link& link = *found;
  Stream& s = link.stream[from_side];
  s.timer = {};
  if (s.items.empty()) return;
  if (from_side == 0 && s.items.front().kind == ItemKind::syn) {
    // Each (re)transmission of a SYN goes to whoever holds the address at
    // that moment (the sender's ARP asks again): an address that comes back
    // while a connect is retrying is reached by its next SYN.
    const auto holder = host_at(link.side[1].address);
    link.side[1].host = holder ? *holder : HostId(UINT32_MAX);
  }
  const Side& src = link.side[from_side];
  const Side& dst = link.side[1 - from_side];
  const HostState& src_host = hosts_.at(src.host.value);
  if (!src_host.up || src_host.boot != src.boot) {
    // The sending kernel died; nothing it held will be retransmitted.
    s.items.clear();
    s.stalled = false;
    maybe_erase(link_id);
    return;
  }
  // Both ends must still answer at the addresses the connection was made
  // with: a host that moved to a new address has left its connections behind.
  const bool path = dst.host.value != UINT32_MAX && hosts_.at(dst.host.value).up &&
                    hosts_.at(dst.host.value).address_id == dst.address_id &&
                    src_host.address_id == src.address_id && reachable(src.host, dst.host);
  if (!path) {
    if (s.items.front().kind == ItemKind::rst) {
      // A reset is never retransmitted: if it is lost, the peer finds out
      // by its own means.
      s.items.clear();
      s.stalled = false;
      maybe_erase(link_id);
      return;
    }
    stall(link_id, from_side);
    return;
  }
  if (s.items.front().kind == ItemKind::syn) {
    // accept_syn ends the stall only if the answer can get back; otherwise
    // the SYN keeps its backoff and retry count.
    accept_syn(link_id);
    return;
  }
  s.stalled = false;
  s.retries = 0;
  const HostState& dst_host = hosts_.at(dst.host.value);
  if (dst_host.boot != dst.boot || dst.released || !world_.alive(dst.owner)) {
    // The receiving kernel has no such connection (the host rebooted, or the
    // process closed the socket or died): it answers with a reset.
    reset_sender(link_id, from_side);
    return;
  }
  Item item = std::move(s.items.front());
  s.items.pop_front();
  if (!s.items.empty()) schedule_head(link_id, from_side, s.items.front().arrival);
  notify(link_id, 1 - from_side, item.kind, std::move(item.payload));
}

void Network::stall(uint64_t link_id, int from_side) {
  Link& link = links_.at(link_id);
  Stream& s = link.stream[from_side];
  const bool syn = s.items.front().kind == ItemKind::syn;
  if (!s.stalled) {
    s.stalled = true;
    s.stalled_since = loop_.now();
    s.retries = 0;
    s.rto = syn ? options_.syn_initial_rto : options_.data_initial_rto;
  } else {
    ++s.retries;
    s.rto = std::min(s.rto * 2, options_.max_rto);
  }
  const HostId dst = link.side[1 - from_side].host;
  const bool arp_fails = syn && options_.host_unreachable_after != Duration::max() &&
                         dst.value != UINT32_MAX && !hosts_.at(dst.value).up;
  if (arp_fails && loop_.now() - s.stalled_since >= options_.host_unreachable_after) {
    give_up(link_id, from_side, /*unreachable=*/true);
    return;
  }
  const bool out_of_tries = syn ? s.retries >= options_.syn_retries + 1
                                : loop_.now() - s.stalled_since >= options_.data_abort_after;
  if (out_of_tries) {
    give_up(link_id, from_side);
    return;
  }
  Time next = loop_.now() + s.rto;
  if (!syn) next = std::min(next, s.stalled_since + options_.data_abort_after);
  if (arp_fails) next = std::min(next, s.stalled_since + options_.host_unreachable_after);
  schedule_head(link_id, from_side, next);
}

void Network::give_up(uint64_t link_id, int from_side, bool unreachable) {
  Link& link = links_.at(link_id);
  Stream& s = link.stream[from_side];
  const bool syn = s.items.front().kind == ItemKind::syn;
  s.items.clear();
  s.stalled = false;
  Side& me = link.side[from_side];
  if (unreachable) {
    emit(me.host, "host_unreachable",
         {{"peer", link.side[1 - from_side].address}, {"port", static_cast<int>(link.port)}});
    notify(link_id, from_side, ItemKind::unreachable);
    return;
  }
  emit(me.host, syn ? "connect_timed_out" : "connection_timed_out",
       {{"peer", link.side[1 - from_side].address}, {"port", static_cast<int>(link.port)}});
  // The sender's own kernel reports the timeout: no packet is involved.
  notify(link_id, from_side, ItemKind::timeout);
}

void Network::reset_sender(uint64_t link_id, int from_side) {
  Link& link = links_.at(link_id);
  Stream& s = link.stream[from_side];
  s.items.clear();
  s.stalled = false;
  const HostId back_from = link.side[1 - from_side].host;
  const HostId back_to = link.side[from_side].host;
  if (!reachable(back_from, back_to)) {
    maybe_erase(link_id);
    return;  // the reset is lost; the sender will hear nothing
  }
  loop_.after(latency(back_from, back_to),
              [this, link_id, from_side] { notify(link_id, from_side, ItemKind::rst); });
}

void Network::accept_syn(uint64_t link_id) {
  Link& link = links_.at(link_id);
  Stream& s = link.stream[0];
  const HostId src = link.side[0].host;
  const HostId dst = link.side[1].host;
  if (!reachable(dst, src)) {
    // The SYN-ACK or RST would not get back: to the client this is silence.
    stall(link_id, 0);
    return;
  }
  s.stalled = false;
  s.retries = 0;
  s.items.pop_front();
  SIM_ASSERT(s.items.empty(), "data queued before the connection was established");
  const HostState& host = hosts_.at(dst.value);
  Side& server = link.side[1];
  server.boot = host.boot;
  auto listener = listeners_.find({dst.value, link.port});
  if (listener != listeners_.end() && world_.alive(listener->second)) {
    server.owner = listener->second;
    server.state = SideState::open;
    server.released = false;
    link.accepted = true;
    enqueue(link_id, 1, ItemKind::syn_ack);
    const Endpoint owner = server.owner;
    const uint16_t port = link.port;
    world_.post(owner, [this, link_id, owner, port] {
      if (const Link* l = links_.find(link_id); l == nullptr || l->side[1].released) return;
      world_.handler(owner)->on_accept(socket_of(link_id, 1), port);
    });
  } else {
    emit(dst, "connection_refused",
         {{"from", link.side[0].address}, {"port", static_cast<int>(link.port)}});
    enqueue(link_id, 1, ItemKind::refused);
  }
}

void Network::notify(uint64_t link_id, int side, ItemKind kind, Payload&& payload) {
  // A notification that travelled (a reset coming back) may find the link
  // already gone, when both ends were released meanwhile.
  Link* found = links_.find(link_id);
  if (found == nullptr) return;
  Side& me = found->side[side];
  // Released: no process is left to tell. Closed: the process has already
  // heard that the connection ended; a second reset (for data it sent before
  // it knew) adds nothing, so a socket is reported closed at most once.
  if (me.released || me.state == SideState::closed) {
    maybe_erase(link_id);
    return;
  }
  const bool was_connecting = me.state == SideState::connecting;
  switch (kind) {
    case ItemKind::syn_ack: me.state = SideState::open; break;
    case ItemKind::data: break;
    default: me.state = SideState::closed; break;
  }
  const Endpoint owner = me.owner;
  const SocketId socket = socket_of(link_id, side);
  auto deliver = [this, owner, socket, kind, was_connecting, payload = std::move(payload)]() mutable {
    const Link* l = links_.find(link_of(socket));
    if (l == nullptr || l->side[side_of(socket)].released) return;
    SocketHandler* h = world_.handler(owner);
    switch (kind) {
      case ItemKind::syn_ack: h->on_connected(socket); break;
      case ItemKind::refused: h->on_connect_failed(socket, ConnectError::refused); break;
      case ItemKind::data: h->on_message(socket, payload); break;
      case ItemKind::fin: h->on_closed(socket, CloseReason::eof); break;
      case ItemKind::rst:
        if (was_connecting) {
          h->on_connect_failed(socket, ConnectError::refused);
        } else {
          h->on_closed(socket, CloseReason::reset);
        }
        break;
      case ItemKind::timeout:
        if (was_connecting) {
          h->on_connect_failed(socket, ConnectError::timed_out);
        } else {
          h->on_closed(socket, CloseReason::timed_out);
        }
        break;
      case ItemKind::unreachable: h->on_connect_failed(socket, ConnectError::unreachable); break;
      case ItemKind::syn: break;
    }
  };
  // A running process hears at once (what post would do, without wrapping
  // the closure, which carries the payload, in a heap-allocated callback).
  if (world_.runnable(owner)) {
    deliver();
  } else {
    world_.post(owner, std::move(deliver));
  }
  maybe_erase(link_id);
}

void Network::maybe_erase(uint64_t link_id) {
  const Link* found = links_.find(link_id);
  if (found == nullptr) return;
  const Link& link = *found;
  if (link.side[0].released && link.side[1].released && link.stream[0].items.empty() &&
      link.stream[1].items.empty()) {
    loop_.cancel(link.stream[0].timer);
    loop_.cancel(link.stream[1].timer);
    links_.erase(link_id);
  }
}

void Network::send(SocketId socket, Payload&& payload) {
  Link* link = links_.find(link_of(socket));
  SIM_ASSERT(link != nullptr, "send on unknown socket {}", socket.value);
  Side& me = link->side[side_of(socket)];
  SIM_ASSERT(!me.released, "send on a socket the process closed");
  SIM_ASSERT(me.state != SideState::connecting, "send before the connection was established");
  if (me.state == SideState::closed) return;  // the peer is gone; the bytes go nowhere
  enqueue(link_of(socket), side_of(socket), ItemKind::data, std::move(payload));
}

void Network::close(SocketId socket) {
  Link* found = links_.find(link_of(socket));
  if (found == nullptr) return;
  Link& link = *found;
  const int side = side_of(socket);
  Side& me = link.side[side];
  if (me.released) return;
  me.released = true;
  if (me.state == SideState::open) {
    enqueue(link_of(socket), side, ItemKind::fin);
  } else if (me.state == SideState::connecting) {
    // Abandon the handshake; a server that already accepted gets a reset.
    Stream& out = link.stream[side];
    out.items.clear();
    loop_.cancel(out.timer);
    out.timer = {};
    out.stalled = false;
    if (link.accepted) enqueue(link_of(socket), side, ItemKind::rst);
  }
  me.state = SideState::closed;
  maybe_erase(link_of(socket));
}

bool Network::is_open(SocketId socket) const {
  const Link* link = links_.find(link_of(socket));
  if (link == nullptr) return false;
  const Side& me = link->side[side_of(socket)];
  return !me.released && me.state == SideState::open;
}

std::string Network::peer_address(SocketId socket) const {
  const Link* link = links_.find(link_of(socket));
  if (link == nullptr) return {};
  return link->side[1 - side_of(socket)].address;
}

void Network::process_exited(const Endpoint& owner, CloseReason how) {
  for (auto it = listeners_.begin(); it != listeners_.end();) {
    it = it->second == owner ? listeners_.erase(it) : std::next(it);
  }
  std::vector<uint64_t> ids;
  for (const auto& [id, link] : links_) {
    for (int side = 0; side < 2; ++side) {
      if (!link.side[side].released && link.side[side].owner == owner) ids.push_back(id);
    }
  }
  for (uint64_t id : ids) {
    for (int side = 0; side < 2; ++side) {
      // Closing one side may forget the link (both ends released, nothing in
      // flight), and a connection to itself lists the link twice: look it up
      // afresh each time.
      Link* link = links_.find(id);
      if (link == nullptr) break;
      Side& me = link->side[side];
      if (me.released || !(me.owner == owner)) continue;
      if (me.state == SideState::open) {
        me.released = true;
        me.state = SideState::closed;
        enqueue(id, side, how == CloseReason::eof ? ItemKind::fin : ItemKind::rst);
      } else {
        close(socket_of(id, side));
      }
    }
    maybe_erase(id);
  }
}

void Network::emit(HostId host, std::string_view kind, std::initializer_list<TraceField> fields) {
  trace_.emit(host.value < hosts_.size() ? std::string_view(hosts_[host.value].name) : "?", "net",
              kind, fields);
}

}  // namespace sim
