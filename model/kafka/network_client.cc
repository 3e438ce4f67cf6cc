#include "model/kafka/network_client.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace kafka {

const char* to_string(SendError e) {
  switch (e) {
    case SendError::none: return "none";
    case SendError::refused: return "connection_refused";
    case SendError::unreachable: return "host_unreachable";
    case SendError::connect_timed_out: return "connect_timed_out";
    case SendError::reset: return "connection_reset";
    case SendError::closed: return "connection_closed";
    case SendError::request_timed_out: return "request_timed_out";
    case SendError::cancelled: return "cancelled";
  }
  return "?";
}

NetworkClient::Connection& NetworkClient::connection_to(int32_t node, const NodeAddress& address) {
  Connection* conn = &connections_[node];
  if (!(conn->address == address)) {
    if (conn->socket) {
      close(node);
      conn = &connections_[node];
    }
    conn->address = address;
  }
  return *conn;
}

void NetworkClient::send(int32_t node, const NodeAddress& address, Request request,
                         Completion done, bool expect_response, std::optional<sim::Duration> timeout) {
  Connection* conn = &connection_to(node, address);
  const int32_t correlation_id = next_correlation_id_++;
  // The timeout runs from the moment the request is queued, as a Java
  // client's does from its creation.
  const sim::Time deadline =
      ctx_.now() + timeout.value_or(sim::Duration::millis(options_.request_timeout_ms));
  arm(deadline);
  if (conn->socket && conn->connected && conn->queued.empty() &&
      static_cast<int32_t>(conn->in_flight.size()) < options_.max_in_flight) {
    // What pump would do at once, without the trip through the queue.
    if (auto sent = transmit(*conn, correlation_id, std::move(request), std::move(done), deadline,
                             expect_response)) {
      (*sent)(SendError::none, nullptr);
    }
    return;
  }
  Waiting w;
  w.correlation_id = correlation_id;
  w.request = std::move(request);
  w.done = std::move(done);
  w.expect_response = expect_response;
  w.deadline = deadline;
  conn->queued.push_back(std::move(w));
  if (!conn->socket) {
    open(node, *conn);
    return;
  }
  pump(node);
}

void NetworkClient::open(int32_t node, Connection& c) {
  c.socket = ctx_.connect(c.address.host, c.address.port);
  c.connected = false;
  sockets_[*c.socket] = node;
  if (options_.connection_setup_timeout_ms > 0) {
    c.setup_deadline = ctx_.now() + sim::Duration::millis(options_.connection_setup_timeout_ms);
    arm(c.setup_deadline);
  }
}

bool NetworkClient::connect(int32_t node, const NodeAddress& address, ConnectFailed failed) {
  Connection& conn = connection_to(node, address);
  if (conn.socket && conn.connected) return true;
  if (!conn.connect_failed) conn.connect_failed = std::move(failed);
  if (!conn.socket) open(node, conn);
  return false;
}

bool NetworkClient::connecting(int32_t node) const {
  auto it = connections_.find(node);
  return it != connections_.end() && it->second.socket && !it->second.connected;
}

bool NetworkClient::connecting(int32_t node, const NodeAddress& address) const {
  auto it = connections_.find(node);
  return it != connections_.end() && it->second.socket && !it->second.connected &&
         it->second.address == address;
}

void NetworkClient::pump(int32_t node) {
  auto it = connections_.find(node);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  if (!c.connected || !c.socket) return;
  std::vector<Completion> sent_without_answer;
  while (!c.queued.empty() &&
         static_cast<int32_t>(c.in_flight.size()) < options_.max_in_flight) {
    Waiting w = std::move(c.queued.front());
    c.queued.pop_front();
    if (auto sent = transmit(c, w.correlation_id, std::move(w.request), std::move(w.done), w.deadline,
                             w.expect_response)) {
      sent_without_answer.push_back(std::move(*sent));
    }
  }
  for (Completion& done : sent_without_answer) done(SendError::none, nullptr);
}

std::optional<NetworkClient::Completion> NetworkClient::transmit(Connection& c, int32_t correlation_id,
                                                                 Request&& request, Completion&& done,
                                                                 sim::Time deadline, bool expect_response) {
  // The request is not needed once it is on the wire.
  ctx_.send(*c.socket, RequestFrame{correlation_id, std::move(request)});
  if (!expect_response) return std::move(done);
  c.in_flight.push_back(InFlight{correlation_id, std::move(done), deadline});
  return std::nullopt;
}

void NetworkClient::fail(int32_t node, SendError first, std::optional<int32_t> first_id,
                         SendError rest) {
  auto it = connections_.find(node);
  if (it == connections_.end()) return;
  Connection& c = it->second;
  std::vector<std::pair<SendError, Completion>> done;
  for (InFlight& w : c.in_flight) {
    done.emplace_back(first_id && *first_id == w.correlation_id ? first : rest, std::move(w.done));
  }
  for (Waiting& w : c.queued) {
    done.emplace_back(first_id && *first_id == w.correlation_id ? first : rest, std::move(w.done));
  }
  // A connection still being opened failed (refused, unreachable, past its
  // setup timeout, or a request on it timed out first): connect()'s caller
  // hears of it, after the requests. Not when the owner closed it.
  ConnectFailed connect_failed;
  SendError attempt_error = rest;
  if (!c.connected && rest != SendError::cancelled) {
    connect_failed = std::move(c.connect_failed);
    if (first == SendError::request_timed_out) attempt_error = SendError::connect_timed_out;
  }
  const bool reported = !done.empty();
  if (c.socket) {
    // Always release the socket: one still connecting is abandoned (its
    // handshake stops), one the peer closed or refused is freed.
    sockets_.erase(*c.socket);
    ctx_.close(*c.socket);
  }
  connections_.erase(it);
  for (auto& [error, fn] : done) fn(error, nullptr);
  if (connect_failed) connect_failed(attempt_error, reported);
}

