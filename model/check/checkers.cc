// The checkers (see checkers.h for what each one judges and why).
//
// Everything is keyed by ordered containers, and every list is filled in a
// documented order, so that the verdict of a run is the same bytes on every
// machine: a sweep's results can be compared across shards and reruns.
#include "model/check/checkers.h"
#include "model/check/sort.h"

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

constexpr uint32_t kNoSlot = UINT32_MAX;

// What the checkers look up again and again, computed once per history: each
// op's (topic, partition) interned to a small integer (its slot), and per
// slot the partition's final log. No string is compared per op.
class Index {
 public:
  Index(const History& h, const FinalState& fs) {
    const std::vector<Op>& ops = h.ops();
    slot_of_.assign(ops.size(), kNoSlot);
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.partition < 0 || (op.f != OpFunction::send && op.f != OpFunction::poll)) continue;
      slot_of_[i] = intern(op.topic, op.partition);
    }
    reference_.resize(keys_.size(), nullptr);
    for (size_t s = 0; s < keys_.size(); ++s) {
      auto it = fs.partitions.find(
          kafka::TopicPartition{h.string(keys_[s].first), keys_[s].second});
      if (it != fs.partitions.end()) reference_[s] = FinalState::reference(it->second);
    }
  }

  // The slot of op i: kNoSlot for an op without a partition, or neither a
  // send nor a poll.
  uint32_t slot(size_t i) const { return slot_of_[i]; }
  size_t slots() const { return keys_.size(); }
  // The final log of a slot's partition (FinalState::reference), or null.
  const FinalState::Replica* reference(uint32_t slot) const { return reference_[slot]; }

 private:
  uint32_t intern(uint32_t topic, int32_t partition) {
    // Partitions are small numbers: a dense table per topic, and a map for
    // whatever lies beyond it.
    constexpr int32_t kDense = 4096;
    if (partition < kDense) {
      if (topic >= dense_.size()) dense_.resize(topic + size_t{1});
      std::vector<uint32_t>& row = dense_[topic];
      const auto p = static_cast<size_t>(partition);
      if (p >= row.size()) row.resize(p + 1, kNoSlot);
      if (row[p] == kNoSlot) row[p] = add(topic, partition);
      return row[p];
    }
    auto [it, fresh] = sparse_.try_emplace({topic, partition}, kNoSlot);
    if (fresh) it->second = add(topic, partition);
    return it->second;
  }
  uint32_t add(uint32_t topic, int32_t partition) {
    keys_.emplace_back(topic, partition);
    return static_cast<uint32_t>(keys_.size() - 1);
  }

  std::vector<uint32_t> slot_of_;
  std::vector<std::pair<uint32_t, int32_t>> keys_;
  std::vector<std::vector<uint32_t>> dense_;
  std::map<std::pair<uint32_t, int32_t>, uint32_t> sparse_;
  std::vector<const FinalState::Replica*> reference_;
};

