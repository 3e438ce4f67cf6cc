// The ZooKeeper client library, as a Kafka broker uses it (the Java client's
// ClientCnxn semantics), embedded in a sim::Process.
//
// The connect string holds addresses resolved once, at construction; the
// client tries them in an order shuffled from its own random stream. A try
// gives up after sessionTimeout / (number of servers) (ClientCnxn's
// connectTimeout, from the requested timeout until a session is negotiated,
// then from the negotiated one) without a word from the server, counted from
// the start of the try and again from the TCP connection's completion, until
// the session is established; after failing every server the client waits a second
// before the next round, and a random 0-1 s before any reconnect. Once
// connected it pings a third of the negotiated timeout after its last send
// (and on a packet from the server once it is nearly due, or 10 s after the
// last send) and
// declares the connection lost when the server has been silent for two
// thirds of it (readTimeout). On connection loss it tries the next server
// with the same session; the session is still alive if the leader has not
// expired it. The client never decides expiry itself: it learns of it
// (SESSION_EXPIRED) only when a server answers its reconnect, exactly as
// Kafka's brokers do. An expired client is dead; the owner makes a new one.
//
// Requests in flight when the connection drops fail with CONNECTIONLOSS;
// requests made while disconnected wait and go out after the reconnect; all
// fail with SESSIONEXPIRED on expiry. Watches are one-shot and re-registered
// (SetWatches) after every reconnect.
//
// The owning process routes its socket callbacks here first: each `on_*`
// returns true when the socket belonged to the client.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "model/zk/wire.h"
#include "sim/world.h"

namespace zk {

struct ClientConfig {
  // host:port entries (a host is an address; the port defaults to 2181).
  std::vector<std::string> connect;
  int32_t session_timeout_ms = 18000;
};

// Parses "10.0.0.1:2181,10.0.0.2:2181/kafka" into addresses and an optional
// chroot. Throws model::ConfigError (source and key given) when malformed.
struct ConnectString {
  std::vector<std::pair<std::string, uint16_t>> servers;
  std::string chroot;  // "" or "/kafka"
};
ConnectString parse_connect_string(const std::string& s, const std::string& source,
                                   const std::string& key);

enum class SessionState { connecting, connected, expired, closed };
const char* to_string(SessionState s);

class ClientListener {
 public:
  virtual ~ClientListener() = default;
  // connected (first time or after a reconnect), connecting (the connection
  // was lost: "Disconnected"), expired, closed.
  virtual void on_session_state(SessionState state) = 0;
  virtual void on_watch(const WatchEvent& event) = 0;
};

class Client {
 public:
  Client(sim::ProcessContext& ctx, ClientConfig config, ClientListener& listener);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  void start();
  // Closes the session (the server deletes its ephemerals at once).
  void close();

  SessionState state() const { return state_; }
  SessionId session() const { return session_; }
  int32_t negotiated_timeout_ms() const { return negotiated_timeout_ms_; }
  // The address of the server currently connected to, if any.
  std::optional<std::string> server() const;
  // Whether a request of type `Op` (a GetDataRequest, a MultiOp ...), on
  // `path` if one is given, has been sent and not answered: its answer is
  // lost if the server goes now. For tests that lose an answer on purpose,
  // whatever the timing of the run.
  template <typename Op>
  bool awaiting(std::optional<std::string_view> path = std::nullopt) const {
    for (const auto& [xid, p] : in_flight_) {
      const Op* op = std::get_if<Op>(&p.request.op);
      if (op == nullptr) continue;
      if constexpr (requires { op->path; }) {
        if (path && op->path != *path) continue;
      }
      return true;
    }
    return false;
  }

  using CreateDone = std::function<void(Error, const std::string& path)>;
  using Done = std::function<void(Error)>;
  using StatDone = std::function<void(Error, const std::optional<Stat>&)>;
  using DataDone = std::function<void(Error, const std::string& data, const std::optional<Stat>&)>;
  using ChildrenDone = std::function<void(Error, const std::vector<std::string>&)>;
  using MultiDone = std::function<void(Error, const std::vector<Error>&)>;

  void create(const std::string& path, const std::string& data, CreateMode mode, CreateDone done);
  void remove(const std::string& path, int32_t version, Done done);
  void set_data(const std::string& path, const std::string& data, int32_t version, StatDone done);
  void get_data(const std::string& path, bool watch, DataDone done);
  void exists(const std::string& path, bool watch, StatDone done);
  void get_children(const std::string& path, bool watch, ChildrenDone done);
  void multi(std::vector<WriteOp> ops, MultiDone done);
  void sync(const std::string& path, Done done);

  // Socket routing from the owning process.
  bool on_connected(sim::SocketId socket);
  bool on_connect_failed(sim::SocketId socket, sim::ConnectError error);
  bool on_message(sim::SocketId socket, sim::Payload& payload);
  bool on_closed(sim::SocketId socket, sim::CloseReason reason);

 private:
  struct Pending {
    ClientRequest request;
    std::function<void(const ClientReply&)> done;
  };
  void submit(ClientOp op, std::function<void(const ClientReply&)> done);
  void connect_next();
  void connection_lost(const char* why);
  void send_request(Pending& p);
  void arm_connect_timeout();
  void arm_read_timeout();
  void arm_ping();
  sim::Duration ping_interval() const;
  void send_ping();
  void maybe_ping_on_receive();
  void fail_all(Error error);
  void on_reply(const ClientReply& reply);
  void on_connect_response(const ConnectResponse& r);
  void set_state(SessionState s);

  sim::ProcessContext& ctx_;
  ClientConfig config_;
  ClientListener& listener_;
  std::vector<std::pair<std::string, uint16_t>> servers_;
  size_t next_server_ = 0;
  size_t tried_this_round_ = 0;

  SessionState state_ = SessionState::connecting;
  SessionId session_;
  int32_t negotiated_timeout_ms_ = 0;
  Zxid last_zxid_seen_;
  std::optional<sim::SocketId> socket_;
  bool socket_connected_ = false;
  bool handshake_done_ = false;
  size_t current_server_ = 0;
  uint64_t generation_ = 0;  // bumped per connection attempt
  sim::TimerId connect_timer_;
  sim::TimerId read_timer_;
  sim::TimerId ping_timer_;
  sim::Time last_sent_;

  int64_t next_xid_ = 1;
  std::deque<Pending> waiting_;         // not yet sent
  std::map<int64_t, Pending> in_flight_;  // sent, by xid
  std::set<std::string> data_watches_;
  std::set<std::string> exist_watches_;
  std::set<std::string> child_watches_;
};

}  // namespace zk
