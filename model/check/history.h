// The history of a run as its clients saw it: every operation as an invoke
// followed by ok / fail / info, with virtual time, the client process, and
// what the operation touched (Jepsen's history model: jepsen.history).
//
//   invoke  the client starts an operation (a send of value v, a poll)
//   ok      it completed: a send was acknowledged at (partition, offset);
//           a poll returned records (one `ok` poll op per record read)
//   fail    it definitely did not happen (an error the broker returned
//           before appending, e.g. NOT_ENOUGH_REPLICAS)
//   info    unknown: it may or may not have happened (a timeout, a
//           disconnect with the request in flight)
//
// Ops are kept compactly (strings interned) so that a long run stays cheap,
// and can be written as JSON lines or as the EDN of Jepsen's Kafka workload
// (jepsen.tests.kafka: {:type :ok, :f :send, :value [[:send k [offset v]]]}
// and :poll with {k [[offset v] ...]}), so that Jepsen's checkers can read a
// kafkasim run.
//
// The shapes the clients record, op by op, are listed in model/check/checkers.h
// ("What the clients record"): the checkers rely on them.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/kafka/types.h"
#include "sim/time.h"

namespace check {

enum class OpType : uint8_t { invoke, ok, fail, info };
enum class OpFunction : uint8_t {
  send,       // a producer's send of one value
  poll,       // a consumer's read of one record (ok) or a fetch attempt (invoke/fail/info)
  commit,     // a consumer's offset commit
  connect,    // a connection-level event a real client logs (refused, reset, timed out): info
  exit,       // the client process gave up (the lab producer after its last try)
  rebalance,  // a group member's rebalance: invoke when it (re)joins, ok with its assignment
};
const char* to_string(OpType t);
const char* to_string(OpFunction f);
// The inverses, for reading a history back; nullopt for an unknown name.
std::optional<OpType> op_type_from_string(std::string_view s);
std::optional<OpFunction> op_function_from_string(std::string_view s);

struct Op {
  int64_t time_us = 0;
  uint32_t process = 0;  // index into History::processes(); 0 is "" (no process)
  OpType type = OpType::invoke;
  OpFunction f = OpFunction::send;
  uint32_t topic = 0;      // index into History::strings(); 0 is ""
  int32_t partition = -1;  // -1: not known (yet)
  int64_t offset = -1;     // -1: not known
  uint64_t value = 0;
  uint64_t producer = 0;   // for sends: the producing process (== process); for polls: who produced it if known, else 0
  uint32_t error = 0;      // index into strings(): "" or "REQUEST_TIMED_OUT", "connection_refused" ...
  // Index into strings(): free-form detail of the op, "" when none. A
  // rebalance carries "group=G generation=N assigned=t-0,t-1" here (see
  // checkers.h); a connect event may name the broker it concerns.
  uint32_t detail = 0;
};

class History {
 public:
  History();
  // Interns a string; 0 is always "".
  uint32_t intern(std::string_view s);
  const std::string& string(uint32_t id) const { return strings_.at(id); }
  // The id of a string already interned, or nullopt (never interns).
  std::optional<uint32_t> find_string(std::string_view s) const;
  // Interns a process name. Index 0 is reserved for "" (no process), so that
  // Op::producer == 0 can mean "not known" and never names a real client.
  uint32_t process(std::string_view name);
  const std::vector<std::string>& processes() const { return processes_; }
  const std::string& process_name(uint64_t id) const { return processes_.at(id); }

  void add(const Op& op) {
    const Op copy = op;  // `op` may be one of ops_, which append may move
    append(copy.time_us) = copy;
  }
  // A new op at the end, at `time_us` and otherwise default, for the caller
  // to fill in place: valid until the next op is added. (The clients build
  // every op this way: one built on the stack and copied in was read back
  // with wide loads from narrow stores, which stalled.)
  Op& append(int64_t time_us) {
    if (!ops_.empty() && time_us < ops_.back().time_us) in_time_order_ = false;
    Op& op = ops_.emplace_back();
    op.time_us = time_us;
    return op;
  }
  // Whether every op so far came no earlier than the one before it (so a
  // time range of ops can be found by binary search). The clients record
  // each op at the virtual time it happens; a history read from a file may
  // be in any order.
  bool in_time_order() const { return in_time_order_; }
  // Room for `n` ops, so that a history expected to be long is not copied
  // each time it doubles (capacity only: nothing recorded changes).
  void reserve(size_t n) { ops_.reserve(n); }
  const std::vector<Op>& ops() const { return ops_; }
  size_t size() const { return ops_.size(); }

