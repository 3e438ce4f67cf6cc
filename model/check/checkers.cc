// The checkers (see checkers.h for what each one judges and why).
//
// Everything is keyed by ordered containers, and every list is filled in a
// documented order, so that the verdict of a run is the same bytes on every
// machine: a sweep's results can be compared across shards and reruns.
#include "model/check/checkers.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "sim/time.h"

namespace check {

namespace {

// The name of a process index; a producer number a consumer decoded may lie
// outside the history's processes, and is then shown as a number.
std::string name_of(const History& h, uint64_t id) {
  if (id < h.processes().size()) return h.process_name(id);
  return fmt::format("#{}", id);
}

// The producer of a send: its producer field, else the process that sent it.
uint64_t sender(const Op& op) { return op.producer != 0 ? op.producer : op.process; }

bool is_ok(const Op& op, OpFunction f) { return op.type == OpType::ok && op.f == f; }

// An ok poll op that carries a record with a position.
bool is_record(const Op& op) {
  return is_ok(op, OpFunction::poll) && op.partition >= 0 && op.offset >= 0;
}

template <typename T>
void keep(std::vector<T>& items, T item, size_t max_items) {
  if (items.size() < max_items) items.push_back(std::move(item));
}

kafka::TopicPartition tp_of(const History& h, const Op& op) {
  return kafka::TopicPartition{h.string(op.topic), op.partition};
}

}  // namespace

// --- lost --------------------------------------------------------------------

LostResult check_lost(const History& h, const FinalState& fs, size_t max_items) {
  LostResult result;
  // What consumers saw: values per partition, and how far each partition was read.
  std::set<std::tuple<uint32_t, int32_t, uint64_t>> seen;
  std::map<std::pair<uint32_t, int32_t>, int64_t> read_upto;
  for (const Op& op : h.ops()) {
    if (!is_record(op)) continue;
    seen.emplace(op.topic, op.partition, op.value);
    int64_t& upto = read_upto.try_emplace({op.topic, op.partition}, -1).first->second;
    upto = std::max(upto, op.offset);
  }
  std::map<kafka::TopicPartition, std::set<uint64_t>> final_values;  // filled on demand
  std::set<std::tuple<uint32_t, int32_t, uint64_t>> judged;
  for (const Op& op : h.ops()) {
    if (!is_ok(op, OpFunction::send) || op.partition < 0 || op.offset < 0) continue;
    if (!judged.emplace(op.topic, op.partition, op.value).second) continue;
    ++result.acknowledged;
    if (seen.contains({op.topic, op.partition, op.value})) continue;
    const kafka::TopicPartition tp = tp_of(h, op);
    bool lost = false;
    if (const FinalState::Replica* ref = fs.reference(tp)) {
      auto [it, fresh] = final_values.try_emplace(tp);
      if (fresh) {
        for (const auto& [offset, value] : ref->records) it->second.insert(value);
      }
      if (it->second.contains(op.value)) continue;
      if (op.offset < ref->log_start) {
        ++result.unverifiable;  // retention may have deleted it
        continue;
      }
      lost = true;
    } else {
      // No log to look at: Jepsen's rule, a consumer went past it without it.
      auto it = read_upto.find({op.topic, op.partition});
      lost = it != read_upto.end() && it->second > op.offset;
      if (!lost) ++result.unverifiable;
    }
    if (!lost) continue;
    ++result.lost;
    keep(result.items,
         LostResult::Item{tp.topic, op.partition, op.offset, op.value, name_of(h, sender(op)),
                          op.time_us},
         max_items);
  }
  return result;
}

// --- duplicates --------------------------------------------------------------

DuplicatesResult check_duplicates(const History& h, const FinalState& fs, size_t max_items) {
  DuplicatesResult result;
  using Position = std::pair<int32_t, int64_t>;
  struct Positions {
    std::set<Position> in_final;
    std::set<Position> seen;
  };
  std::map<std::pair<std::string, uint64_t>, Positions> messages;
  for (const auto& [tp, replicas] : fs.partitions) {
    const FinalState::Replica* ref = FinalState::reference(replicas);
    if (ref == nullptr) continue;
    for (const auto& [offset, value] : ref->records) {
      messages[{tp.topic, value}].in_final.emplace(tp.partition, offset);
    }
  }
  for (const Op& op : h.ops()) {
    if (!is_record(op)) continue;
    messages[{h.string(op.topic), op.value}].seen.emplace(op.partition, op.offset);
  }
  // Who produced each message: its sends say best; a consumer's record
  // names a producer only when it could tell.
  std::map<std::pair<std::string, uint64_t>, uint64_t> producers;
  for (const Op& op : h.ops()) {
    if (op.f == OpFunction::send) producers.try_emplace({h.string(op.topic), op.value}, sender(op));
  }
  for (const Op& op : h.ops()) {
    if (is_record(op) && op.producer != 0) {
      producers.try_emplace({h.string(op.topic), op.value}, op.producer);
    }
  }
  for (const auto& [message, positions] : messages) {
    if (positions.in_final.size() <= 1 && positions.seen.size() <= 1) continue;
    ++result.duplicated;
    DuplicatesResult::Item item;
    item.topic = message.first;
    item.value = message.second;
    if (auto it = producers.find(message); it != producers.end()) {
      item.producer = name_of(h, it->second);
    }
    item.final_positions.assign(positions.in_final.begin(), positions.in_final.end());
    item.seen_positions.assign(positions.seen.begin(), positions.seen.end());
    keep(result.items, std::move(item), max_items);
  }
  return result;
}

// --- order -------------------------------------------------------------------

OrderResult check_order(const History& h, const FinalState& fs, OrderPromised promised,
                        size_t max_items) {
  OrderResult result;
  if (promised == OrderPromised::no) return result;
  result.checked = true;
  using Position = std::pair<int32_t, int64_t>;
  // Where the final logs first hold each message.
  std::map<std::pair<std::string, uint64_t>, Position> placed;
  for (const auto& [tp, replicas] : fs.partitions) {
    const FinalState::Replica* ref = FinalState::reference(replicas);
    if (ref == nullptr) continue;
    for (const auto& [offset, value] : ref->records) {
      placed.try_emplace({tp.topic, value}, Position{tp.partition, offset});
    }
  }
  // Per (producer, topic, value): its first send, and its first acknowledgement.
  using Message = std::tuple<uint64_t, std::string, uint64_t>;
  std::map<Message, size_t> first_send;
  std::map<Message, Position> acked;
  const std::vector<Op>& ops = h.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.f != OpFunction::send) continue;
    const Message m{sender(op), h.string(op.topic), op.value};
    first_send.try_emplace(m, i);
    if (op.type == OpType::ok && op.partition >= 0 && op.offset >= 0) {
      acked.try_emplace(m, Position{op.partition, op.offset});
    }
  }
  // Per (producer, topic, partition): (send order, value, offset).
  using Stream = std::tuple<uint64_t, std::string, int32_t>;
  std::map<Stream, std::vector<std::tuple<size_t, uint64_t, int64_t>>> streams;
  for (const auto& [m, index] : first_send) {
    const auto& [producer, topic, value] = m;
    std::optional<Position> at;
    if (auto it = placed.find({topic, value}); it != placed.end()) {
      at = it->second;
    } else if (auto ack = acked.find(m);
               ack != acked.end() &&
               fs.reference(kafka::TopicPartition{topic, ack->second.first}) == nullptr) {
      at = ack->second;  // nothing left to contradict the acknowledgement
    }
    if (!at) continue;
    streams[{producer, topic, at->first}].emplace_back(index, value, at->second);
  }
  for (auto& [stream, sends] : streams) {
    std::sort(sends.begin(), sends.end());
    const auto& [producer, topic, partition] = stream;
    std::optional<std::pair<uint64_t, int64_t>> highest;  // (value, offset) sent so far
    for (const auto& [index, value, offset] : sends) {
      if (highest && offset < highest->second) {
        ++result.violations;
        keep(result.items,
             OrderResult::Item{topic, partition, name_of(h, producer), highest->first,
                               highest->second, value, offset},
             max_items);
      }
      if (!highest || offset > highest->second) highest = std::make_pair(value, offset);
    }
  }
  return result;
}

