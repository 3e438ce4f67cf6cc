// The request/response client a Kafka process uses to talk to brokers
// (org.apache.kafka.clients.NetworkClient in miniature): one connection per
// node, opened on first use; up to `max_in_flight` requests outstanding on it
// (the controller's RequestSendThread and a replica fetcher use 1, the
// clients their max.in.flight); a request
// not answered within `request_timeout_ms` fails and takes its connection
// down with it, failing the others as disconnected — which is how a client
// learns that a powered-off or partitioned broker is gone.
//
// A completion may send again (it runs after the client's state is updated).
// The owning process routes its socket callbacks here; each on_* returns true
// when the socket was one of this client's.
#pragma once

#include <vector>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "model/kafka/wire.h"
#include "sim/deadline_timer.h"
#include "sim/fifo.h"
#include "sim/flat_map.h"
#include "sim/world.h"

namespace kafka {

enum class SendError { none, refused, unreachable, connect_timed_out, reset, closed, request_timed_out, cancelled };
const char* to_string(SendError e);

struct NodeAddress {
  std::string host;
  uint16_t port = 9092;
  // Every request compares its address with its connection's: an inline
  // loop over the (short) host beats a call to memcmp.
  friend bool operator==(const NodeAddress& a, const NodeAddress& b) {
    if (a.port != b.port || a.host.size() != b.host.size()) return false;
    const char* x = a.host.data();
    const char* y = b.host.data();
    for (size_t i = 0; i < a.host.size(); ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
};

class NetworkClient {
 public:
  struct Options {
    int32_t request_timeout_ms = 30000;
    int32_t max_in_flight = 1;
    // A connection not established this long after it was opened is given
    // up (connect_timed_out), requests on it or not: librdkafka's and the
    // Java client's socket.connection.setup.timeout.ms. 0: no limit of its
    // own (the requests' timeouts, the kernel's SYN retries).
    int32_t connection_setup_timeout_ms = 0;
  };
  // `response` is null unless error == none.
  using Completion = std::function<void(SendError error, const Response* response)>;

  NetworkClient(sim::ProcessContext& ctx, Options options) : ctx_(ctx), options_(options) {}
  NetworkClient(const NetworkClient&) = delete;
  NetworkClient& operator=(const NetworkClient&) = delete;

  // Queues `request` for `node` (whose address is `address`; a changed
  // address drops the old connection). With `expect_response` false (a
  // produce with acks=0, which a broker never answers) `done` runs with a
  // null response as soon as the request is on the wire.
  // `timeout`, when given, replaces Options::request_timeout_ms for this
  // request (a librdkafka ProduceRequest waits the shorter of
  // socket.timeout.ms and what is left of its first record's
  // message.timeout.ms).
  void send(int32_t node, const NodeAddress& address, Request request, Completion done,
            bool expect_response = true, std::optional<sim::Duration> timeout = std::nullopt);
  // Whether a request to `node` would go on the wire at once: connected to
  // `address`. If not, opens a connection unless one is being opened; if
  // the connection being opened fails (refused, unreachable, past its setup
  // timeout, or a request queued on it timed out first: connect_timed_out),
  // `failed` runs with the error, after any requests queued on it have
  // failed with theirs, and `reported` true when there were such requests
  // (their completions have told of the failure already). Not when the
  // owner closes it. One `failed` per connection: a later caller's, while
  // the first is kept, is dropped. For a client that holds its requests
  // until the node is ready rather than queueing them on a connection that
  // may be refused (the Java NetworkClient.ready / initiateConnect,
  // librdkafka producing only from a broker that is UP).
  using ConnectFailed = std::function<void(SendError error, bool reported)>;
  bool connect(int32_t node, const NodeAddress& address, ConnectFailed failed);
  // A connection to `node` is being opened (to `address`, if given: one to
  // another address is dropped by the next send or connect to this one).
  bool connecting(int32_t node) const;
  bool connecting(int32_t node, const NodeAddress& address) const;
  // Drops the connection to `node`; everything queued or in flight fails
  // with `cancelled`.
  void close(int32_t node);
  void close_all();
  // Connected to `node` (at `address`, if given).
  bool connected(int32_t node) const;
  bool connected(int32_t node, const NodeAddress& address) const;
  size_t pending(int32_t node) const;

  bool on_connected(sim::SocketId socket);
  bool on_connect_failed(sim::SocketId socket, sim::ConnectError error);
  bool on_message(sim::SocketId socket, sim::Payload& payload);
  bool on_closed(sim::SocketId socket, sim::CloseReason reason);

 private:
  struct Waiting {
    int32_t correlation_id = 0;
    Request request;
    Completion done;
    sim::Time deadline;  // when it times out
    bool expect_response = true;
  };
  // A request on the wire: what its answer completes.
  struct InFlight {
    int32_t correlation_id = 0;
    Completion done;
    sim::Time deadline;
  };
  struct Connection {
    NodeAddress address;
    std::optional<sim::SocketId> socket;
    bool connected = false;
    sim::Fifo<Waiting> queued;        // not yet on the wire
    std::vector<InFlight> in_flight;  // ascending correlation id (the order sent)
    ConnectFailed connect_failed;  // connect()'s `failed`
    // While connecting, with a setup timeout: when it is given up.
    sim::Time setup_deadline = sim::Time::max();
  };
  // `node`'s connection, dropped first if it was to another address.
  Connection& connection_to(int32_t node, const NodeAddress& address);
  // Opens `c`'s socket to its address.
  void open(int32_t node, Connection& c);
  void pump(int32_t node);
  // Puts one request on `c`'s socket (connected, with room in flight). One
  // that expects an answer joins in_flight; for one that does not, its
  // completion is returned, for the caller to run once it is done sending.
  std::optional<Completion> transmit(Connection& c, int32_t correlation_id, Request&& request,
                                     Completion&& done, sim::Time deadline, bool expect_response);
  void fail(int32_t node, SendError first, std::optional<int32_t> first_id, SendError rest);
  // Request timeouts: one timer for the client, due at the earliest deadline
  // of a request not yet answered (sim::DeadlineTimer).
  void arm(sim::Time deadline);
  void check_timeouts();
  // The node `socket` belongs to, or null; valid until sockets_ changes.
  // (Not an std::optional<int32_t>: built on the stack from two narrow
  // stores and read back as one wide load, it stalled every message.)
  const int32_t* node_of(sim::SocketId socket) const { return sockets_.find(socket); }

  sim::ProcessContext& ctx_;
  Options options_;
  std::map<int32_t, Connection> connections_;
  // socket -> node: a handful of entries, looked up for every message the
  // process receives.
  sim::FlatMap<sim::SocketId, int32_t> sockets_;
  int32_t next_correlation_id_ = 1;
  sim::DeadlineTimer timeouts_;
};

}  // namespace kafka
