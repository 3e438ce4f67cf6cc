#include "model/client/consumer.h"

#include <algorithm>
#include <utility>

#include <boost/container/small_vector.hpp>

namespace client {

namespace {
// librdkafka's wait before asking for an offset again after a ListOffsets
// error that is not permanent (rd_kafka_toppar_offset_retry's 500 ms).
constexpr int64_t kOffsetQueryRetryMs = 500;
}  // namespace

using kafka::BrokerId;
using kafka::ErrorCode;
using kafka::TopicPartition;

Consumer::Consumer(sim::ProcessContext& ctx, ConsumerConfig config, ConsumerListener& listener)
    : ctx_(ctx),
      config_(std::move(config)),
      listener_(listener),
      // Requests are pipelined on a connection (max.in.flight): a metadata
      // request or ListOffsets goes on the wire behind a fetch to the same
      // broker, where the broker reads it once the fetch is answered. Were it
      // held back instead, behind a fetch to a broker whose host lost power,
      // it would wait out the fetch's timeout; on the wire, it is
      // retransmitted and reset as soon as the host is back.
      net_(ctx, kafka::NetworkClient::Options{config_.request_timeout_ms, config_.max_in_flight,
                                              config_.connection_setup_timeout_ms}),
      metadata_(ctx, net_,
                Metadata::Options{config_.bootstrap, config_.retry_backoff_ms,
                                  config_.reconnect_backoff_ms,
                                  metadata_refresh_ms(config_.metadata_refresh_interval_ms, config_.metadata_max_age_ms)},
                [this](const std::string& e, int32_t node) { event(e, node); },
                [this] { on_metadata(); }),
      waits_(net_, ctx.rng(), {config_.reconnect_backoff_ms, config_.reconnect_backoff_max_ms},
             ctx.now().us() / 1000) {}

void Consumer::event(const std::string& name, int32_t node) {
  if (!errors_.first(name, node, ctx_.now().us())) return;  // the same failure, another request
  ctx_.trace("client_error", {{"error", name}, {"node", node}});
  listener_.on_client_event(name, node);
}

void Consumer::assign(const std::vector<TopicPartition>& partitions) {
  assigned_ = std::set<TopicPartition>(partitions.begin(), partitions.end());
  for (auto it = positions_.begin(); it != positions_.end();) {
    it = assigned_.count(it->first) == 0 ? positions_.erase(it) : std::next(it);
  }
  std::erase_if(reset_retry_at_ms_, [this](const auto& e) { return assigned_.count(e.first) == 0; });
  for (const TopicPartition& tp : assigned_) metadata_.add_topic(tp.topic);
  sync_fetch_order();
  pump();
}

void Consumer::sync_fetch_order() {
  std::erase_if(fetch_order_, [this](const TopicPartition& tp) { return assigned_.count(tp) == 0; });
  if (fetch_order_.size() == assigned_.size()) return;
  const std::set<TopicPartition> ordered(fetch_order_.begin(), fetch_order_.end());
  for (const TopicPartition& tp : assigned_) {
    if (ordered.count(tp) == 0) fetch_order_.push_back(tp);
  }
}

void Consumer::move_to_back(const TopicPartition& tp) {
  auto it = std::find(fetch_order_.begin(), fetch_order_.end(), tp);
  if (it != fetch_order_.end()) std::rotate(it, it + 1, fetch_order_.end());
}

void Consumer::assign_topic(const std::string& topic) {
  whole_topics_.insert(topic);
  metadata_.add_topic(topic);
  on_metadata();
}

void Consumer::seek(const TopicPartition& tp, int64_t offset) {
  positions_[tp] = offset;
  pump();
}

std::optional<int64_t> Consumer::position(const TopicPartition& tp) const {
  auto it = positions_.find(tp);
  if (it == positions_.end()) return std::nullopt;
  return it->second;
}

void Consumer::on_metadata() {
  for (const std::string& t : whole_topics_) {
    const int32_t n = metadata_.partition_count(t);
    for (int32_t p = 0; p < n; ++p) assigned_.insert({t, p});
  }
  sync_fetch_order();
  pump();
}

void Consumer::backoff(BrokerId leader) {
  if (!backing_off_.insert(leader).second) return;
  ctx_.after(sim::Duration::millis(config_.retry_backoff_ms), [this, leader] {
    backing_off_.erase(leader);
    pump();
  });
}

void Consumer::request_failed(BrokerId leader, kafka::SendError e) {
  // The leader may be gone or have moved: tell, look again, wait a little.
  if (e != kafka::SendError::none) event(kafka::to_string(e), leader);
  metadata_.note_failure(leader);
  metadata_.refresh();
  backoff(leader);
}

void Consumer::schedule_pump(int64_t at_ms) {
  // Due at that millisecond, or now if it has passed; a pump due no later
  // stands.
  pump_timer_.arm(ctx_, std::max(ctx_.now(), sim::Time::zero() + sim::Duration::millis(at_ms)),
                  [this] { pump(); });
}

bool Consumer::leader_ready(BrokerId leader) {
  const auto address = metadata_.address(leader);
  if (!address) return false;  // not in the metadata (yet): it is asked for
  int64_t retry_at_ms = -1;
  const bool ready = waits_.ready(
      leader, *address, now_ms(),
      [this, leader](kafka::SendError e, bool reported) { on_connect_error(leader, e, reported); },
      &retry_at_ms);
  if (retry_at_ms >= 0) schedule_pump(retry_at_ms);
  return ready;
}

void Consumer::on_connect_error(BrokerId node, kafka::SendError e, bool reported) {
  // As the producer's (Producer::on_connect_error): no metadata request
  // here; the partitions waiting for this leader ask once a second.
  if (!reported) event(kafka::to_string(e), node);
  waits_.failed(node, now_ms());
  metadata_.note_failure(node);
  pump();  // sets the next attempt, the reconnect backoff from now
}

void Consumer::pump() {
  const int64_t now = now_ms();
  std::map<BrokerId, std::vector<TopicPartition>> need_position;
  // Leaders to fetch from, ascending and once each (a std::set would make a
  // node on every pump).
  boost::container::small_vector<BrokerId, 8> leaders;
  bool missing = false;
  for (const TopicPartition& tp : assigned_) {
    const BrokerId leader = metadata_.leader_id(tp);
    if (leader == kafka::kNoBroker) {
      missing = true;
      continue;
    }
    if (positions_.count(tp) == 0) {
      auto wait = reset_retry_at_ms_.find(tp);
      if (wait != reset_retry_at_ms_.end() && wait->second > now) {
        schedule_pump(wait->second);
        continue;
      }
      need_position[leader].push_back(tp);
    } else {
      leaders.push_back(leader);
    }
  }
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  if (missing) metadata_.refresh();
  // With wait_for_connection, a request waits, unsent, until its leader is
  // connected (connection_wait.h).
  bool leader_down = false;
  const auto ready = [&](BrokerId leader) {
    if (!config_.wait_for_connection || leader_ready(leader)) return true;
    leader_down = true;
    return false;
  };
  for (auto& [leader, tps] : need_position) {
    // With auto.offset.reset none, reset_offsets only reports NO_OFFSET: no
    // connection is needed for that.
    const bool no_reset = config_.auto_offset_reset == ConsumerConfig::Reset::none;
    if (resetting_.count(leader) == 0 && backing_off_.count(leader) == 0 && (no_reset || ready(leader))) {
      reset_offsets(leader, tps);
    }
  }
  for (BrokerId leader : leaders) {
    if (fetching_.count(leader) == 0 && backing_off_.count(leader) == 0 && ready(leader)) fetch_from(leader);
  }
  if (leader_down) {
    int64_t next_ms = 0;
    if (waits_.query_due(now, &next_ms)) metadata_.refresh();
    schedule_pump(next_ms);
  }
}

void Consumer::reset_offsets(BrokerId leader, std::vector<TopicPartition> tps) {
  if (config_.auto_offset_reset == ConsumerConfig::Reset::none) {
    for (const TopicPartition& tp : tps) listener_.on_fetch_error(tp, "NO_OFFSET");
    return;
  }
  const auto address = metadata_.address(leader);
  if (!address) return;
  kafka::ListOffsetsRequest req;
  const int64_t ts = config_.auto_offset_reset == ConsumerConfig::Reset::earliest
                         ? kafka::kEarliestTimestamp
                         : kafka::kLatestTimestamp;
  for (const TopicPartition& tp : tps) req.partitions.push_back({tp, ts});
  resetting_.insert(leader);
  net_.send(leader, *address, std::move(req), [this, leader](kafka::SendError e, const kafka::Response* r) {
    resetting_.erase(leader);
    const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::ListOffsetsResponse>(r);
    if (e != kafka::SendError::none || resp == nullptr) {
      request_failed(leader, e);
      return;
    }
    for (const kafka::ListOffsetsPartitionResponse& p : resp->partitions) {
      if (p.error == ErrorCode::none) {
        reset_retry_at_ms_.erase(p.tp);
        if (assigned_.count(p.tp) != 0 && positions_.count(p.tp) == 0) positions_[p.tp] = p.offset.value;
      } else if (p.error == ErrorCode::offset_not_available) {
        // A new leader whose high watermark has not reached its epoch's
        // start (KIP-207): librdkafka refreshes its metadata and asks again
        // in a fixed 500 ms (rd_kafka_toppar_offset_retry); Java retries
        // after retry.backoff.ms.
        reset_retry_at_ms_[p.tp] = now_ms() + kOffsetQueryRetryMs;
        metadata_.refresh();
      } else {
        metadata_.invalidate(p.tp);
      }
    }
    pump();
  });
}

void Consumer::fetch_from(BrokerId leader) {
  const auto address = metadata_.address(leader);
  if (!address) return;
  kafka::FetchRequest req;
  req.replica_id = kafka::kConsumerReplicaId;
  req.max_wait_ms = config_.fetch_wait_max_ms;
  req.min_bytes = config_.fetch_min_bytes;
  req.max_bytes = config_.fetch_max_bytes;
  // The offset each partition was fetched from: an answer for a partition
  // whose position has moved since (a seek, a new assignment) is stale and
  // dropped, as the Java client's Fetcher drops it.
  req.partitions.reserve(fetch_order_.size());
  std::vector<std::pair<TopicPartition, int64_t>> fetched_from;
  fetched_from.reserve(fetch_order_.size());
  for (const TopicPartition& tp : fetch_order_) {
    auto pos = positions_.find(tp);
    if (metadata_.leader_id(tp) != leader || pos == positions_.end()) continue;
    req.partitions.push_back({tp, kafka::Offset{pos->second}, kafka::LeaderEpoch{-1}, kafka::Offset{-1},
                              config_.max_partition_fetch_bytes});
    fetched_from.emplace_back(tp, pos->second);
  }
  if (req.partitions.empty()) return;
  // librdkafka's round robin (rd_kafka_broker_fetch_toppars): the next fetch
  // from this leader starts one partition further on.
  move_to_back(req.partitions.front().tp);
  // Sorted, to be looked up by partition.
  std::sort(fetched_from.begin(), fetched_from.end());
  fetching_.insert(leader);
  net_.send(leader, *address, std::move(req),
            [this, leader, fetched_from = std::move(fetched_from)](kafka::SendError e, const kafka::Response* r) {
    fetching_.erase(leader);
    const auto* resp = r == nullptr ? nullptr : std::get_if<kafka::FetchResponse>(r);
    if (e != kafka::SendError::none || resp == nullptr) {
      request_failed(leader, e);
      return;
    }
    std::vector<ConsumedRecord> out;
    bool errors = false;
    for (const kafka::FetchPartitionResponse& p : resp->partitions) {
      auto pos = positions_.find(p.tp);
      if (pos == positions_.end() || assigned_.count(p.tp) == 0) continue;
      auto from = std::lower_bound(fetched_from.begin(), fetched_from.end(), p.tp,
                                   [](const auto& f, const TopicPartition& tp) { return f.first < tp; });
      if (from == fetched_from.end() || !(from->first == p.tp) || from->second != pos->second) continue;
      switch (p.error) {
        case ErrorCode::none:
          for (const kafka::Record& rec : p.records) {
            if (rec.offset.value < pos->second) continue;
            out.push_back({p.tp, rec.offset.value, rec.value, rec.timestamp_ms, p.high_watermark.value});
            pos->second = rec.offset.value + 1;
          }
          break;
        case ErrorCode::offset_out_of_range:
          listener_.on_fetch_error(p.tp, kafka::to_string(p.error));
          // auto.offset.reset decides where to start again.
          positions_.erase(pos);
          break;
        default:
          errors = true;
          listener_.on_fetch_error(p.tp, kafka::to_string(p.error));
          metadata_.invalidate(p.tp);
          break;
      }
    }
    if (!out.empty()) listener_.on_records(out);
    if (errors) {
      backoff(leader);
      return;
    }
    pump();
  });
}

}  // namespace client