  // One JSON object per line, keys always in this order, a key left out when
  // its field is unset (topic "", partition -1, offset -1, producer 0 or the
  // sender itself for a send, error "", detail ""):
  // {"t_us":..,"process":"producer","type":"ok","f":"send","topic":"t","partition":0,"offset":5,"value":17}
  void write_jsonl(std::ostream& out) const;
  // Reads what write_jsonl wrote. Throws std::invalid_argument naming the
  // line and what was expected when the input is not of that form.
  static History read_jsonl(std::istream& in);

  // Jepsen's EDN, one map per line, with :index, :time (ns), :type, :process,
  // :f and :value as jepsen.tests.kafka writes them. Only sends and polls are
  // written (the workload has no other client ops); see history.cc for how
  // keys, values and Jepsen process numbers are chosen.
  void write_edn(std::ostream& out) const;

  static constexpr size_t kInternCache = 64;

 private:
  std::vector<std::string> strings_;
  std::map<std::string, uint32_t, std::less<>> string_ids_;
  std::vector<std::string> processes_;
  std::map<std::string, uint32_t, std::less<>> process_ids_;
  // Recently interned ids (see intern()); 0, the empty string, when unset.
  std::array<uint32_t, kInternCache> string_cache_{};
  std::array<uint32_t, kInternCache> process_cache_{};
  std::vector<Op> ops_;
  bool in_time_order_ = true;
};

// Pairs every invoke with its completion, as jepsen.history pairs them, for
// the checkers (latency, rebalance durations) and the EDN writer:
//   send       a completion (ok/fail/info) takes the earliest pending invoke
//              of the same process and value (a producer may have many sends
//              in flight, but a value is sent once at a time);
//   poll, commit, rebalance
//              a completion takes the earliest pending invoke of the same
//              process and function; the ok records of one poll (same
//              process, same time, consecutive among that process's ops) all
//              pair with that poll's invoke;
//   connect, exit
//              never paired (events, not operations).
// Returns, per op index, the index of its partner, or -1. An invoke's partner
// is its (first) completion; a completion's partner is its invoke.
std::vector<int64_t> pair_index(const History& h);

// What the checkers need of the cluster at the end of a run, read from the
// brokers (not through the protocol).
struct FinalState {
  struct Replica {
    kafka::BrokerId broker = kafka::kNoBroker;
    bool leader = false;
    int64_t high_watermark = 0;
    int64_t log_start = 0;
    std::vector<std::pair<int64_t, uint64_t>> records;  // (offset, value), ascending
  };
  // Per partition, every live replica's log.
  std::map<kafka::TopicPartition, std::vector<Replica>> partitions;
  // Truncations seen during the run: (time, broker, partition, from offset,
  // to offset) — what dirty reads are judged against. `from` is the log end
  // before the truncation and `to` the log end after it: the records at
  // offsets [to, from) were removed.
  struct Truncation {
    int64_t time_us = 0;
    kafka::BrokerId broker = kafka::kNoBroker;
    kafka::TopicPartition tp;
    int64_t from = 0;
    int64_t to = 0;
  };
  std::vector<Truncation> truncations;

  // The replica whose log stands for "the final log" of a partition: the
  // leader (the first one marked leader=true); with no leader, the live
  // replica with the highest log end (ties: the first in `replicas`).
  // Null when the partition has no live replica.
  static const Replica* reference(const std::vector<Replica>& replicas);
  const Replica* reference(const kafka::TopicPartition& tp) const;
  // One past the last offset held: log_start when the log is empty.
  static int64_t log_end(const Replica& r);
  // The value at `offset`, or nullopt outside the replica's records.
  static std::optional<uint64_t> value_at(const Replica& r, int64_t offset);
};

}  // namespace check