// Sorts and removes repeats.
template <typename T>
void sort_unique(std::vector<T>& v) {
  sort_runs(v);
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// The topics of the history's ops and of the final state, ranked by name, so
// that results ordered by topic name can be sorted by an integer.
class TopicRanks {
 public:
  TopicRanks(const History& h, const FinalState& fs, bool (*wanted)(const Op&)) {
    std::vector<char> used;
    for (const Op& op : h.ops()) {
      if (!wanted(op)) continue;
      if (op.topic >= used.size()) used.resize(op.topic + size_t{1}, 0);
      used[op.topic] = 1;
    }
    std::vector<std::string_view> names;
    for (uint32_t id = 0; id < used.size(); ++id) {
      if (used[id] != 0) names.push_back(h.string(id));
    }
    for (const auto& [tp, _] : fs.partitions) names.push_back(tp.topic);
    sort_unique(names);
    names_ = std::move(names);
    of_id_.assign(used.size(), 0);
    for (uint32_t id = 0; id < used.size(); ++id) {
      if (used[id] != 0) of_id_[id] = rank(h.string(id));
    }
  }
  // The rank of a topic named by the final state or by a wanted op.
  uint32_t rank(std::string_view topic) const {
    return static_cast<uint32_t>(std::lower_bound(names_.begin(), names_.end(), topic) -
                                 names_.begin());
  }
  uint32_t rank_of_id(uint32_t id) const { return of_id_[id]; }
  std::string_view name(uint32_t rank) const { return names_[rank]; }

 private:
  std::vector<std::string_view> names_;
  std::vector<uint32_t> of_id_;
};

// --- lost --------------------------------------------------------------------

LostResult find_lost(const History& h, const Index& index, size_t max_items) {
  LostResult result;
  const std::vector<Op>& ops = h.ops();
  // What consumers saw: (value, slot) pairs, and how far each partition was read.
  std::vector<std::pair<uint64_t, uint32_t>> seen;
  std::vector<int64_t> read_upto(index.slots(), -1);
  // The acknowledgements with a position: (value, slot, op index), and the
  // offset, so that judging them reads no op again (a cache miss each).
  struct Ack {
    uint64_t value;
    uint32_t slot;
    uint32_t op;
    int64_t offset;
    auto operator<=>(const Ack&) const = default;
  };
  std::vector<Ack> acks;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (is_record(op)) {
      const uint32_t s = index.slot(i);
      seen.emplace_back(op.value, s);
      read_upto[s] = std::max(read_upto[s], op.offset);
    } else if (is_ok(op, OpFunction::send) && op.partition >= 0 && op.offset >= 0) {
      acks.push_back(Ack{op.value, index.slot(i), static_cast<uint32_t>(i), op.offset});
    }
  }
  sort_unique(seen);
  // Each (topic, partition, value) is judged once, at its first acknowledgement.
  sort_runs(acks);
  std::vector<Ack> first;
  for (size_t k = 0; k < acks.size(); ++k) {
    if (k == 0 || acks[k].value != acks[k - 1].value || acks[k].slot != acks[k - 1].slot) {
      first.push_back(acks[k]);
    }
  }
  // Judged in the order they happened (the order of the items reported).
  sort_runs(first.begin(), first.end(), [](const Ack& a, const Ack& b) { return a.op < b.op; });
  result.acknowledged = first.size();
  std::vector<std::optional<std::vector<uint64_t>>> final_values(index.slots());  // on demand
  for (const Ack& a : first) {
    const uint32_t s = a.slot;
    if (std::binary_search(seen.begin(), seen.end(), std::make_pair(a.value, s))) continue;
    bool is_lost = false;
    if (const FinalState::Replica* ref = index.reference(s)) {
      std::optional<std::vector<uint64_t>>& values = final_values[s];
      if (!values) {
        values.emplace();
        values->reserve(ref->records.size());
        for (const auto& [offset, value] : ref->records) values->push_back(value);
        sort_unique(*values);
      }
      if (std::binary_search(values->begin(), values->end(), a.value)) continue;
      if (a.offset < ref->log_start) {
        ++result.unverifiable;  // retention may have deleted it
        continue;
      }
      is_lost = true;
    } else {
      // No log to look at: Jepsen's rule, a consumer went past it without it.
      is_lost = read_upto[s] > a.offset;
      if (!is_lost) ++result.unverifiable;
    }
    if (!is_lost) continue;
    ++result.lost;
    if (result.items.size() < max_items) {
      const Op& op = ops[a.op];
      result.items.push_back(LostResult::Item{h.string(op.topic), op.partition, op.offset,
                                              op.value, name_of(h, sender(op)), op.time_us});
    }
  }
  return result;
}

// --- duplicates --------------------------------------------------------------

