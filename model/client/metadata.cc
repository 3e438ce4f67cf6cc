#include "model/client/metadata.h"

#include "sim/assert.h"

namespace client {

Metadata::Metadata(sim::ProcessContext& ctx, kafka::NetworkClient& net, Options options,
                   std::function<void(const std::string&, int32_t)> on_error,
                   std::function<void()> on_update)
    : ctx_(ctx),
      net_(net),
      options_(std::move(options)),
      on_error_(std::move(on_error)),
      on_update_(std::move(on_update)) {}

void Metadata::add_topic(const std::string& topic) {
  if (topics_.insert(topic).second) refresh();
}

int32_t Metadata::partition_count(const std::string& topic) const {
  auto it = counts_.find(topic);
  return it == counts_.end() ? 0 : it->second;
}

std::vector<int32_t> Metadata::available(const std::string& topic) const {
  std::vector<int32_t> out;
  available_into(topic, out);
  return out;
}

void Metadata::available_into(const kafka::Topic& topic, std::vector<int32_t>& out) const {
  out.clear();
  const int32_t n = partition_count(topic);
  // The topic's partitions are adjacent in leaders_, in partition order.
  for (auto l = leaders_.lower_bound(kafka::TopicPartition{topic, 0});
       l != leaders_.end() && l->first.topic == topic && l->first.partition < n; ++l) {
    if (l->second != kafka::kNoBroker && brokers_.count(l->second) != 0) {
      out.push_back(l->first.partition);
    }
  }
}

std::optional<kafka::NodeAddress> Metadata::address(kafka::BrokerId b) const {
  const kafka::NodeAddress* address = brokers_.find(b);
  if (address == nullptr) return std::nullopt;
  return *address;
}

// How long a broker that failed is passed over when another will do.
constexpr int64_t kFailedBrokerAvoidMs = 10000;

std::optional<kafka::BrokerId> Metadata::any_broker() {
  if (brokers_.empty()) return std::nullopt;
  std::vector<kafka::BrokerId> order;
  auto start = brokers_.begin();
  std::advance(start, static_cast<std::ptrdiff_t>(next_ % brokers_.size()));
  for (auto it = start; it != brokers_.end(); ++it) order.push_back(it->first);
  for (auto it = brokers_.begin(); it != start; ++it) order.push_back(it->first);
  for (kafka::BrokerId b : order) {
    if (net_.connected(b)) return b;
  }
  const int64_t now = ctx_.now().us() / 1000;
  std::optional<kafka::BrokerId> oldest_failure;
  for (kafka::BrokerId b : order) {
    auto f = failed_at_ms_.find(b);
    if (f == failed_at_ms_.end() || now - f->second >= kFailedBrokerAvoidMs) return b;
    if (!oldest_failure || f->second < failed_at_ms_.at(*oldest_failure)) oldest_failure = b;
  }
  return oldest_failure;
}

kafka::BrokerId Metadata::leader_id(const kafka::TopicPartition& tp) const {
  const kafka::BrokerId* b = leaders_.find(tp);
  if (b == nullptr || *b == kafka::kNoBroker || brokers_.count(*b) == 0) return kafka::kNoBroker;
  return *b;
}

void Metadata::note_failure(kafka::BrokerId b) {
  if (b >= 0) failed_at_ms_[b] = ctx_.now().us() / 1000;
}

void Metadata::invalidate(const kafka::TopicPartition& tp) {
  if (kafka::BrokerId* b = leaders_.find(tp)) *b = kafka::kNoBroker;
  refresh();
}

void Metadata::arm_age_timer() {
  age_timer_.arm(ctx_, sim::Time::zero() + sim::Duration::millis(last_answer_ms_ + options_.refresh_ms),
                 [this] { on_age(); });
}

void Metadata::on_age() {
  // The timer is due at the earliest deadline armed: a later answer moved
  // the age on, and the timer with it.
  if (ctx_.now().us() / 1000 - last_answer_ms_ >= options_.refresh_ms) {
    refresh();
  } else {
    arm_age_timer();
  }
}

void Metadata::refresh() {
  if (in_flight_) {
    wanted_ = true;
    return;
  }
  // Backing off after the last attempt: the retry already set asks then.
  if (retry_pending_) return;
  int32_t node;
  kafka::NodeAddress address;
  if (auto b = any_broker()) {
    node = *b;
    address = brokers_.at(*b);
  } else {
    SIM_ASSERT(!options_.bootstrap.empty(), "client without bootstrap servers");
    const size_t i = next_ % options_.bootstrap.size();
    node = -1 - static_cast<int32_t>(i);  // bootstrap nodes have negative ids, as in the Java client
    address = {options_.bootstrap[i].host, options_.bootstrap[i].port};
  }
  in_flight_ = true;
  wanted_ = false;
  ctx_.trace("metadata_request", {{"node", node}});
  std::vector<std::string> topics(topics_.begin(), topics_.end());
  net_.send(node, address, kafka::MetadataRequest{topics, true},
            [this, node](kafka::SendError e, const kafka::Response* r) {
              in_flight_ = false;
              const auto* m = r == nullptr ? nullptr : std::get_if<kafka::MetadataResponse>(r);
              if (e != kafka::SendError::none || m == nullptr) {
                if (e != kafka::SendError::none && on_error_) on_error_(kafka::to_string(e), node);
                note_failure(node);
                ++next_;
                // Every known broker failed in turn: back to the bootstrap list.
                if (!brokers_.empty() && next_ % (brokers_.size() + 1) == 0) brokers_.clear();
                retry_after(options_.reconnect_backoff_ms);
                return;
              }
              on_answer(*m);
            });
}

void Metadata::on_answer(const kafka::MetadataResponse& r) {
  last_answer_ms_ = ctx_.now().us() / 1000;
  arm_age_timer();
  if (!r.brokers.empty()) {
    brokers_.clear();
    for (const kafka::BrokerMetadata& b : r.brokers) brokers_[b.id] = {b.host, b.port};
  } else {
    // A broker that names no broker (its metadata cache is empty: the
    // controller has not reached it) taught nothing: the next request goes
    // to the next server, as after a failure. librdkafka picks a usable
    // broker at random for each request (rd_kafka_broker_any_usable), the
    // Java client the least loaded one; asking the same one again and again
    // would never learn the cluster.
    ++next_;
  }
  bool missing = false;
  for (const kafka::TopicMetadata& t : r.topics) {
    if (t.partitions.empty()) {
      missing = true;  // being created (LEADER_NOT_AVAILABLE) or unknown
      continue;
    }
    counts_[t.name] = static_cast<int32_t>(t.partitions.size());
    for (const kafka::PartitionMetadata& p : t.partitions) {
      leaders_[{t.name, p.partition}] = p.leader;
      missing = missing || p.leader == kafka::kNoBroker;
    }
  }
  if (missing || wanted_) {
    wanted_ = false;
    retry_after(options_.retry_backoff_ms);
  }
  if (on_update_) on_update_();
}

void Metadata::retry_after(int32_t ms) {
  if (retry_pending_) return;
  retry_pending_ = true;
  ctx_.after(sim::Duration::millis(ms), [this] {
    retry_pending_ = false;
    refresh();
  });
}

}  // namespace client