void NetworkClient::arm(sim::Time deadline) {
  timeouts_.arm(ctx_, deadline, [this] { check_timeouts(); });
}

void NetworkClient::check_timeouts() {
  // The unanswered request with the earliest deadline is the next to
  // expire (the oldest, the lowest correlation id, on a tie: with one
  // timeout for all, the oldest). As in the Java NetworkClient, a request
  // that timed out takes its connection down, failing all else on it. A
  // connection still being opened past its setup deadline is given up.
  for (;;) {
    bool any = false;
    int32_t node = 0;
    int32_t id = 0;
    sim::Time deadline = sim::Time::max();
    auto consider = [&](int32_t n, int32_t correlation_id, sim::Time d) {
      if (!any || d < deadline || (d == deadline && correlation_id < id)) {
        any = true;
        node = n;
        id = correlation_id;
        deadline = d;
      }
    };
    bool setup = false;  // the earliest deadline is a connection's setup
    int32_t setup_node = 0;
    sim::Time setup_deadline = sim::Time::max();
    for (const auto& [n, c] : connections_) {
      for (const InFlight& f : c.in_flight) consider(n, f.correlation_id, f.deadline);
      for (const Waiting& w : c.queued) consider(n, w.correlation_id, w.deadline);
      if (!c.connected && c.setup_deadline < setup_deadline) {
        setup_node = n;
        setup_deadline = c.setup_deadline;
      }
    }
    if (setup_deadline <= deadline && setup_deadline != sim::Time::max()) {
      // On a tie the connection goes first: requests on a connection that
      // never came up fail as connect_timed_out.
      setup = true;
      deadline = setup_deadline;
    } else if (!any) {
      return;
    }
    if (deadline > ctx_.now()) {
      arm(deadline);
      return;
    }
    if (setup) {
      fail(setup_node, SendError::connect_timed_out, std::nullopt, SendError::connect_timed_out);
    } else {
      fail(node, SendError::request_timed_out, id, SendError::closed);
    }
  }
}

void NetworkClient::close(int32_t node) { fail(node, SendError::cancelled, std::nullopt, SendError::cancelled); }

void NetworkClient::close_all() {
  while (!connections_.empty()) close(connections_.begin()->first);
}

bool NetworkClient::connected(int32_t node) const {
  auto it = connections_.find(node);
  return it != connections_.end() && it->second.connected;
}

bool NetworkClient::connected(int32_t node, const NodeAddress& address) const {
  auto it = connections_.find(node);
  return it != connections_.end() && it->second.connected && it->second.address == address;
}

size_t NetworkClient::pending(int32_t node) const {
  auto it = connections_.find(node);
  return it == connections_.end() ? 0 : it->second.queued.size() + it->second.in_flight.size();
}

bool NetworkClient::on_connected(sim::SocketId socket) {
  const int32_t* found = node_of(socket);
  if (found == nullptr) return false;
  const int32_t node = *found;
  Connection& c = connections_[node];
  c.connected = true;
  c.connect_failed = nullptr;  // only the attempt's failure is reported
  c.setup_deadline = sim::Time::max();
  pump(node);
  return true;
}

bool NetworkClient::on_connect_failed(sim::SocketId socket, sim::ConnectError error) {
  const int32_t* found = node_of(socket);
  if (found == nullptr) return false;
  const int32_t node = *found;
  const SendError e = error == sim::ConnectError::refused       ? SendError::refused
                      : error == sim::ConnectError::unreachable ? SendError::unreachable
                                                                : SendError::connect_timed_out;
  fail(node, e, std::nullopt, e);
  return true;
}

bool NetworkClient::on_message(sim::SocketId socket, sim::Payload& payload) {
  const int32_t* found = node_of(socket);
  if (found == nullptr) return false;
  const int32_t node = *found;
  const auto* frame = sim::payload_cast<ResponseFrame>(&payload);
  if (frame == nullptr) return true;
  Connection& c = connections_[node];
  auto it = std::find_if(c.in_flight.begin(), c.in_flight.end(),
                         [id = frame->correlation_id](const InFlight& f) { return f.correlation_id == id; });
  if (it == c.in_flight.end()) return true;  // answered after it timed out
  InFlight w = std::move(*it);
  c.in_flight.erase(it);
  if (!c.queued.empty()) pump(node);  // room in flight for what waits
  w.done(SendError::none, &frame->body);
  return true;
}

bool NetworkClient::on_closed(sim::SocketId socket, sim::CloseReason reason) {
  const int32_t* found = node_of(socket);
  if (found == nullptr) return false;
  const int32_t node = *found;
  const SendError e = reason == sim::CloseReason::reset       ? SendError::reset
                      : reason == sim::CloseReason::timed_out ? SendError::request_timed_out
                                                              : SendError::closed;
  fail(node, e, std::nullopt, e);
  return true;
}

}  // namespace kafka