DuplicatesResult find_duplicates(const History& h, const FinalState& fs, size_t max_items) {
  DuplicatesResult result;
  const std::vector<Op>& ops = h.ops();
  const TopicRanks ranks(h, fs, is_record);
  // Positions of messages: (topic rank, value, partition, offset), sorted,
  // each position once; in the final logs, and seen by consumers.
  struct Entry {
    uint32_t topic;
    uint64_t value;
    int32_t partition;
    int64_t offset;
    auto operator<=>(const Entry&) const = default;
  };
  std::vector<Entry> in_final;
  for (const auto& [tp, replicas] : fs.partitions) {
    const FinalState::Replica* ref = FinalState::reference(replicas);
    if (ref == nullptr) continue;
    const uint32_t topic = ranks.rank(tp.topic);
    for (const auto& [offset, value] : ref->records) {
      in_final.push_back(Entry{topic, value, tp.partition, offset});
    }
  }
  std::vector<Entry> seen;
  for (const Op& op : ops) {
    if (is_record(op)) seen.push_back(Entry{ranks.rank_of_id(op.topic), op.value, op.partition, op.offset});
  }
  sort_unique(in_final);
  sort_unique(seen);
  // Walk both by message, in (topic name, value) order.
  auto same_message = [](const Entry& a, const Entry& b) {
    return a.topic == b.topic && a.value == b.value;
  };
  auto before = [](const Entry& a, const Entry& b) {
    return std::tie(a.topic, a.value) < std::tie(b.topic, b.value);
  };
  size_t f = 0;
  size_t s = 0;
  while (f < in_final.size() || s < seen.size()) {
    // The next message: the lesser of the two heads.
    const Entry& head = s == seen.size() || (f < in_final.size() && !before(seen[s], in_final[f]))
                            ? in_final[f]
                            : seen[s];
    const Entry message = head;
    size_t f_end = f;
    while (f_end < in_final.size() && same_message(in_final[f_end], message)) ++f_end;
    size_t s_end = s;
    while (s_end < seen.size() && same_message(seen[s_end], message)) ++s_end;
    if (f_end - f > 1 || s_end - s > 1) {
      ++result.duplicated;
      if (result.items.size() < max_items) {
        DuplicatesResult::Item item;
        item.topic = std::string(ranks.name(message.topic));
        item.value = message.value;
        for (size_t k = f; k < f_end; ++k) {
          item.final_positions.emplace_back(in_final[k].partition, in_final[k].offset);
        }
        for (size_t k = s; k < s_end; ++k) {
          item.seen_positions.emplace_back(seen[k].partition, seen[k].offset);
        }
        result.items.push_back(std::move(item));
      }
    }
    f = f_end;
    s = s_end;
  }
  if (result.items.empty()) return result;
  // Who produced each listed message: its sends say best (the first send of
  // it); a consumer's record names a producer only when it could tell.
  struct Wanted {
    uint32_t topic;  // history string id
    uint64_t value;
    size_t item;
    auto operator<=>(const Wanted&) const = default;
  };
  std::vector<Wanted> wanted;
  for (size_t k = 0; k < result.items.size(); ++k) {
    if (auto id = h.find_string(result.items[k].topic)) {
      wanted.push_back(Wanted{*id, result.items[k].value, k});
    }
  }
  std::sort(wanted.begin(), wanted.end());
  std::vector<char> found(result.items.size(), 0);
  auto give = [&](const Op& op, uint64_t producer) {
    auto it = std::lower_bound(wanted.begin(), wanted.end(), Wanted{op.topic, op.value, 0});
    if (it == wanted.end() || it->topic != op.topic || it->value != op.value) return;
    if (found[it->item] != 0) return;
    found[it->item] = 1;
    result.items[it->item].producer = name_of(h, producer);
  };
  for (const Op& op : ops) {
    if (op.f == OpFunction::send) give(op, sender(op));
  }
  for (const Op& op : ops) {
    if (is_record(op) && op.producer != 0) give(op, op.producer);
  }
  return result;
}

}  // namespace

LostResult check_lost(const History& h, const FinalState& fs, size_t max_items) {
  return find_lost(h, Index(h, fs), max_items);
}

