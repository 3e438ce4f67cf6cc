#include "model/client/assignor.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace client {

namespace {

GroupAssignment empty_assignment(const Subscriptions& subscriptions) {
  GroupAssignment out;
  for (const auto& [member, _] : subscriptions) out[member];
  return out;
}

bool subscribed(const std::vector<std::string>& topics, const std::string& topic) {
  return std::find(topics.begin(), topics.end(), topic) != topics.end();
}

}  // namespace

GroupAssignment range_assign(const std::map<std::string, int32_t>& partitions_per_topic,
                             const Subscriptions& subscriptions) {
  GroupAssignment out = empty_assignment(subscriptions);
  // topic -> its members, in member-id order (the map iterates sorted).
  std::map<std::string, std::vector<std::string>> members_of;
  for (const auto& [member, topics] : subscriptions) {
    for (const std::string& t : std::set<std::string>(topics.begin(), topics.end())) {
      members_of[t].push_back(member);
    }
  }
  for (const auto& [topic, members] : members_of) {
    const auto count = partitions_per_topic.find(topic);
    if (count == partitions_per_topic.end() || count->second <= 0) continue;
    const int32_t n = static_cast<int32_t>(members.size());
    const int32_t each = count->second / n;
    const int32_t extra = count->second % n;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t start = each * i + std::min(i, extra);
      const int32_t length = each + (i < extra ? 1 : 0);
      for (int32_t p = start; p < start + length; ++p) out[members[static_cast<size_t>(i)]].push_back({topic, p});
    }
  }
  for (auto& [_, tps] : out) std::sort(tps.begin(), tps.end());
  return out;
}

GroupAssignment round_robin_assign(const std::map<std::string, int32_t>& partitions_per_topic,
                                   const Subscriptions& subscriptions) {
  GroupAssignment out = empty_assignment(subscriptions);
  std::vector<std::string> members;  // sorted: the map iterates in order
  std::set<std::string> all_topics;
  for (const auto& [member, topics] : subscriptions) {
    members.push_back(member);
    all_topics.insert(topics.begin(), topics.end());
  }
  if (members.empty()) return out;
  size_t next = 0;  // the circular iterator over members
  for (const std::string& topic : all_topics) {
    const auto count = partitions_per_topic.find(topic);
    if (count == partitions_per_topic.end()) continue;
    for (int32_t p = 0; p < count->second; ++p) {
      // Some member subscribes to `topic` (it is in all_topics), so this ends.
      while (!subscribed(subscriptions.at(members[next]), topic)) next = (next + 1) % members.size();
      out[members[next]].push_back({topic, p});
      next = (next + 1) % members.size();
    }
  }
  return out;
}

GroupAssignment assign_partitions(const std::string& strategy,
                                  const std::map<std::string, int32_t>& partitions_per_topic,
                                  const Subscriptions& subscriptions) {
  if (strategy == "range") return range_assign(partitions_per_topic, subscriptions);
  if (strategy == "roundrobin") return round_robin_assign(partitions_per_topic, subscriptions);
  throw std::invalid_argument("unknown partition assignment strategy '" + strategy +
                              "': expected range or roundrobin");
}

std::string encode_subscription(const std::vector<std::string>& topics) {
  std::string out = "topics=";
  for (size_t i = 0; i < topics.size(); ++i) out += (i == 0 ? "" : ",") + topics[i];
  return out;
}

std::optional<std::vector<std::string>> decode_subscription(const std::string& metadata) {
  const std::string prefix = "topics=";
  if (metadata.rfind(prefix, 0) != 0) return std::nullopt;
  std::vector<std::string> topics;
  std::string rest = metadata.substr(prefix.size());
  if (rest.empty()) return topics;
  size_t pos = 0;
  while (true) {
    const size_t comma = rest.find(',', pos);
    const std::string t = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (t.empty()) return std::nullopt;
    topics.push_back(t);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return topics;
}

}  // namespace client
