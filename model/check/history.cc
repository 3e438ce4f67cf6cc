// The history: interning, pairing, and the two writers (JSON lines, and the
// EDN of Jepsen's Kafka workload).
#include "model/check/history.h"

#include <algorithm>
#include <istream>
#include <ostream>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace check {

namespace {

constexpr const char* kOpTypeNames[] = {"invoke", "ok", "fail", "info"};
constexpr const char* kOpFunctionNames[] = {"send",    "poll", "commit",
                                            "connect", "exit", "rebalance"};

// A JSON string literal; nlohmann does the escaping so that control
// characters and quotes in a name or an error come out valid.
std::string quote(const std::string& s) { return nlohmann::json(s).dump(); }

// An EDN string literal. EDN's escapes for these are those of JSON, and the
// names we write are ASCII, so the JSON form is also valid EDN.
std::string edn_string(const std::string& s) { return quote(s); }

// An ok poll op that continues the records of the poll before it: the
// previous op of the same process is an ok poll at the same time. One poll
// returns all its records at one instant, so that is where one poll ends.
bool continues_poll(const Op& op, const std::optional<size_t>& previous_of_process,
                    const std::vector<Op>& ops) {
  if (op.f != OpFunction::poll || op.type != OpType::ok || !previous_of_process) return false;
  const Op& prev = ops[*previous_of_process];
  return prev.f == OpFunction::poll && prev.type == OpType::ok && prev.time_us == op.time_us;
}

}  // namespace

const char* to_string(OpType t) { return kOpTypeNames[static_cast<size_t>(t)]; }
const char* to_string(OpFunction f) { return kOpFunctionNames[static_cast<size_t>(f)]; }

std::optional<OpType> op_type_from_string(std::string_view s) {
  for (size_t i = 0; i < std::size(kOpTypeNames); ++i) {
    if (s == kOpTypeNames[i]) return static_cast<OpType>(i);
  }
  return std::nullopt;
}

std::optional<OpFunction> op_function_from_string(std::string_view s) {
  for (size_t i = 0; i < std::size(kOpFunctionNames); ++i) {
    if (s == kOpFunctionNames[i]) return static_cast<OpFunction>(i);
  }
  return std::nullopt;
}

History::History() {
  strings_.emplace_back();
  string_ids_.emplace("", 0);
  processes_.emplace_back();
  process_ids_.emplace("", 0);
}

namespace {

// A small direct-mapped cache in front of an interning map: the clients
// record the same few strings (a topic, an error, a process name) op after
// op. Only a lookup aid: a hit is checked against the string itself.
size_t cache_slot(std::string_view s) {
  const auto first = static_cast<unsigned char>(s.front());
  const auto last = static_cast<unsigned char>(s.back());
  return (s.size() * 31 + first * 7 + last) % History::kInternCache;
}

}  // namespace

uint32_t History::intern(std::string_view s) {
  if (s.empty()) return 0;
  uint32_t& cached = string_cache_[cache_slot(s)];
  if (strings_[cached] == s) return cached;
  if (auto it = string_ids_.find(s); it != string_ids_.end()) return cached = it->second;
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.emplace_back(s);
  string_ids_.emplace(std::string(s), id);
  return cached = id;
}

std::optional<uint32_t> History::find_string(std::string_view s) const {
  if (auto it = string_ids_.find(s); it != string_ids_.end()) return it->second;
  return std::nullopt;
}

uint32_t History::process(std::string_view name) {
  if (name.empty()) return 0;
  uint32_t& cached = process_cache_[cache_slot(name)];
  if (processes_[cached] == name) return cached;
  if (auto it = process_ids_.find(name); it != process_ids_.end()) return cached = it->second;
  const auto id = static_cast<uint32_t>(processes_.size());
  processes_.emplace_back(name);
  process_ids_.emplace(std::string(name), id);
  return cached = id;
}

// --- JSON lines --------------------------------------------------------------

