// How a client that holds a leader's requests until it is connected to that
// leader paces itself: librdkafka serves a partition only from a broker
// thread that is UP; the Java clients send only to nodes that
// NetworkClient.ready accepts and start connecting to the others
// (initiateConnect) once the reconnect backoff allows (ClusterConnectionStates).
// So a request for a leader that cannot be reached waits, unsent and with
// no try counted, while the client connects, and, while anything waits, the
// client asks for metadata once a second: librdkafka's 1 s timer, started
// with the client (rd_kafka_1s_tmr_cb), scans the topics
// (rd_kafka_topic_scan_all) and re-queries a partition whose leader's broker
// is down (rd_kafka_toppar_needs_query), so a new leader is learnt within a
// second of its election. The model's ticks are whole seconds from the
// client's start, so clients started at different times ask at different
// moments.
//
// The reconnect backoff is librdkafka's (rd_kafka_broker_update_reconnect_
// backoff): as an attempt to a node starts, the next one is allowed the
// node's current backoff later, with -25 % to +50 % jitter and at most
// reconnect.backoff.max.ms, and the backoff doubles, up to that cap; when
// the next attempt was allowed more than reconnect.backoff.max.ms before it
// starts, the backoff starts over from reconnect.backoff.ms. So an attempt
// that hangs until socket.connection.setup.timeout.ms (30 s) is followed at
// once by the next, from a fresh backoff. (The Java client counts its wait
// from the disconnect and resets it on a successful connection.) A
// connection another request opened (the metadata client's) counts as an
// attempt only for a node not tried before, as one that started when it
// failed.
//
// The producer's batches and the consumer's fetches and offset lookups
// (ListOffsets) use it. The owner keeps
// its own wake-up timer: ready() and query_due() say when to look again.
// Times are in whole milliseconds, as the clients keep them.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "model/kafka/network_client.h"
#include "model/kafka/types.h"
#include "sim/random.h"

namespace client {

// librdkafka's 1 s timer, started with the client: ticks at start + 1 s,
// start + 2 s, ... due() is true once on each tick (at the tick itself)
// and says when the next one is.
class ScanTimer {
 public:
  explicit ScanTimer(int64_t start_ms) : start_ms_(start_ms) {}
  bool due(int64_t now_ms, int64_t* next_ms);

 private:
  static constexpr int64_t kIntervalMs = 1000;
  int64_t start_ms_;
  int64_t last_ms_ = -1;  // the tick last found due
};

class ConnectionWait {
 public:
  struct Backoff {
    int32_t initial_ms = 100;   // reconnect.backoff.ms
    int32_t max_ms = 10000;     // reconnect.backoff.max.ms
  };
  // Jitter is drawn from `rng` (the owning process's); the client started
  // at `start_ms`.
  ConnectionWait(kafka::NetworkClient& net, sim::Rng& rng, Backoff backoff, int64_t start_ms)
      : net_(net), rng_(rng), backoff_(backoff), scan_(start_ms) {}

  // Whether `node` is connected at `address`. If not: a connection to it
  // being opened gets `failed` too (opened by another request, say);
  // otherwise one is opened (a connection to an old address is dropped),
  // unless the node's backoff has not run out, and then *retry_at_ms is set
  // to when it does (it is left alone otherwise: the connection's success
  // or `failed` will tell). `failed` is the NetworkClient's: it runs once if
  // the connection does not come up.
  template <typename F>
  bool ready(kafka::BrokerId node, const kafka::NodeAddress& address, int64_t now_ms, F&& failed,
             int64_t* retry_at_ms) {
    if (net_.connected(node, address)) return true;  // as it mostly is: nothing built
    return connect(node, address, now_ms, kafka::NetworkClient::ConnectFailed(std::forward<F>(failed)),
                   retry_at_ms);
  }
  // A connection to `node` failed at now_ms: for a node not tried before
  // (another request opened it) that was an attempt.
  void failed(kafka::BrokerId node, int64_t now_ms);
  // Called while something waits for a leader's connection. True on a tick
  // of the 1 s timer (a whole number of seconds after the start) not asked
  // on before: time to ask for metadata. *next_ms is when to look again (the
  // next tick).
  bool query_due(int64_t now_ms, int64_t* next_ms) { return scan_.due(now_ms, next_ms); }

 private:
  struct NodeBackoff {
    int64_t started_ms = 0;  // the last attempt's start
    int64_t wait_ms = 0;     // from then until the next may start (jittered)
    int64_t current_ms = 0;  // the next attempt's backoff before jitter
  };
  // An attempt to a node starts now: its next wait is set (jittered) and
  // its backoff doubled.
  void attempt(NodeBackoff& b, bool first, int64_t now_ms);
  // ready() for a node not connected at `address`.
  bool connect(kafka::BrokerId node, const kafka::NodeAddress& address, int64_t now_ms,
               kafka::NetworkClient::ConnectFailed failed, int64_t* retry_at_ms);

  kafka::NetworkClient& net_;
  sim::Rng& rng_;
  Backoff backoff_;
  std::map<kafka::BrokerId, NodeBackoff> nodes_;  // nodes attempted so far
  ScanTimer scan_;
};

}  // namespace client
