#include "model/client/connection_wait.h"

#include <algorithm>
#include <utility>

namespace client {

void ConnectionWait::attempt(NodeBackoff& b, bool first, int64_t now_ms) {
  // rd_kafka_broker_update_reconnect_backoff, as an attempt starts.
  if (first || b.started_ms + b.wait_ms + backoff_.max_ms < now_ms) b.current_ms = backoff_.initial_ms;
  const int64_t jittered = b.current_ms == 0 ? 0 : rng_.uniform(b.current_ms * 3 / 4, b.current_ms * 3 / 2);
  b.wait_ms = std::min<int64_t>(jittered, backoff_.max_ms);
  b.current_ms = std::min<int64_t>(b.current_ms * 2, backoff_.max_ms);
  b.started_ms = now_ms;
}

bool ConnectionWait::connect(kafka::BrokerId node, const kafka::NodeAddress& address, int64_t now_ms,
                             kafka::NetworkClient::ConnectFailed failed, int64_t* retry_at_ms) {
  if (net_.connecting(node, address)) {
    net_.connect(node, address, std::move(failed));  // hear of its failure too
    return false;
  }
  const auto [it, first] = nodes_.try_emplace(node);
  if (!first && now_ms < it->second.started_ms + it->second.wait_ms) {
    *retry_at_ms = it->second.started_ms + it->second.wait_ms;
    return false;
  }
  attempt(it->second, first, now_ms);
  // Given up, if it hangs, after the NetworkClient's connection setup
  // timeout (socket.connection.setup.timeout.ms).
  return net_.connect(node, address, std::move(failed));
}

void ConnectionWait::failed(kafka::BrokerId node, int64_t now_ms) {
  const auto [it, first] = nodes_.try_emplace(node);
  if (first) attempt(it->second, true, now_ms);  // another request's connection
}

bool ScanTimer::due(int64_t now_ms, int64_t* next_ms) {
  const int64_t ticks = std::max<int64_t>(1, (now_ms - start_ms_ + kIntervalMs - 1) / kIntervalMs);
  const int64_t tick = start_ms_ + ticks * kIntervalMs;
  *next_ms = tick == now_ms ? now_ms + kIntervalMs : tick;
  if (tick != now_ms || last_ms_ == now_ms) return false;
  last_ms_ = now_ms;
  return true;
}

}  // namespace client