// --- dirty reads -------------------------------------------------------------

DirtyReadsResult check_dirty_reads(const History& h, const FinalState& fs, size_t max_items) {
  DirtyReadsResult result;
  std::set<std::tuple<uint32_t, int32_t, int64_t, uint64_t>> judged;
  for (const Op& op : h.ops()) {
    if (!is_record(op)) continue;
    if (!judged.emplace(op.topic, op.partition, op.offset, op.value).second) continue;
    const kafka::TopicPartition tp = tp_of(h, op);
    const FinalState::Replica* ref = fs.reference(tp);
    if (ref == nullptr || op.offset < ref->log_start) {
      ++result.unverifiable;
      continue;
    }
    ++result.reads_checked;
    const std::optional<uint64_t> now = FinalState::value_at(*ref, op.offset);
    if (now == op.value) continue;
    ++result.dirty;
    DirtyReadsResult::Item item{tp.topic, op.partition, op.offset, op.value,
                                name_of(h, op.process), op.time_us, now, std::nullopt};
    // The truncation that removed it happened after it was read; an earlier
    // one at that offset removed some other record.
    for (const FinalState::Truncation& t : fs.truncations) {
      if (t.tp != tp || t.time_us < op.time_us || op.offset < t.to || op.offset >= t.from) continue;
      if (!item.truncation || t.time_us < item.truncation->time_us) item.truncation = t;
    }
    keep(result.items, std::move(item), max_items);
  }
  return result;
}

