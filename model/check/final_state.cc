#include "model/check/final_state.h"

#include <optional>
#include <string_view>
#include <variant>

#include "model/kafka/broker.h"
#include "model/kafka/partition.h"

namespace check {

namespace {

std::optional<int64_t> int_field(const sim::TraceRecord& r, std::string_view key) {
  const sim::TraceField::Value* v = r.field(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  if (const auto* u = std::get_if<uint64_t>(v)) return static_cast<int64_t>(*u);
  return std::nullopt;
}

std::optional<std::string_view> string_field(const sim::TraceRecord& r, std::string_view key) {
  const sim::TraceField::Value* v = r.field(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* s = std::get_if<std::string_view>(v)) return *s;
  return std::nullopt;
}

// "topic-3" as kafka::to_string(TopicPartition) writes it (a topic may hold
// dashes itself: the partition is after the last one).
std::optional<kafka::TopicPartition> parse_partition(std::string_view s) {
  const size_t dash = s.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == s.size() || s.size() - dash > 10) {
    return std::nullopt;
  }
  int32_t p = 0;
  for (const char c : s.substr(dash + 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    p = p * 10 + (c - '0');
  }
  return kafka::TopicPartition{std::string(s.substr(0, dash)), p};
}

// A partition directory ("/var/lib/kafka/data/t-0") names its partition.
std::optional<kafka::TopicPartition> partition_of_dir(std::string_view dir) {
  const size_t slash = dir.rfind('/');
  return parse_partition(slash == std::string_view::npos ? dir : dir.substr(slash + 1));
}

}  // namespace

bool is_internal_topic(const std::string& topic) {
  return topic == "__consumer_offsets" || topic == "__transaction_state";
}

FinalState read_final_state(const sim::World& world, const std::map<kafka::BrokerId, sim::ProcessId>& brokers,
                            std::vector<FinalState::Truncation> truncations, const FinalStateOptions& options) {
  FinalState fs;
  fs.truncations = std::move(truncations);
  // The leader to mark per partition: (leader epoch, broker) of the best so far.
  std::map<kafka::TopicPartition, std::pair<int64_t, size_t>> leader_index;
  for (const auto& [id, process] : brokers) {  // ascending broker id
    if (!world.is_running(process)) continue;  // killed, exited or its host off
    const auto* broker = world.process_as<kafka::Broker>(process);
    if (broker == nullptr) continue;
    for (const auto& [tp, partition] : broker->partition_map()) {
      if (!options.include_internal_topics && is_internal_topic(tp.topic)) continue;
      const kafka::PartitionLog& log = partition->log();
      FinalState::Replica r;
      r.broker = id;
      r.high_watermark = partition->high_watermark().value;
      r.log_start = log.log_start().value;
      r.records.reserve(static_cast<size_t>(log.log_end().value - log.log_start().value));
      for (kafka::Offset o = log.log_start(); o < log.log_end(); o = o + 1) {
        const kafka::Record* record = log.at(o);
        if (record != nullptr) r.records.emplace_back(o.value, record->value);
      }
      std::vector<FinalState::Replica>& replicas = fs.partitions[tp];
      replicas.push_back(std::move(r));
      if (partition->is_leader()) {
        const int64_t epoch = partition->leader_epoch().value;
        auto [it, inserted] = leader_index.emplace(tp, std::make_pair(epoch, replicas.size() - 1));
        if (!inserted && epoch > it->second.first) it->second = {epoch, replicas.size() - 1};
      }
    }
  }
  for (const auto& [tp, best] : leader_index) fs.partitions[tp][best.second].leader = true;
  return fs;
}

TruncationRecorder::TruncationRecorder(sim::World& world, std::map<kafka::BrokerId, sim::ProcessId> brokers,
                                       FinalStateOptions options)
    : world_(world), brokers_(std::move(brokers)), options_(options) {
  for (const auto& [id, process] : brokers_) {
    by_name_[{world_.host_name(world_.host_of(process)), world_.process_name(process)}] = id;
  }
  handle_ = world_.trace().add_observer([this](const sim::TraceRecord& r) { on_record(r); });
}

TruncationRecorder::~TruncationRecorder() { world_.trace().remove_observer(handle_); }

kafka::BrokerId TruncationRecorder::broker_of(const sim::TraceRecord& r) const {
  const auto it = by_name_.find(std::make_pair(std::string(r.host), std::string(r.process)));
  return it == by_name_.end() ? kafka::kNoBroker : it->second;
}

void TruncationRecorder::add(int64_t time_us, kafka::BrokerId broker, kafka::TopicPartition tp, int64_t from,
                             int64_t to) {
  if (!options_.include_internal_topics && is_internal_topic(tp.topic)) return;
  truncations_.push_back(FinalState::Truncation{time_us, broker, std::move(tp), from, to});
}

void TruncationRecorder::on_record(const sim::TraceRecord& r) {
  if (r.kind == "power_off" && r.process == "host") {
    // The processes on the host are still running at this record: note each
    // broker's log ends before the page cache goes.
    for (const auto& [id, process] : brokers_) {
      if (world_.host_name(world_.host_of(process)) != r.host) continue;
      const auto* broker = world_.process_as<kafka::Broker>(process);
      if (broker == nullptr) continue;
      auto& ends = at_power_off_[id];
      ends.clear();
      for (const auto& [tp, partition] : broker->partition_map()) ends[tp] = partition->log().log_end().value;
    }
    return;
  }
  if (r.kind != "log_truncated" && r.kind != "log_loaded" && r.kind != "log_recovered") return;
  const kafka::BrokerId broker = broker_of(r);
  if (broker == kafka::kNoBroker) return;
  const int64_t now = r.time.us();
  if (r.kind == "log_truncated") {
    // Broker::truncate and the OFFSET_OUT_OF_RANGE path: partition, from, to.
    const auto partition = string_field(r, "partition");
    const auto from = int_field(r, "from");
    const auto to = int_field(r, "to");
    if (!partition || !from || !to) return;
    if (auto tp = parse_partition(*partition)) add(now, broker, std::move(*tp), *from, *to);
    return;
  }
  if (r.kind == "log_loaded") {
    // What the broker held when the power went against what it read back.
    const auto partition = string_field(r, "partition");
    const auto log_end = int_field(r, "log_end");
    if (!partition || !log_end) return;
    auto tp = parse_partition(*partition);
    if (!tp) return;
    auto ends = at_power_off_.find(broker);
    if (ends == at_power_off_.end()) return;
    auto end = ends->second.find(*tp);
    if (end == ends->second.end()) return;
    const int64_t before = end->second;
    ends->second.erase(end);
    if (*log_end < before) add(now, broker, std::move(*tp), before, *log_end);
    return;
  }
  // log_recovered: a torn tail cut at load. Counted here only when the log
  // end before the power loss is not known (log_loaded covers it otherwise).
  const auto dir = string_field(r, "dir");
  const auto log_end = int_field(r, "log_end");
  const auto dropped = int_field(r, "truncated_records");
  if (!dir || !log_end || !dropped || *dropped <= 0) return;
  auto tp = partition_of_dir(*dir);
  if (!tp) return;
  if (auto ends = at_power_off_.find(broker); ends != at_power_off_.end() && ends->second.count(*tp) != 0) return;
  // The dropped records followed the last good one: their offsets, had they
  // been read, would have continued the log.
  add(now, broker, std::move(*tp), *log_end + *dropped, *log_end);
}

}  // namespace check
