#include "model/client/connection_wait.h"

#include <utility>

namespace client {

bool ConnectionWait::connect(kafka::BrokerId node, const kafka::NodeAddress& address, int64_t now_ms,
                             kafka::NetworkClient::ConnectFailed failed, int64_t* retry_at_ms) {
  if (net_.connecting(node, address)) {
    net_.connect(node, address, std::move(failed));  // hear of its failure too
    return false;
  }
  if (const auto last = last_attempt_ms_.find(node);
      last != last_attempt_ms_.end() && now_ms < last->second + reconnect_backoff_ms_) {
    *retry_at_ms = last->second + reconnect_backoff_ms_;
    return false;
  }
  last_attempt_ms_[node] = now_ms;
  // Given up, if it hangs, after the NetworkClient's connection setup
  // timeout (socket.connection.setup.timeout.ms).
  return net_.connect(node, address, std::move(failed));
}

bool ConnectionWait::query_due(int64_t now_ms, int64_t* next_ms) {
  const int64_t tick = (now_ms + kLeaderQueryIntervalMs - 1) / kLeaderQueryIntervalMs * kLeaderQueryIntervalMs;
  *next_ms = tick == now_ms ? now_ms + kLeaderQueryIntervalMs : tick;
  if (tick != now_ms || last_query_ms_ == now_ms) return false;
  last_query_ms_ = now_ms;
  return true;
}

}  // namespace client
