// How a client that holds a leader's requests until it is connected to that
// leader paces itself: librdkafka serves a partition only from a broker
// thread that is UP; the Java clients send only to nodes that
// NetworkClient.ready accepts and start connecting to the others
// (initiateConnect), no sooner than reconnect.backoff.ms after the last
// attempt (ClusterConnectionStates). So a request for a leader that cannot
// be reached waits, unsent and with no try counted, while the client
// connects — one attempt per reconnect.backoff.ms, counted from the start
// of the last attempt or from its failure — and, while anything waits, the
// client asks for metadata on each whole second of virtual time:
// librdkafka's 1 s topic scan (rd_kafka_topic_scan_all) re-queries a
// partition whose leader's broker is down (rd_kafka_toppar_needs_query), so
// a new leader is learnt within a second of its election.
//
// The producer's batches and the consumer's fetches use it. The owner keeps
// its own wake-up timer: ready() and query_due() say when to look again.
// Both clients grow the reconnect backoff exponentially up to
// reconnect.backoff.max.ms; the model keeps it fixed (docs/fidelity.md).
// Times are in whole milliseconds, as the clients keep them.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "model/kafka/network_client.h"
#include "model/kafka/types.h"

namespace client {

class ConnectionWait {
 public:
  ConnectionWait(kafka::NetworkClient& net, int32_t reconnect_backoff_ms)
      : net_(net), reconnect_backoff_ms_(reconnect_backoff_ms) {}

  // Whether `node` is connected at `address`. If not: a connection to it
  // being opened gets `failed` too (opened by another request, say);
  // otherwise one is opened (a connection to an old address is dropped),
  // unless the last attempt was less than reconnect.backoff.ms ago, and then
  // *retry_at_ms is set to when the next may start (it is left alone
  // otherwise: the connection's success or `failed` will tell). `failed` is
  // the NetworkClient's: it runs once if the connection does not come up.
  template <typename F>
  bool ready(kafka::BrokerId node, const kafka::NodeAddress& address, int64_t now_ms, F&& failed,
             int64_t* retry_at_ms) {
    if (net_.connected(node, address)) return true;  // as it mostly is: nothing built
    return connect(node, address, now_ms, kafka::NetworkClient::ConnectFailed(std::forward<F>(failed)),
                   retry_at_ms);
  }
  // An attempt to connect to `node` failed at now_ms: the backoff runs from
  // here.
  void failed(kafka::BrokerId node, int64_t now_ms) { last_attempt_ms_[node] = now_ms; }
  // Called while something waits for a leader's connection. True on a whole
  // second not asked on before: time to ask for metadata. *next_ms is when
  // to look again (the next whole second).
  bool query_due(int64_t now_ms, int64_t* next_ms);

 private:
  static constexpr int64_t kLeaderQueryIntervalMs = 1000;
  // ready() for a node not connected at `address`.
  bool connect(kafka::BrokerId node, const kafka::NodeAddress& address, int64_t now_ms,
               kafka::NetworkClient::ConnectFailed failed, int64_t* retry_at_ms);

  kafka::NetworkClient& net_;
  int32_t reconnect_backoff_ms_;
  // When the last connection attempt to each node began, or failed.
  std::map<kafka::BrokerId, int64_t> last_attempt_ms_;
  // The whole second on which metadata was last asked for.
  int64_t last_query_ms_ = -1;
};

}  // namespace client