// --- divergence --------------------------------------------------------------

DivergenceResult check_divergence(const FinalState& fs, size_t max_items) {
  DivergenceResult result;
  for (const auto& [tp, replicas] : fs.partitions) {
    std::vector<const FinalState::Replica*> sorted;
    for (const FinalState::Replica& r : replicas) sorted.push_back(&r);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto* a, const auto* b) { return a->broker < b->broker; });
    for (size_t i = 0; i < sorted.size(); ++i) {
      for (size_t j = i + 1; j < sorted.size(); ++j) {
        const FinalState::Replica& a = *sorted[i];
        const FinalState::Replica& b = *sorted[j];
        ++result.pairs_compared;
        DivergenceResult::Item item{tp, a.broker, b.broker, -1, std::nullopt, std::nullopt, 0};
        const int64_t from = std::max(a.log_start, b.log_start);
        const int64_t upto = std::min(a.high_watermark, b.high_watermark);
        for (int64_t o = from; o < upto; ++o) {
          const auto va = FinalState::value_at(a, o);
          const auto vb = FinalState::value_at(b, o);
          if (va == vb) continue;
          if (item.offsets++ == 0) {
            item.first_offset = o;
            item.value_a = va;
            item.value_b = vb;
          }
        }
        if (item.offsets == 0) continue;
        ++result.divergent_pairs;
        keep(result.items, std::move(item), max_items);
      }
    }
  }
  return result;
}

// --- availability ------------------------------------------------------------

