// What a client tells its application of failed broker connections.
//
// librdkafka reports a broker connection that goes down once, to the
// application's error callback (rd_kafka_broker_fail raises _TRANSPORT as the
// broker thread's state drops), however many requests were on it; aiokafka
// logs a lost connection once too. The model's NetworkClient fails each
// request that was on the connection, all at the same virtual instant, and
// each failure reaches the client's error path: ConnectionErrors lets the
// first (error, node) of an instant through and drops its repeats, so the
// trace and the history hold one client_error per failure and error, not one
// per request (a request timeout that takes the connection down is two: the
// timeout, then the connection_closed of the requests that were with it).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace client {

class ConnectionErrors {
 public:
  // True for the first report of `error` from `node` at `now_us`.
  bool first(const std::string& error, int32_t node, int64_t now_us);

 private:
  int64_t at_us_ = -1;
  std::vector<std::pair<std::string, int32_t>> seen_;  // at at_us_; a handful at most
};

}  // namespace client