DuplicatesResult check_duplicates(const History& h, const FinalState& fs, size_t max_items) {
  return find_duplicates(h, fs, max_items);
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

namespace {

DirtyReadsResult find_dirty_reads(const History& h, const FinalState& fs, const Index& index,
                             size_t max_items) {
  DirtyReadsResult result;
  const std::vector<Op>& ops = h.ops();
  // Every record read, (slot, offset, value, op index), sorted: each distinct
  // read is judged once, at its first op.
  struct Read {
    uint32_t slot;
    int64_t offset;
    uint64_t value;
    uint32_t op;
    auto operator<=>(const Read&) const = default;
  };
  // Consumers read their partitions interleaved but each mostly in offset
  // order: the reads are laid out by slot first (a counting pass, in op
  // order), then each slot's stretch is sorted on its own.
  std::vector<size_t> slot_start(index.slots() + 1, 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (is_record(ops[i])) ++slot_start[index.slot(i) + 1];
  }
  for (size_t s = 0; s < index.slots(); ++s) slot_start[s + 1] += slot_start[s];
  std::vector<Read> reads(slot_start.back());
  {
    std::vector<size_t> fill(slot_start.begin(), slot_start.end() - 1);
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (is_record(op)) {
        const uint32_t s = index.slot(i);
        reads[fill[s]++] = Read{s, op.offset, op.value, static_cast<uint32_t>(i)};
      }
    }
  }
  for (size_t s = 0; s < index.slots(); ++s) {
    sort_runs(reads.begin() + static_cast<std::ptrdiff_t>(slot_start[s]),
              reads.begin() + static_cast<std::ptrdiff_t>(slot_start[s + 1]));
  }
  // The dirty ones: (op index of the first read, what the final log holds there).
  std::vector<std::pair<uint32_t, std::optional<uint64_t>>> dirty;
  // Reads come by partition then offset: a cursor walks each final log once.
  uint32_t cursor_slot = kNoSlot;
  std::vector<std::pair<int64_t, uint64_t>>::const_iterator cursor;
  for (size_t k = 0; k < reads.size(); ++k) {
    const Read& r = reads[k];
    if (k > 0 && r.slot == reads[k - 1].slot && r.offset == reads[k - 1].offset &&
        r.value == reads[k - 1].value) {
      continue;
    }
    const FinalState::Replica* ref = index.reference(r.slot);
    if (ref == nullptr || r.offset < ref->log_start) {
      ++result.unverifiable;
      continue;
    }
    ++result.reads_checked;
    if (r.slot != cursor_slot) {
      cursor_slot = r.slot;
      cursor = ref->records.begin();
    }
    // FinalState::value_at, from the cursor on (offsets only grow here).
    cursor = std::lower_bound(cursor, ref->records.end(), r.offset,
                              [](const std::pair<int64_t, uint64_t>& rec, int64_t o) {
                                return rec.first < o;
                              });
    std::optional<uint64_t> now;
    if (cursor != ref->records.end() && cursor->first == r.offset) now = cursor->second;
    if (now == r.value) continue;
    ++result.dirty;
    dirty.emplace_back(r.op, now);
  }
  // Items in order of first read.
  std::sort(dirty.begin(), dirty.end());
  for (const auto& [i, now] : dirty) {
    if (result.items.size() >= max_items) break;
    const Op& op = ops[i];
    const kafka::TopicPartition tp = tp_of(h, op);
    DirtyReadsResult::Item item{tp.topic, op.partition, op.offset, op.value,
                                name_of(h, op.process), op.time_us, now, std::nullopt};
    // The truncation that removed it happened after it was read; an earlier
    // one at that offset removed some other record.
    for (const FinalState::Truncation& t : fs.truncations) {
      if (t.tp != tp || t.time_us < op.time_us || op.offset < t.to || op.offset >= t.from) continue;
      if (!item.truncation || t.time_us < item.truncation->time_us) item.truncation = t;
    }
    result.items.push_back(std::move(item));
  }
  return result;
}

}  // namespace

DirtyReadsResult check_dirty_reads(const History& h, const FinalState& fs, size_t max_items) {
  return find_dirty_reads(h, fs, Index(h, fs), max_items);
}

// --- divergence --------------------------------------------------------------