AvailabilityResult check_availability(const History& h, const std::vector<FaultWindow>& faults,
                                      int64_t end_time_us, int64_t threshold_us,
                                      size_t max_items) {
  AvailabilityResult result;
  result.threshold_us = threshold_us;
  struct Client {
    int64_t first_us = 0;
    std::vector<int64_t> oks;
  };
  std::map<uint32_t, Client> clients;
  for (const Op& op : h.ops()) {
    if (op.process == 0) continue;
    auto [it, fresh] = clients.try_emplace(op.process);
    if (fresh) it->second.first_us = op.time_us;
    if (op.type == OpType::ok) it->second.oks.push_back(op.time_us);
  }
  std::vector<const FaultWindow*> by_start;
  for (const FaultWindow& f : faults) by_start.push_back(&f);
  std::stable_sort(by_start.begin(), by_start.end(),
                   [](const auto* a, const auto* b) { return a->start_us < b->start_us; });
  auto causes = [&](int64_t start, int64_t end) {
    std::vector<std::string> out;
    for (const FaultWindow* f : by_start) {
      if (f->start_us < end && f->end_us > start) out.push_back(f->description);
    }
    return out;
  };
  for (auto& [process, client] : clients) {
    std::sort(client.oks.begin(), client.oks.end());
    AvailabilityResult::PerProcess summary{name_of(h, process), client.oks.size(), 0, 0};
    auto window = [&](int64_t start, int64_t end, bool until_end) {
      const int64_t duration = end - start;
      if (duration <= 0) return;
      summary.longest_us = std::max(summary.longest_us, duration);
      const bool listed = duration > threshold_us;
      const bool longest = !result.longest || duration > result.longest->duration_us;
      if (!listed && !longest) return;
      AvailabilityResult::Window w{summary.process, start, end, duration, until_end,
                                   causes(start, end)};
      if (longest) result.longest = w;
      if (!listed) return;
      ++result.windows;
      ++summary.windows;
      keep(result.items, std::move(w), max_items);
    };
    int64_t last = client.first_us;
    for (int64_t t : client.oks) {
      window(last, t, false);
      last = t;
    }
    window(last, std::max(end_time_us, last), true);
    result.per_process.push_back(std::move(summary));
  }
  return result;
}

// --- latency -----------------------------------------------------------------

LatencyResult check_latency(const History& h) {
  LatencyResult result;
  const std::vector<int64_t> partner = pair_index(h);
  const std::vector<Op>& ops = h.ops();
  std::vector<int64_t> latencies;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!is_ok(ops[i], OpFunction::send)) continue;
    if (partner[i] < 0) {
      ++result.unpaired;
      continue;
    }
    latencies.push_back(ops[i].time_us - ops[static_cast<size_t>(partner[i])].time_us);
  }
  std::sort(latencies.begin(), latencies.end());
  result.count = latencies.size();
  if (latencies.empty()) return result;
  // Nearest rank: ceil(p * n / 100), computed in integers.
  auto percentile = [&](uint64_t p) {
    const uint64_t rank = std::max<uint64_t>(1, (p * result.count + 99) / 100);
    return latencies[rank - 1];
  };
  result.min_us = latencies.front();
  result.p50_us = percentile(50);
  result.p90_us = percentile(90);
  result.p99_us = percentile(99);
  result.max_us = latencies.back();
  return result;
}

// --- consumer groups ---------------------------------------------------------

namespace {

// The detail of a rebalance op: "group=G generation=N assigned=t-0,t-1 left".
struct RebalanceDetail {
  std::string group;
  std::optional<int64_t> generation;
  std::optional<std::vector<std::string>> assigned;
  bool left = false;
};

RebalanceDetail parse_rebalance(std::string_view s) {
  RebalanceDetail d;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = s.find(' ', pos);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view token = s.substr(pos, end - pos);
    pos = end + 1;
    if (token == "left") {
      d.left = true;
    } else if (token.starts_with("group=")) {
      d.group = std::string(token.substr(6));
    } else if (token.starts_with("generation=")) {
      int64_t g = 0;
      bool digits = token.size() > 11;
      for (char c : token.substr(11)) {
        if (c < '0' || c > '9') digits = false;
        else g = g * 10 + (c - '0');
      }
      if (digits) d.generation = g;
    } else if (token.starts_with("assigned=")) {
      std::vector<std::string> parts;
      std::string_view list = token.substr(9);
      while (!list.empty()) {
        const size_t comma = list.find(',');
        parts.emplace_back(list.substr(0, comma));
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
      std::sort(parts.begin(), parts.end());
      d.assigned = std::move(parts);
    }
  }
  return d;
}

}  // namespace