void History::write_jsonl(std::ostream& out) const {
  std::string line;
  for (const Op& op : ops_) {
    line = fmt::format(R"({{"t_us":{},"process":{},"type":"{}","f":"{}")", op.time_us,
                       quote(process_name(op.process)), to_string(op.type), to_string(op.f));
    if (op.topic != 0) line += fmt::format(R"(,"topic":{})", quote(string(op.topic)));
    if (op.partition != -1) line += fmt::format(R"(,"partition":{})", op.partition);
    if (op.offset != -1) line += fmt::format(R"(,"offset":{})", op.offset);
    line += fmt::format(R"(,"value":{})", op.value);
    // A send's producer is its own process: writing it again on every send
    // would only double the line.
    const bool implied = op.f == OpFunction::send && op.producer == op.process;
    if (op.producer != 0 && !implied) {
      line += fmt::format(R"(,"producer":{})", quote(process_name(op.producer)));
    }
    if (op.error != 0) line += fmt::format(R"(,"error":{})", quote(string(op.error)));
    if (op.detail != 0) line += fmt::format(R"(,"detail":{})", quote(string(op.detail)));
    line += "}\n";
    out << line;
  }
}

History History::read_jsonl(std::istream& in) {
  History h;
  std::string line;
  size_t line_no = 0;
  auto bad = [&](const std::string& what) {
    return std::invalid_argument(fmt::format("history line {}: {}", line_no, what));
  };
  static const std::set<std::string, std::less<>> kKeys = {
      "t_us", "process", "type", "f", "topic", "partition", "offset", "value", "producer", "error",
      "detail"};
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw bad(fmt::format("not JSON ({})", e.what()));
    }
    if (!j.is_object()) throw bad("expected a JSON object");
    for (const auto& [key, _] : j.items()) {
      if (!kKeys.contains(key)) throw bad(fmt::format("unknown key \"{}\"", key));
    }
    auto str = [&](const char* key, bool required) -> std::string {
      if (!j.contains(key)) {
        if (required) throw bad(fmt::format("missing \"{}\"", key));
        return {};
      }
      if (!j[key].is_string()) throw bad(fmt::format("\"{}\" must be a string", key));
      return j[key].get<std::string>();
    };
    auto integer = [&](const char* key, bool required, int64_t absent) -> int64_t {
      if (!j.contains(key)) {
        if (required) throw bad(fmt::format("missing \"{}\"", key));
        return absent;
      }
      if (!j[key].is_number_integer()) throw bad(fmt::format("\"{}\" must be an integer", key));
      return j[key].get<int64_t>();
    };
    Op op;
    op.time_us = integer("t_us", true, 0);
    op.process = h.process(str("process", true));
    const auto type = op_type_from_string(str("type", true));
    if (!type) throw bad("\"type\" must be one of invoke, ok, fail, info");
    op.type = *type;
    const auto f = op_function_from_string(str("f", true));
    if (!f) throw bad("\"f\" must be one of send, poll, commit, connect, exit, rebalance");
    op.f = *f;
    op.topic = h.intern(str("topic", false));
    op.partition = static_cast<int32_t>(integer("partition", false, -1));
    op.offset = integer("offset", false, -1);
    if (!j.contains("value")) throw bad("missing \"value\"");
    if (!j["value"].is_number_unsigned()) throw bad("\"value\" must be an unsigned integer");
    op.value = j["value"].get<uint64_t>();
    if (j.contains("producer")) {
      op.producer = h.process(str("producer", true));
    } else if (op.f == OpFunction::send) {
      op.producer = op.process;
    }
    op.error = h.intern(str("error", false));
    op.detail = h.intern(str("detail", false));
    h.add(op);
  }
  return h;
}

// --- pairing -----------------------------------------------------------------

namespace {

// The invokes still waiting for a completion, per key (process, function,
// value): a FIFO of op indices per key, kept as a list threaded through
// `next_` (one link per op), and an open-addressing table (linear probing,
// backward-shift deletion) from key to (head, tail). A key is removed when
// its queue empties, so the table holds about as many keys as there are ops
// in flight, not one per message of the run. Only lookups: the result never
// depends on where a key sits in the table.
class PendingInvokes {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Key {
    uint64_t value = 0;
    uint32_t process = 0;
    uint32_t f = 0;
    bool operator==(const Key&) const = default;
  };

  explicit PendingInvokes(size_t ops) : next_(ops, kNone), slots_(64) {}

  void push(const Key& k, uint32_t index) {
    Slot& s = slots_[find_or_insert(k)];
    if (s.head == kNone) {
      s.head = index;
    } else {
      next_[s.tail] = index;
    }
    s.tail = index;
  }

