#include "model/zk/client.h"

#include <algorithm>

#include <fmt/format.h>

#include "model/properties.h"

namespace zk {
namespace {
constexpr int64_t kPingXid = -2;
constexpr int64_t kSetWatchesXid = -8;
}  // namespace

const char* to_string(SessionState s) {
  switch (s) {
    case SessionState::connecting: return "connecting";
    case SessionState::connected: return "connected";
    case SessionState::expired: return "expired";
    case SessionState::closed: return "closed";
  }
  return "?";
}

ConnectString parse_connect_string(const std::string& s, const std::string& source,
                                   const std::string& key) {
  ConnectString out;
  std::string hosts = s;
  const size_t slash = s.find('/');
  if (slash != std::string::npos) {
    hosts = s.substr(0, slash);
    out.chroot = s.substr(slash);
    if (out.chroot == "/") out.chroot.clear();
    if (!out.chroot.empty() && (out.chroot.back() == '/' || !DataTree::valid_path(out.chroot))) {
      throw model::ConfigError(source, key, fmt::format("invalid chroot '{}'", out.chroot));
    }
  }
  size_t start = 0;
  while (start <= hosts.size()) {
    size_t end = hosts.find(',', start);
    if (end == std::string::npos) end = hosts.size();
    const std::string entry = hosts.substr(start, end - start);
    if (entry.empty()) {
      throw model::ConfigError(source, key,
                               fmt::format("expected host:port[,host:port...][/chroot], got '{}'", s));
    }
    const size_t colon = entry.rfind(':');
    uint16_t port = 2181;
    std::string host = entry;
    if (colon != std::string::npos) {
      host = entry.substr(0, colon);
      const std::string p = entry.substr(colon + 1);
      const bool digits = !p.empty() && p.size() <= 5 &&
                          std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
      const long value = digits ? std::stol(p) : 0;
      if (!digits || value < 1 || value > 65535) {
        throw model::ConfigError(source, key, fmt::format("bad port '{}' in '{}'", p, entry));
      }
      port = static_cast<uint16_t>(value);
    }
    if (host.empty()) throw model::ConfigError(source, key, fmt::format("empty host in '{}'", s));
    out.servers.emplace_back(host, port);
    start = end + 1;
  }
  return out;
}

Client::Client(sim::ProcessContext& ctx, ClientConfig config, ClientListener& listener)
    : ctx_(ctx), config_(std::move(config)), listener_(listener) {}

std::optional<std::string> Client::server() const {
  if (!handshake_done_) return std::nullopt;
  return servers_[current_server_].first;
}

void Client::start() {
  servers_.clear();
  for (const std::string& entry : config_.connect) {
    for (auto& hp : parse_connect_string(entry, "zookeeper client", "connect").servers) {
      servers_.push_back(hp);
    }
  }
  SIM_ASSERT(!servers_.empty(), "ZooKeeper client with an empty connect string");
  // StaticHostProvider shuffles the resolved addresses once.
  ctx_.rng().shuffle(servers_);
  connect_next();
}

void Client::set_state(SessionState s) {
  if (state_ == s) return;
  state_ = s;
  listener_.on_session_state(s);
}

void Client::connect_next() {
  if (state_ == SessionState::expired || state_ == SessionState::closed) return;
  const uint64_t generation = ++generation_;
  sim::Duration delay = sim::Duration::zero();
  if (tried_this_round_ > 0 || next_server_ > 0) {
    // ClientCnxn sleeps a random 0-1 s before reconnecting ...
    delay = ctx_.rng().uniform(sim::Duration::zero(), sim::Duration::millis(1000));
  }
  if (tried_this_round_ == servers_.size()) {
    // ... and StaticHostProvider a further second after a whole round failed.
    delay += sim::Duration::millis(1000);
    tried_this_round_ = 0;
  }
  ctx_.after(delay, [this, generation] {
    if (generation != generation_ || state_ == SessionState::expired ||
        state_ == SessionState::closed) {
      return;
    }
    current_server_ = next_server_ % servers_.size();
    ++next_server_;
    ++tried_this_round_;
    const auto& [host, port] = servers_[current_server_];
    socket_ = ctx_.connect(host, port);
    socket_connected_ = false;
    handshake_done_ = false;
    arm_connect_timeout();
  });
}

void Client::arm_connect_timeout() {
  // ClientCnxn: until the session is (re)established the send thread times
  // out connectTimeout after it last heard from the server, a clock it
  // resets as a connect starts and again as the TCP connection completes
  // (ClientCnxnSocketNIO.doTransport: updateLastSendAndHeard before
  // primeConnection). connectTimeout is the session timeout over the number
  // of servers: the requested one until a server answers, the negotiated one
  // from then on (SendThread.onConnected sets both timeouts again).
  const int32_t session_ms = negotiated_timeout_ms_ > 0 ? negotiated_timeout_ms_ : config_.session_timeout_ms;
  const int64_t connect_timeout_ms = session_ms / static_cast<int64_t>(servers_.size());
  const uint64_t generation = generation_;
  ctx_.cancel(connect_timer_);
  connect_timer_ = ctx_.after(sim::Duration::millis(connect_timeout_ms), [this, generation] {
    if (generation == generation_ && !handshake_done_) connection_lost("connect timeout");
  });
}

void Client::connection_lost(const char* why) {
  if (state_ == SessionState::expired || state_ == SessionState::closed) return;
  ++generation_;
  if (socket_) ctx_.close(*socket_);
  const std::string server = socket_ ? servers_[current_server_].first : std::string();
  socket_.reset();
  socket_connected_ = false;
  const bool was_connected = handshake_done_;
  handshake_done_ = false;
  ctx_.cancel(connect_timer_);
  ctx_.cancel(read_timer_);
  ctx_.cancel(ping_timer_);
  if (was_connected) {
    ctx_.trace("zk_disconnected", {{"server", server}, {"reason", why}});
  }
  // What was sent is lost with the connection.
  std::map<int64_t, Pending> lost = std::move(in_flight_);
  in_flight_.clear();
  if (was_connected) set_state(SessionState::connecting);
  for (auto& [xid, p] : lost) {
    ClientReply r;
    r.xid = xid;
    r.error = Error::connection_loss;
    p.done(r);
  }
  connect_next();
}

void Client::arm_read_timeout() {
  ctx_.cancel(read_timer_);
  // Only once the session is established: before that connectTimeout
  // governs (arm_connect_timeout).
  if (!handshake_done_) return;
  const uint64_t generation = generation_;
  read_timer_ = ctx_.after(sim::Duration::millis(negotiated_timeout_ms_ * 2 / 3), [this, generation] {
    if (generation == generation_) connection_lost("read timeout");
  });
}

// ClientCnxn.SendThread.run (3.4.13 to 3.8): the loop wakes when half the
// read timeout has passed since the last send, and pings if nothing went out
// meanwhile; woken earlier by a packet from the server, it also pings once
// more than a second has passed since the last send and the next ping is
// less than a second away ("to prevent race condition missing to send the
// second ping"), or after 10 s without a send (MAX_SEND_PING_INTERVAL).
sim::Duration Client::ping_interval() const {
  return sim::Duration::millis(negotiated_timeout_ms_ * 2 / 3 / 2);
}

void Client::send_ping() {
  ctx_.send(*socket_, sim::Payload(ClientMessage(ClientRequest{kPingXid, PingRequest{}})));
  last_sent_ = ctx_.now();
}

void Client::arm_ping() {
  ctx_.cancel(ping_timer_);
  const uint64_t generation = generation_;
  const sim::Time due = std::max(ctx_.now(), last_sent_ + ping_interval());
  ping_timer_ = ctx_.at(due, [this, generation] {
    if (generation != generation_ || !handshake_done_) return;
    if (ctx_.now() - last_sent_ >= ping_interval()) send_ping();
    arm_ping();
  });
}

void Client::maybe_ping_on_receive() {
  if (!handshake_done_ || !socket_) return;
  const sim::Duration idle = ctx_.now() - last_sent_;
  const sim::Duration second = sim::Duration::millis(1000);
  if (idle <= second) return;
  if (idle + second >= ping_interval() || idle > sim::Duration::millis(10000)) {
    send_ping();
    arm_ping();
  }
}

void Client::on_connect_response(const ConnectResponse& r) {
  ctx_.cancel(connect_timer_);
  if (r.timeout_ms <= 0) {
    ctx_.trace("zk_session_expired", {{"session", fmt::format("0x{:x}", session_.value)}});
    if (socket_) ctx_.close(*socket_);
    socket_.reset();
    ctx_.cancel(read_timer_);
    set_state(SessionState::expired);
    fail_all(Error::session_expired);
    return;
  }
  session_ = r.session;
  negotiated_timeout_ms_ = r.timeout_ms;
  handshake_done_ = true;
  tried_this_round_ = 0;
  ctx_.trace("zk_connected", {{"server", servers_[current_server_].first},
                              {"session", fmt::format("0x{:x}", session_.value)},
                              {"timeout_ms", negotiated_timeout_ms_}});
  last_sent_ = ctx_.now();
  if (!data_watches_.empty() || !exist_watches_.empty() || !child_watches_.empty()) {
    SetWatchesRequest w{last_zxid_seen_,
                        std::vector<std::string>(data_watches_.begin(), data_watches_.end()),
                        std::vector<std::string>(exist_watches_.begin(), exist_watches_.end()),
                        std::vector<std::string>(child_watches_.begin(), child_watches_.end())};
    ctx_.send(*socket_, sim::Payload(ClientMessage(ClientRequest{kSetWatchesXid, std::move(w)})));
  }
  arm_read_timeout();
  arm_ping();
  set_state(SessionState::connected);
  std::deque<Pending> queued = std::move(waiting_);
  waiting_.clear();
  for (Pending& p : queued) {
    if (handshake_done_) {
      send_request(p);
    } else {
      waiting_.push_back(std::move(p));
    }
  }
}

void Client::send_request(Pending& p) {
  ctx_.send(*socket_, sim::Payload(ClientMessage(p.request)));
  last_sent_ = ctx_.now();
  const int64_t xid = p.request.xid;
  in_flight_.emplace(xid, std::move(p));
}

void Client::submit(ClientOp op, std::function<void(const ClientReply&)> done) {
  Pending p{ClientRequest{next_xid_++, std::move(op)}, std::move(done)};
  if (state_ == SessionState::expired || state_ == SessionState::closed) {
    const Error e = state_ == SessionState::expired ? Error::session_expired : Error::connection_loss;
    // Answer later, never from inside the caller's own call.
    ctx_.after(sim::Duration::zero(), [p = std::move(p), e]() mutable {
      ClientReply r;
      r.xid = p.request.xid;
      r.error = e;
      p.done(r);
    });
    return;
  }
  if (handshake_done_) {
    send_request(p);
  } else {
    waiting_.push_back(std::move(p));
  }
}

void Client::fail_all(Error error) {
  std::map<int64_t, Pending> sent = std::move(in_flight_);
  std::deque<Pending> queued = std::move(waiting_);
  in_flight_.clear();
  waiting_.clear();
  auto fail = [error](Pending& p) {
    ClientReply r;
    r.xid = p.request.xid;
    r.error = error;
    p.done(r);
  };
  for (auto& [xid, p] : sent) fail(p);
  for (Pending& p : queued) fail(p);
}

void Client::close() {
  if (state_ == SessionState::closed || state_ == SessionState::expired) return;
  if (handshake_done_ && socket_) {
    ctx_.send(*socket_,
              sim::Payload(ClientMessage(ClientRequest{next_xid_++, CloseSessionRequest{}})));
    ctx_.close(*socket_);
  } else if (socket_) {
    ctx_.close(*socket_);
  }
  socket_.reset();
  handshake_done_ = false;
  ++generation_;
  ctx_.cancel(connect_timer_);
  ctx_.cancel(read_timer_);
  ctx_.cancel(ping_timer_);
  set_state(SessionState::closed);
  fail_all(Error::connection_loss);
}

void Client::on_reply(const ClientReply& reply) {
  last_zxid_seen_ = std::max(last_zxid_seen_, reply.zxid);
  auto it = in_flight_.find(reply.xid);
  if (it == in_flight_.end()) return;  // a ping or SetWatches answer
  Pending p = std::move(it->second);
  in_flight_.erase(it);
  p.done(reply);
}

// --- the API -----------------------------------------------------------------------------

void Client::create(const std::string& path, const std::string& data, CreateMode mode,
                    CreateDone done) {
  submit(CreateOp{path, data, mode},
         [done = std::move(done)](const ClientReply& r) { done(r.error, r.path); });
}

void Client::remove(const std::string& path, int32_t version, Done done) {
  submit(DeleteOp{path, version}, [done = std::move(done)](const ClientReply& r) { done(r.error); });
}

void Client::set_data(const std::string& path, const std::string& data, int32_t version,
                      StatDone done) {
  submit(SetDataOp{path, data, version},
         [done = std::move(done)](const ClientReply& r) { done(r.error, r.stat); });
}

void Client::get_data(const std::string& path, bool watch, DataDone done) {
  submit(GetDataRequest{path, watch}, [this, path, watch, done = std::move(done)](const ClientReply& r) {
    if (watch && r.error == Error::ok) data_watches_.insert(path);
    done(r.error, r.data, r.stat);
  });
}

void Client::exists(const std::string& path, bool watch, StatDone done) {
  submit(ExistsRequest{path, watch}, [this, path, watch, done = std::move(done)](const ClientReply& r) {
    if (watch && r.error == Error::ok) data_watches_.insert(path);
    if (watch && r.error == Error::no_node) exist_watches_.insert(path);
    done(r.error, r.stat);
  });
}

void Client::get_children(const std::string& path, bool watch, ChildrenDone done) {
  submit(GetChildrenRequest{path, watch},
         [this, path, watch, done = std::move(done)](const ClientReply& r) {
           if (watch && r.error == Error::ok) child_watches_.insert(path);
           done(r.error, r.children);
         });
}

void Client::multi(std::vector<WriteOp> ops, MultiDone done) {
  submit(MultiOp{std::move(ops)},
         [done = std::move(done)](const ClientReply& r) { done(r.error, r.multi_errors); });
}

void Client::sync(const std::string& path, Done done) {
  submit(SyncRequest{path}, [done = std::move(done)](const ClientReply& r) { done(r.error); });
}

// --- sockets -------------------------------------------------------------------------------

bool Client::on_connected(sim::SocketId socket) {
  if (!socket_ || *socket_ != socket) return false;
  socket_connected_ = true;
  ctx_.send(socket, sim::Payload(ClientMessage(
                        ConnectRequest{last_zxid_seen_, config_.session_timeout_ms, session_})));
  last_sent_ = ctx_.now();
  arm_connect_timeout();
  return true;
}

bool Client::on_connect_failed(sim::SocketId socket, sim::ConnectError error) {
  if (!socket_ || *socket_ != socket) return false;
  connection_lost(error == sim::ConnectError::refused ? "connection refused" : "connect timed out");
  return true;
}

bool Client::on_closed(sim::SocketId socket, sim::CloseReason reason) {
  if (!socket_ || *socket_ != socket) return false;
  connection_lost(reason == sim::CloseReason::eof     ? "closed by server"
                  : reason == sim::CloseReason::reset ? "connection reset"
                                                      : "connection timed out");
  return true;
}

bool Client::on_message(sim::SocketId socket, sim::Payload& payload) {
  if (!socket_ || *socket_ != socket) return false;
  const auto* m = sim::payload_cast<ClientMessage>(&payload);
  if (m == nullptr) return true;
  arm_read_timeout();
  if (!std::holds_alternative<ConnectResponse>(*m)) maybe_ping_on_receive();
  if (const auto* r = std::get_if<ConnectResponse>(m)) {
    on_connect_response(*r);
  } else if (const auto* reply = std::get_if<ClientReply>(m)) {
    on_reply(*reply);
  } else if (const auto* e = std::get_if<WatchEvent>(m)) {
    switch (e->type) {
      case EventType::node_created:
      case EventType::node_data_changed:
        data_watches_.erase(e->path);
        exist_watches_.erase(e->path);
        break;
      case EventType::node_children_changed: child_watches_.erase(e->path); break;
      case EventType::node_deleted:
        data_watches_.erase(e->path);
        exist_watches_.erase(e->path);
        child_watches_.erase(e->path);
        break;
    }
    listener_.on_watch(*e);
  }
  return true;
}

}  // namespace zk