GroupResult check_groups(const History& h, size_t max_items) {
  struct Member {
    bool current = false;
    std::vector<std::string> assigned;
  };
  struct Acc {
    std::set<int64_t> generations;
    uint64_t without_generation = 0;
    GroupResult::Group out;
    std::map<std::string, Member> members;
  };
  std::map<std::string, Acc> groups;
  const std::vector<int64_t> partner = pair_index(h);
  const std::vector<Op>& ops = h.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const std::string& consumer = name_of(h, op.process);
    if (op.f == OpFunction::exit) {
      for (auto& [_, acc] : groups) {
        if (auto it = acc.members.find(consumer); it != acc.members.end()) {
          it->second.current = false;
        }
      }
      continue;
    }
    if (op.f != OpFunction::rebalance) continue;
    const RebalanceDetail d = parse_rebalance(h.string(op.detail));
    Acc& acc = groups[d.group];
    Member& member = acc.members[consumer];
    if (d.left) {
      member.current = false;
      continue;
    }
    member.current = true;
    if (op.type == OpType::fail || op.type == OpType::info) {
      ++acc.out.failed;
      continue;
    }
    if (op.type != OpType::ok) continue;
    if (d.assigned) member.assigned = *d.assigned;
    if (d.generation) {
      acc.generations.insert(*d.generation);
    } else {
      ++acc.without_generation;
    }
    if (partner[i] >= 0) {
      const Op& invoke = ops[static_cast<size_t>(partner[i])];
      const int64_t duration = op.time_us - invoke.time_us;
      acc.out.longest_us = std::max(acc.out.longest_us, duration);
      acc.out.total_us += duration;
      keep(acc.out.durations, GroupResult::Rebalance{consumer, invoke.time_us, duration},
           max_items);
    }
  }
  GroupResult result;
  for (auto& [group, acc] : groups) {
    acc.out.group = group;
    acc.out.rebalances = acc.generations.size() + acc.without_generation;
    for (const auto& [consumer, member] : acc.members) {
      if (!member.current) continue;
      acc.out.assignment[consumer] = member.assigned;
      if (member.assigned.empty()) acc.out.idle.push_back(consumer);
    }
    result.groups.push_back(std::move(acc.out));
  }
  return result;
}

// --- the verdict -------------------------------------------------------------

Verdict check_all(const History& h, const FinalState& fs, const CheckOptions& options) {
  Verdict v;
  v.lost = check_lost(h, fs, options.max_items);
  v.duplicates = check_duplicates(h, fs, options.max_items);
  v.order = check_order(h, fs, options.order_promised, options.max_items);
  v.dirty_reads = check_dirty_reads(h, fs, options.max_items);
  v.divergence = check_divergence(fs, options.max_items);
  v.availability = check_availability(h, options.faults, options.end_time_us,
                                      options.stall_threshold_us, options.max_items);
  v.latency = check_latency(h);
  v.groups = check_groups(h, options.max_items);
  return v;
}

namespace {

using nlohmann::json;

json optional_json(const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); }

json positions_json(const std::vector<std::pair<int32_t, int64_t>>& ps) {
  json out = json::array();
  for (const auto& [partition, offset] : ps) out.push_back(json::array({partition, offset}));
  return out;
}

json window_json(const AvailabilityResult::Window& w) {
  return json{{"process", w.process},   {"start_us", w.start_us},   {"end_us", w.end_us},
              {"duration_us", w.duration_us}, {"until_end", w.until_end}, {"causes", w.causes}};
}

}  // namespace