  // The earliest pending invoke of `k`, taken off its queue; kNone if none.
  uint32_t pop(const Key& k) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = home(k); slots_[i].used; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (!(s.key == k)) continue;
      const uint32_t index = s.head;
      s.head = next_[index];
      if (s.head == kNone) erase(i);
      return index;
    }
    return kNone;
  }

 private:
  struct Slot {
    Key key;
    uint32_t head = kNone;
    uint32_t tail = kNone;
    bool used = false;
  };

  size_t home(const Key& k) const {
    // splitmix64's finaliser over the key's fields.
    uint64_t x = k.value ^ (static_cast<uint64_t>(k.process) << 8 | k.f) * 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<size_t>(x) & (slots_.size() - 1);
  }

  size_t find_or_insert(const Key& k) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    size_t i = home(k);
    for (; slots_[i].used; i = (i + 1) & mask) {
      if (slots_[i].key == k) return i;
    }
    slots_[i] = Slot{k, kNone, kNone, true};
    ++count_;
    return i;
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (!s.used) continue;
      size_t i = home(s.key);
      while (slots_[i].used) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  // Backward-shift deletion: later keys of the probe run move up, so that
  // every key stays reachable from its home without tombstones.
  void erase(size_t i) {
    const size_t mask = slots_.size() - 1;
    slots_[i].used = false;
    --count_;
    for (size_t j = (i + 1) & mask; slots_[j].used; j = (j + 1) & mask) {
      const size_t h = home(slots_[j].key);
      // Move slot j into the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      slots_[j].used = false;
      i = j;
    }
  }

  std::vector<uint32_t> next_;
  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t count_ = 0;
};

}  // namespace

std::vector<int64_t> pair_index(const History& h) {
  const std::vector<Op>& ops = h.ops();
  if (ops.size() >= PendingInvokes::kNone) throw std::length_error("pair_index: too many ops");
  std::vector<int64_t> partner(ops.size(), -1);
  // Keys: (process, function, value); value is 0 for everything but sends,
  // so that sends pair by value and the rest first in, first out.
  PendingInvokes pending(ops.size());
  std::vector<int64_t> previous(h.processes().size(), -1);  // per process, its previous op
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.process >= previous.size()) previous.resize(op.process + size_t{1}, -1);
    const int64_t prev = previous[op.process];
    previous[op.process] = static_cast<int64_t>(i);
    if (op.f == OpFunction::connect || op.f == OpFunction::exit) continue;
    const PendingInvokes::Key key{op.f == OpFunction::send ? op.value : 0, op.process,
                                  static_cast<uint32_t>(op.f)};
    if (op.type == OpType::invoke) {
      pending.push(key, static_cast<uint32_t>(i));
      continue;
    }
    if (prev >= 0 && continues_poll(op, static_cast<size_t>(prev), ops)) {
      partner[i] = partner[static_cast<size_t>(prev)];
      continue;
    }
    const uint32_t invoke = pending.pop(key);
    if (invoke == PendingInvokes::kNone) continue;
    partner[i] = static_cast<int64_t>(invoke);
    partner[invoke] = static_cast<int64_t>(i);
  }
  return partner;
}

// --- Jepsen's EDN ------------------------------------------------------------
//
// jepsen.tests.kafka's history, op by op:
//   {:index 0, :time 5000, :type :invoke, :process 1, :f :send, :value [[:send 0 17]]}
//   {:index 1, :time 9000, :type :ok, :process 1, :f :send, :value [[:send 0 [4 17]]]}
//   {:index 2, :time 9000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
//   {:index 3, :time 9500, :type :ok, :process 2, :f :poll, :value [[:poll {0 [[4 17]]}]]}
//
// Choices, and why:
// - Keys. Jepsen's keys are integers mapped bijectively to topic-partitions
//   and otherwise opaque to its checker. With one topic the key is the
//   partition number, which reads naturally. With several, topics are ranked
//   by name and key = rank * S + partition, S the smallest power of ten above
//   every partition number (so "b-3" is 13 when partitions go up to 9). A send
//   whose partition was never learnt (an info send before metadata) has key nil.
// - Values are written as they are: the checkers already require a value to
//   be unique within its topic (see checkers.h), which is what Jepsen assumes
//   of a key's messages.
// - :index is the op's position in this output (Jepsen requires dense
//   indices), not in the kafkasim history, which holds ops Jepsen has no name
//   for (commit, connect, exit, rebalance) and one op per record read.
// - :process. Jepsen runs one operation at a time per process and gives a
//   process that ended in :info a fresh number (process + concurrency), as
//   its interpreter does after a crash. A kafkasim producer has many sends in
//   flight, so each client gets lanes: an invoke takes the lowest free lane,
//   its completion frees it, an :info completion retires it; lane n of client
//   c is Jepsen process c + n * P, P the number of process slots in the
//   history. A client with one op at a time keeps its own index until its
//   first :info.
// - A completion recorded without its invoke gets one at its own instant, so
//   Jepsen's pairing never sees an orphan; an invoke that never completed is
//   written alone, as Jepsen writes an op cut off by the end of a test.