DivergenceResult check_divergence(const FinalState& fs, size_t max_items) {
  DivergenceResult result;
  using Records = std::vector<std::pair<int64_t, uint64_t>>;
  auto from_offset = [](const Records& rs, int64_t o) {
    return std::lower_bound(rs.begin(), rs.end(), o,
                            [](const std::pair<int64_t, uint64_t>& rec, int64_t x) {
                              return rec.first < x;
                            });
  };
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
        // The offsets in [from, upto) that either replica holds, in order
        // (an offset neither holds agrees); at each, the first record there
        // (as FinalState::value_at finds it).
        auto ia = from_offset(a.records, from);
        auto ib = from_offset(b.records, from);
        while (true) {
          const bool more_a = ia != a.records.end() && ia->first < upto;
          const bool more_b = ib != b.records.end() && ib->first < upto;
          if (!more_a && !more_b) break;
          const int64_t o = !more_b || (more_a && ia->first < ib->first) ? ia->first : ib->first;
          std::optional<uint64_t> va;
          std::optional<uint64_t> vb;
          if (more_a && ia->first == o) va = ia->second;
          if (more_b && ib->first == o) vb = ib->second;
          while (ia != a.records.end() && ia->first == o) ++ia;
          while (ib != b.records.end() && ib->first == o) ++ib;
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
  // Per process index, in index order; only those with an op count.
  std::vector<std::optional<Client>> by_process(h.processes().size());
  for (const Op& op : h.ops()) {
    if (op.process == 0) continue;
    if (op.process >= by_process.size()) by_process.resize(op.process + size_t{1});
    std::optional<Client>& c = by_process[op.process];
    if (!c) c = Client{op.time_us, {}};
    if (op.type == OpType::ok) c->oks.push_back(op.time_us);
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
  for (uint32_t process = 0; process < by_process.size(); ++process) {
    if (!by_process[process]) continue;
    Client& client = *by_process[process];
    if (!std::is_sorted(client.oks.begin(), client.oks.end())) {
      std::sort(client.oks.begin(), client.oks.end());
    }
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

namespace {

LatencyResult measure_latency(const History& h, const std::vector<int64_t>& partner) {
  LatencyResult result;
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
  result.count = latencies.size();
  if (latencies.empty()) return result;
  // Nearest rank: ceil(p * n / 100), computed in integers. Only five order
  // statistics are wanted, so they are selected (std::nth_element, from the
  // highest rank down, each within the part below the last) instead of
  // sorting tens of thousands of latencies.
  const auto begin = latencies.begin();
  auto select = [&](size_t index, size_t end) {
    const auto at = begin + static_cast<std::ptrdiff_t>(index);
    std::nth_element(begin, at, begin + static_cast<std::ptrdiff_t>(end));
    return *at;
  };
  auto index_of = [&](uint64_t p) {
    return static_cast<size_t>(std::max<uint64_t>(1, (p * result.count + 99) / 100) - 1);
  };
  const auto [min_it, max_it] = std::minmax_element(latencies.begin(), latencies.end());
  result.min_us = *min_it;
  result.max_us = *max_it;
  const size_t i99 = index_of(99), i90 = index_of(90), i50 = index_of(50);
  result.p99_us = select(i99, latencies.size());
  result.p90_us = select(i90, i99 + 1);
  result.p50_us = select(i50, i90 + 1);
  return result;
}

}  // namespace

LatencyResult check_latency(const History& h) { return measure_latency(h, pair_index(h)); }

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

GroupResult group_stats(const History& h, const std::vector<int64_t>& partner, size_t max_items) {
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
  const std::vector<Op>& ops = h.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.f != OpFunction::exit && op.f != OpFunction::rebalance) continue;
    const std::string consumer = name_of(h, op.process);
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

}  // namespace

GroupResult check_groups(const History& h, size_t max_items) {
  return group_stats(h, pair_index(h), max_items);
}

// --- skips -------------------------------------------------------------------

SkipsResult check_skips(const History& h, const FinalState& fs, const std::set<std::string>& groups,
                        size_t max_items) {
  SkipsResult result;
  if (groups.empty()) return result;
  const std::vector<Op>& ops = h.ops();
  // Each member's group, from its rebalance ops (a steady consumer stays in
  // one group for its life).
  std::map<uint32_t, std::string> group_of;
  for (const Op& op : ops) {
    if (op.f != OpFunction::rebalance) continue;
    std::string g = parse_rebalance(h.string(op.detail)).group;
    if (groups.contains(g)) group_of.try_emplace(op.process, std::move(g));
  }
  if (group_of.empty()) return result;
  // (group, topic id, partition) -> the records the group's members read
  // (offset, value, op index), and the group's commits.
  using Key = std::tuple<std::string, uint32_t, int32_t>;
  using Read = std::tuple<int64_t, uint64_t, uint32_t>;
  struct Commit {
    uint32_t op;
    int64_t offset;
  };
  std::map<Key, std::vector<Read>> reads;
  std::map<Key, std::vector<Commit>> commits;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const bool read = is_record(op);
    const bool commit = is_ok(op, OpFunction::commit) && op.partition >= 0 && op.offset >= 0;
    if (!read && !commit) continue;
    auto g = group_of.find(op.process);
    if (g == group_of.end()) continue;
    const Key key{g->second, op.topic, op.partition};
    if (read) reads[key].emplace_back(op.offset, op.value, static_cast<uint32_t>(i));
    else commits[key].push_back(Commit{static_cast<uint32_t>(i), op.offset});
  }
  for (auto& [key, list] : reads) std::sort(list.begin(), list.end());
  for (const auto& [key, list] : commits) {
    const auto& [group, topic, partition] = key;
    if (list.size() < 2) continue;
    const FinalState::Replica* ref = fs.reference(kafka::TopicPartition{h.string(topic), partition});
    if (ref == nullptr) {
      result.unverifiable += list.size() - 1;
      continue;
    }
    static const std::vector<Read> kNone;
    auto r = reads.find(key);
    const auto& seen = r == reads.end() ? kNone : r->second;
    // Judged: from the group's first commit to the highest it reached.
    const int64_t lo = list[0].offset;
    int64_t hi = lo;
    for (size_t k = 1; k < list.size(); ++k) {
      ++result.commits_checked;
      hi = std::max(hi, list[k].offset);
    }
    auto rec = std::lower_bound(ref->records.begin(), ref->records.end(), lo,
                                [](const std::pair<int64_t, uint64_t>& x, int64_t o) { return x.first < o; });
    for (; rec != ref->records.end() && rec->first < hi; ++rec) {
      // Read: that offset with that value, at any time (a member that read
      // another record there, later truncated away, did not read this one;
      // one that reset after the truncation and read it again did).
      auto read = std::lower_bound(seen.begin(), seen.end(), Read{rec->first, rec->second, 0});
      if (read != seen.end() && std::get<0>(*read) == rec->first && std::get<1>(*read) == rec->second) continue;
      ++result.skipped;
      // The commit that first passed it, and the one before.
      size_t k = 1;
      while (k + 1 < list.size() && list[k].offset <= rec->first) ++k;
      const Op& c = ops[list[k].op];
      keep(result.items,
           SkipsResult::Item{group, h.string(topic), partition, rec->first, rec->second, name_of(h, c.process),
                             list[k - 1].offset, list[k].offset, c.time_us},
           max_items);
    }
  }
  return result;
}

// --- the verdict -------------------------------------------------------------

Verdict check_all(const History& h, const FinalState& fs, const CheckOptions& options) {
  Verdict v;
  const Index index(h, fs);
  v.lost = find_lost(h, index, options.max_items);
  v.duplicates = find_duplicates(h, fs, options.max_items);
  v.order = check_order(h, fs, options.order_promised, options.max_items);
  v.dirty_reads = find_dirty_reads(h, fs, index, options.max_items);
  v.divergence = check_divergence(fs, options.max_items);
  v.availability = check_availability(h, options.faults, options.end_time_us,
                                      options.stall_threshold_us, options.max_items);
  const std::vector<int64_t> partner = pair_index(h);
  v.latency = measure_latency(h, partner);
  v.groups = group_stats(h, partner, options.max_items);
  v.skips = check_skips(h, fs, options.skip_checked_groups, options.max_items);
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
  {
    json items = json::array();
    for (const auto& i : skips.items) {
      items.push_back({{"group", i.group},       {"topic", i.topic}, {"partition", i.partition},
                       {"offset", i.offset},     {"value", i.value}, {"consumer", i.consumer},
                       {"from", i.from},         {"to", i.to},       {"commit_time_us", i.commit_time_us}});
    }
    j["skips"] = {{"commits_checked", skips.commits_checked},
                  {"skipped", skips.skipped},
                  {"unverifiable", skips.unverifiable},
                  {"items", items}};
  }
  return j;
}

std::string Verdict::summary() const {
  const int64_t stall = availability.longest ? availability.longest->duration_us : 0;
  return fmt::format("lost={} duplicates={} order={} dirty={} divergent={} skipped={} max_stall={} p50={} "
                     "p99={}",
                     lost.lost, duplicates.duplicated,
                     order.checked ? fmt::format("{}", order.violations) : std::string("-"),
                     dirty_reads.dirty, divergence.divergent_pairs, skips.skipped,
                     sim::format_duration(sim::Duration::micros(stall)),
                     sim::format_duration(sim::Duration::micros(latency.p50_us)),
                     sim::format_duration(sim::Duration::micros(latency.p99_us)));
}

}  // namespace check