json Verdict::to_json() const {
  json j;
  {
    json items = json::array();
    for (const auto& i : lost.items) {
      items.push_back({{"topic", i.topic}, {"partition", i.partition}, {"offset", i.offset},
                       {"value", i.value}, {"producer", i.producer},
                       {"ack_time_us", i.ack_time_us}});
    }
    j["lost"] = {{"acknowledged", lost.acknowledged}, {"lost", lost.lost},
                 {"unverifiable", lost.unverifiable}, {"items", items}};
  }
  {
    json items = json::array();
    for (const auto& i : duplicates.items) {
      items.push_back({{"topic", i.topic}, {"value", i.value}, {"producer", i.producer},
                       {"final_positions", positions_json(i.final_positions)},
                       {"seen_positions", positions_json(i.seen_positions)}});
    }
    j["duplicates"] = {{"duplicated", duplicates.duplicated}, {"items", items}};
  }
  {
    json items = json::array();
    for (const auto& i : order.items) {
      items.push_back({{"topic", i.topic}, {"partition", i.partition}, {"producer", i.producer},
                       {"earlier_value", i.earlier_value}, {"earlier_offset", i.earlier_offset},
                       {"later_value", i.later_value}, {"later_offset", i.later_offset}});
    }
    j["order"] = {{"checked", order.checked}, {"violations", order.violations}, {"items", items}};
  }
  {
    json items = json::array();
    for (const auto& i : dirty_reads.items) {
      json t = nullptr;
      if (i.truncation) {
        t = {{"time_us", i.truncation->time_us}, {"broker", i.truncation->broker},
             {"from", i.truncation->from}, {"to", i.truncation->to}};
      }
      items.push_back({{"topic", i.topic}, {"partition", i.partition}, {"offset", i.offset},
                       {"value", i.value}, {"consumer", i.consumer},
                       {"read_time_us", i.read_time_us},
                       {"final_value", optional_json(i.final_value)}, {"truncation", t}});
    }
    j["dirty_reads"] = {{"reads_checked", dirty_reads.reads_checked}, {"dirty", dirty_reads.dirty},
                        {"unverifiable", dirty_reads.unverifiable}, {"items", items}};
  }
  {
    json items = json::array();
    for (const auto& i : divergence.items) {
      items.push_back({{"topic", i.tp.topic}, {"partition", i.tp.partition},
                       {"broker_a", i.broker_a}, {"broker_b", i.broker_b},
                       {"first_offset", i.first_offset}, {"value_a", optional_json(i.value_a)},
                       {"value_b", optional_json(i.value_b)}, {"offsets", i.offsets}});
    }
    j["divergence"] = {{"pairs_compared", divergence.pairs_compared},
                       {"divergent_pairs", divergence.divergent_pairs}, {"items", items}};
  }
  {
    json items = json::array();
    for (const auto& w : availability.items) items.push_back(window_json(w));
    json per = json::array();
    for (const auto& p : availability.per_process) {
      per.push_back({{"process", p.process}, {"successes", p.successes}, {"windows", p.windows},
                     {"longest_us", p.longest_us}});
    }
    j["availability"] = {{"threshold_us", availability.threshold_us},
                         {"windows", availability.windows},
                         {"longest", availability.longest ? window_json(*availability.longest)
                                                          : json(nullptr)},
                         {"per_process", per},
                         {"items", items}};
  }
  j["latency"] = {{"count", latency.count},   {"unpaired", latency.unpaired},
                  {"min_us", latency.min_us}, {"p50_us", latency.p50_us},
                  {"p90_us", latency.p90_us}, {"p99_us", latency.p99_us},
                  {"max_us", latency.max_us}};
  {
    json gs = json::array();
    for (const auto& g : groups.groups) {
      json durations = json::array();
      for (const auto& r : g.durations) {
        durations.push_back(
            {{"consumer", r.consumer}, {"start_us", r.start_us}, {"duration_us", r.duration_us}});
      }
      gs.push_back({{"group", g.group},           {"rebalances", g.rebalances},
                    {"failed", g.failed},         {"longest_us", g.longest_us},
                    {"total_us", g.total_us},     {"durations", durations},
                    {"assignment", g.assignment}, {"idle", g.idle}});
    }
    j["groups"] = gs;
  }
  return j;
}

std::string Verdict::summary() const {
  const int64_t stall = availability.longest ? availability.longest->duration_us : 0;
  return fmt::format("lost={} duplicates={} order={} dirty={} divergent={} max_stall={} p50={} "
                     "p99={}",
                     lost.lost, duplicates.duplicated,
                     order.checked ? fmt::format("{}", order.violations) : std::string("-"),
                     dirty_reads.dirty, divergence.divergent_pairs,
                     sim::format_duration(sim::Duration::micros(stall)),
                     sim::format_duration(sim::Duration::micros(latency.p50_us)),
                     sim::format_duration(sim::Duration::micros(latency.p99_us)));
}

}  // namespace check