namespace {

class EdnWriter {
 public:
  EdnWriter(const History& h, std::ostream& out) : h_(h), out_(out) {}

  void write() {
    const std::vector<Op>& ops = h_.ops();
    choose_keys();
    const std::vector<int64_t> partner = pair_index(h_);
    std::map<uint32_t, size_t> previous;
    std::vector<int64_t> lane_of(ops.size(), -1);  // per invoke, the Jepsen process it got
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      std::optional<size_t> prev;
      if (auto it = previous.find(op.process); it != previous.end()) prev = it->second;
      previous[op.process] = i;
      if (op.f != OpFunction::send && op.f != OpFunction::poll) continue;
      if (continues_poll(op, prev, ops)) continue;  // written with the first record
      if (op.type == OpType::invoke) {
        const int64_t done = partner[i];
        lane_of[i] = take_lane(op.process);
        const Op* completion = done >= 0 ? &ops[static_cast<size_t>(done)] : nullptr;
        write_line(op, lane_of[i], op.type, send_key(op, completion), i);
        continue;
      }
      int64_t pid = -1;
      const int64_t invoke = partner[i];
      const Op* invoke_op = invoke >= 0 ? &ops[static_cast<size_t>(invoke)] : nullptr;
      if (invoke_op == nullptr) {
        pid = take_lane(op.process);
        write_line(op, pid, OpType::invoke, send_key(op, nullptr), i);
      } else {
        pid = lane_of[static_cast<size_t>(invoke)];
      }
      write_line(op, pid, op.type, send_key(op, invoke_op), i);
      release_lane(op.process, pid, op.type == OpType::info);
    }
  }

 private:
  // Ranks topics and picks the stride, as described above.
  void choose_keys() {
    std::set<std::string> topics;
    int32_t max_partition = 0;
    for (const Op& op : h_.ops()) {
      if ((op.f != OpFunction::send && op.f != OpFunction::poll) || op.partition < 0) continue;
      topics.insert(h_.string(op.topic));
      max_partition = std::max(max_partition, op.partition);
    }
    int64_t rank = 0;
    for (const std::string& t : topics) topic_rank_[t] = rank++;
    stride_ = 10;
    while (stride_ <= max_partition) stride_ *= 10;
  }

  std::string key(uint32_t topic, int32_t partition) const {
    if (partition < 0) return "nil";
    const int64_t rank = topic_rank_.at(h_.string(topic));
    return fmt::format("{}", rank * stride_ + partition);
  }

  // The key of a send: its own partition, else its partner's (the partitioner
  // may pick the partition after the invoke is recorded, or a timeout may
  // leave the completion without one).
  std::string send_key(const Op& op, const Op* other) const {
    if (op.partition >= 0 || other == nullptr) return key(op.topic, op.partition);
    return key(other->topic, other->partition);
  }

  int64_t take_lane(uint32_t process) {
    Lanes& l = lanes_[process];
    int64_t n = 0;
    while (l.busy.contains(n) || l.retired.contains(n)) ++n;
    l.busy.insert(n);
    return static_cast<int64_t>(process) + n * static_cast<int64_t>(h_.processes().size());
  }

  void release_lane(uint32_t process, int64_t pid, bool retire) {
    Lanes& l = lanes_[process];
    const int64_t n = (pid - static_cast<int64_t>(process)) /
                      static_cast<int64_t>(h_.processes().size());
    l.busy.erase(n);
    if (retire) l.retired.insert(n);
  }

  // Writes one Jepsen op of type `type` for kafkasim op `i` (for an ok
  // poll, `i` is its first record and the rest are gathered from there).
  void write_line(const Op& op, int64_t pid, OpType type, const std::string& send_key, size_t i) {
    std::string value;
    if (op.f == OpFunction::send) {
      if (type == OpType::ok) {
        const std::string offset = op.offset >= 0 ? fmt::format("{}", op.offset) : "nil";
        value = fmt::format("[[:send {} [{} {}]]]", send_key, offset, op.value);
      } else {
        value = fmt::format("[[:send {} {}]]", send_key, op.value);
      }
    } else if (type == OpType::ok) {
      value = fmt::format("[[:poll {}]]", poll_records(i));
    } else {
      value = "[[:poll]]";
    }
    std::string line = fmt::format(
        "{{:index {}, :time {}, :type :{}, :process {}, :f :{}, :value {}", index_++,
        op.time_us * 1000, to_string(type), pid, to_string(op.f), value);
    if (type != OpType::invoke && op.error != 0) {
      line += fmt::format(", :error {}", edn_string(h_.string(op.error)));
    }
    line += "}\n";
    out_ << line;
  }

  // {k [[offset value] ...], ...} for the records of the poll starting at
  // op `first`: it and the ok polls of the same process that continue it.
  std::string poll_records(size_t first) const {
    const std::vector<Op>& ops = h_.ops();
    const uint32_t process = ops[first].process;
    std::map<int64_t, std::vector<std::pair<int64_t, uint64_t>>> by_key;
    auto add = [&](const Op& r) {
      if (r.partition < 0) return;  // the marker of a poll that returned nothing
      by_key[topic_rank_.at(h_.string(r.topic)) * stride_ + r.partition].emplace_back(r.offset,
                                                                                    r.value);
    };
    add(ops[first]);
    std::optional<size_t> prev = first;
    for (size_t j = first + 1; j < ops.size(); ++j) {
      if (ops[j].process != process) continue;
      if (!continues_poll(ops[j], prev, ops)) break;
      add(ops[j]);
      prev = j;
    }
    std::string s = "{";
    bool first_key = true;
    for (const auto& [k, records] : by_key) {
      if (!first_key) s += ", ";
      first_key = false;
      s += fmt::format("{} [", k);
      for (size_t r = 0; r < records.size(); ++r) {
        if (r > 0) s += " ";
        const int64_t o = records[r].first;
        const std::string offset = o >= 0 ? fmt::format("{}", o) : "nil";
        s += fmt::format("[{} {}]", offset, records[r].second);
      }
      s += "]";
    }
    return s + "}";
  }

  struct Lanes {
    std::set<int64_t> busy;
    std::set<int64_t> retired;
  };

  const History& h_;
  std::ostream& out_;
  std::map<std::string, int64_t> topic_rank_;
  int64_t stride_ = 10;
  std::map<uint32_t, Lanes> lanes_;
  int64_t index_ = 0;
};

}  // namespace

void History::write_edn(std::ostream& out) const { EdnWriter(*this, out).write(); }

// --- final state -------------------------------------------------------------

const FinalState::Replica* FinalState::reference(const std::vector<Replica>& replicas) {
  for (const Replica& r : replicas) {
    if (r.leader) return &r;
  }
  const Replica* best = nullptr;
  for (const Replica& r : replicas) {
    if (best == nullptr || log_end(r) > log_end(*best)) best = &r;
  }
  return best;
}

const FinalState::Replica* FinalState::reference(const kafka::TopicPartition& tp) const {
  auto it = partitions.find(tp);
  return it == partitions.end() ? nullptr : reference(it->second);
}

int64_t FinalState::log_end(const Replica& r) {
  return r.records.empty() ? r.log_start : r.records.back().first + 1;
}

std::optional<uint64_t> FinalState::value_at(const Replica& r, int64_t offset) {
  auto it = std::lower_bound(r.records.begin(), r.records.end(), offset,
                             [](const std::pair<int64_t, uint64_t>& rec, int64_t o) {
                               return rec.first < o;
                             });
  if (it == r.records.end() || it->first != offset) return std::nullopt;
  return it->second;
}

}  // namespace check
