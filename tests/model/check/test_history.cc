// Tests for model/check/history: interning, pairing of invokes with their
// completions, and the two writers — JSON lines and the EDN of Jepsen's Kafka
// workload (jepsen.tests.kafka) — each checked against its exact text on a
// hand-written history, so that any change of format is a visible diff.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <tuple>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/check/history.h"
#include "sim/random.h"
#include "tests/model/check/history_builder.h"

namespace check {
namespace {

using testing::Builder;

// The history both writers are tested on. P = 3 process slots ("" and the
// two clients), so the producer's second lane is Jepsen process 1 + 3 = 4.
const History& sample() {
  static const History h = [] {
    Builder b;
    b.send(1'000, "producer", OpType::invoke, 10)  // partition chosen later
        .send(1'500, "producer", OpType::invoke, 11).at(0)
        .send(2'000, "producer", OpType::ok, 10).at(1, 4)
        .send(2'500, "producer", OpType::info, 11).at(0).error("REQUEST_TIMED_OUT")
        .send(3'000, "producer", OpType::invoke, 11).at(0)  // the application's retry
        .send(3'100, "producer", OpType::invoke, 12)
        .send(3'200, "producer", OpType::ok, 11).at(0, 7)
        .send(3'300, "producer", OpType::fail, 12).at(1).error("NOT_ENOUGH_REPLICAS")
        .poll(4'000, "consumer", OpType::invoke).topic("t")
        .record(4'500, "consumer", 1, 4, 10).producer("producer")
        .record(4'500, "consumer", 0, 7, 11).producer("producer")
        .record(4'500, "consumer", 0, 8, 11).producer("producer")
        .poll(5'000, "consumer", OpType::invoke).topic("t")
        .poll(5'600, "consumer", OpType::ok)  // returned nothing
        .poll(6'000, "consumer", OpType::invoke).topic("t")
        .poll(6'500, "consumer", OpType::fail).error("connection_refused")
        .op(7'000, "consumer", OpType::invoke, OpFunction::commit).topic("t").at(0, 9)
        .op(7'100, "consumer", OpType::ok, OpFunction::commit).topic("t").at(0, 9)
        .op(7'200, "producer", OpType::info, OpFunction::connect)
        .error("connection_refused").detail("node2:9092")
        .record(8'000, "consumer", 1, 5, 13)  // recorded without its invoke
        .send(9'000, "producer", OpType::invoke, 14).at(1);  // cut off by the end
    return b.history();
  }();
  return h;
}

TEST(CheckHistory, InternsStringsAndProcessesWithZeroReserved) {
  History h;
  EXPECT_EQ(h.intern(""), 0u);
  EXPECT_EQ(h.intern("t"), 1u);
  EXPECT_EQ(h.intern("t"), 1u);
  EXPECT_EQ(h.string(1), "t");
  EXPECT_EQ(h.find_string("t"), 1u);
  EXPECT_EQ(h.find_string("u"), std::nullopt);
  // Process 0 is "": Op::producer == 0 then always means "not known".
  EXPECT_EQ(h.process("producer"), 1u);
  EXPECT_EQ(h.process("consumer"), 2u);
  EXPECT_EQ(h.process("producer"), 1u);
  EXPECT_EQ(h.processes(), (std::vector<std::string>{"", "producer", "consumer"}));
  EXPECT_STREQ(to_string(OpType::info), "info");
  EXPECT_STREQ(to_string(OpFunction::rebalance), "rebalance");
  EXPECT_EQ(op_type_from_string("fail"), OpType::fail);
  EXPECT_EQ(op_function_from_string("poll"), OpFunction::poll);
  EXPECT_EQ(op_function_from_string("txn"), std::nullopt);
}

TEST(CheckHistory, KnowsWhetherItsOpsCameInTimeOrder) {
  History h;
  EXPECT_TRUE(h.in_time_order());
  Op op;
  for (int64_t t : {0, 5, 5, 9}) {
    op.time_us = t;
    h.add(op);
  }
  EXPECT_TRUE(h.in_time_order());  // equal times are in order
  op.time_us = 8;
  h.add(op);
  EXPECT_FALSE(h.in_time_order());
  op.time_us = 20;
  h.add(op);
  EXPECT_FALSE(h.in_time_order());  // once out of order, always
}

TEST(CheckHistory, PairsSendsByValueAndPollRecordsWithTheirInvoke) {
  const std::vector<int64_t> p = pair_index(sample());
  // Sends: 10 (op 0) with its ok (2); 11's first try (1) with its info (3);
  // the retry (4) with the ok (6); 12 (5) with its fail (7).
  EXPECT_EQ(p[0], 2);
  EXPECT_EQ(p[2], 0);
  EXPECT_EQ(p[1], 3);
  EXPECT_EQ(p[3], 1);
  EXPECT_EQ(p[4], 6);
  EXPECT_EQ(p[6], 4);
  EXPECT_EQ(p[5], 7);
  EXPECT_EQ(p[7], 5);
  // One poll, three records: all pair with the invoke, which names the first.
  EXPECT_EQ(p[8], 9);
  EXPECT_EQ(p[9], 8);
  EXPECT_EQ(p[10], 8);
  EXPECT_EQ(p[11], 8);
  EXPECT_EQ(p[12], 13);
  EXPECT_EQ(p[14], 15);
  EXPECT_EQ(p[16], 17);  // commits pair first in, first out
  EXPECT_EQ(p[18], -1);  // connect: an event, never paired
  EXPECT_EQ(p[19], -1);  // a record without an invoke
  EXPECT_EQ(p[20], -1);  // an invoke never completed
}

TEST(CheckHistory, WritesJsonLinesWithFixedKeysAndUnsetFieldsLeftOut) {
  std::ostringstream out;
  sample().write_jsonl(out);
  EXPECT_EQ(out.str(),
            R"({"t_us":1000,"process":"producer","type":"invoke","f":"send","topic":"t","value":10}
{"t_us":1500,"process":"producer","type":"invoke","f":"send","topic":"t","partition":0,"value":11}
{"t_us":2000,"process":"producer","type":"ok","f":"send","topic":"t","partition":1,"offset":4,"value":10}
{"t_us":2500,"process":"producer","type":"info","f":"send","topic":"t","partition":0,"value":11,"error":"REQUEST_TIMED_OUT"}
{"t_us":3000,"process":"producer","type":"invoke","f":"send","topic":"t","partition":0,"value":11}
{"t_us":3100,"process":"producer","type":"invoke","f":"send","topic":"t","value":12}
{"t_us":3200,"process":"producer","type":"ok","f":"send","topic":"t","partition":0,"offset":7,"value":11}
{"t_us":3300,"process":"producer","type":"fail","f":"send","topic":"t","partition":1,"value":12,"error":"NOT_ENOUGH_REPLICAS"}
{"t_us":4000,"process":"consumer","type":"invoke","f":"poll","topic":"t","value":0}
{"t_us":4500,"process":"consumer","type":"ok","f":"poll","topic":"t","partition":1,"offset":4,"value":10,"producer":"producer"}
{"t_us":4500,"process":"consumer","type":"ok","f":"poll","topic":"t","partition":0,"offset":7,"value":11,"producer":"producer"}
{"t_us":4500,"process":"consumer","type":"ok","f":"poll","topic":"t","partition":0,"offset":8,"value":11,"producer":"producer"}
{"t_us":5000,"process":"consumer","type":"invoke","f":"poll","topic":"t","value":0}
{"t_us":5600,"process":"consumer","type":"ok","f":"poll","value":0}
{"t_us":6000,"process":"consumer","type":"invoke","f":"poll","topic":"t","value":0}
{"t_us":6500,"process":"consumer","type":"fail","f":"poll","value":0,"error":"connection_refused"}
{"t_us":7000,"process":"consumer","type":"invoke","f":"commit","topic":"t","partition":0,"offset":9,"value":0}
{"t_us":7100,"process":"consumer","type":"ok","f":"commit","topic":"t","partition":0,"offset":9,"value":0}
{"t_us":7200,"process":"producer","type":"info","f":"connect","value":0,"error":"connection_refused","detail":"node2:9092"}
{"t_us":8000,"process":"consumer","type":"ok","f":"poll","topic":"t","partition":1,"offset":5,"value":13}
{"t_us":9000,"process":"producer","type":"invoke","f":"send","topic":"t","partition":1,"value":14}
)");
}

TEST(CheckHistory, JsonLinesReadBackToTheSameHistory) {
  std::ostringstream first;
  sample().write_jsonl(first);
  std::istringstream in(first.str());
  const History back = History::read_jsonl(in);
  ASSERT_EQ(back.size(), sample().size());
  EXPECT_EQ(back.processes(), sample().processes());
  // A send's producer is implied by its process and comes back.
  EXPECT_EQ(back.ops()[0].producer, back.ops()[0].process);
  EXPECT_EQ(back.process_name(back.ops()[9].producer), "producer");
  EXPECT_EQ(back.ops()[19].producer, 0u);
  std::ostringstream second;
  back.write_jsonl(second);
  EXPECT_EQ(second.str(), first.str());
}

TEST(CheckHistory, ReadingJsonLinesRejectsMalformedLinesNamingThem) {
  auto message = [](const std::string& text) -> std::string {
    std::istringstream in(text);
    try {
      History::read_jsonl(in);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  const std::string good = R"({"t_us":1,"process":"p","type":"ok","f":"send","value":1})";
  EXPECT_EQ(message(good + "\n\n" + good + "\n"), "accepted");
  EXPECT_TRUE(message(good + "\n{\"t_us\":1").starts_with("history line 2: not JSON ("));
  // A number beyond a double is nlohmann's out_of_range, not a parse_error.
  EXPECT_TRUE(message(R"({"t_us":1e999,"process":"p","type":"ok","f":"send","value":1})")
                  .starts_with("history line 1: not JSON ("));
  EXPECT_EQ(message(R"({"t_us":1,"process":"p","type":"ok","f":"send","value":1,"colour":2})"),
            "history line 1: unknown key \"colour\"");
  EXPECT_EQ(message(R"({"t_us":1,"process":"p","type":"done","f":"send","value":1})"),
            "history line 1: \"type\" must be one of invoke, ok, fail, info");
  EXPECT_EQ(message(R"({"t_us":1,"process":"p","type":"ok","f":"send"})"),
            "history line 1: missing \"value\"");
  EXPECT_EQ(message(R"({"t_us":"1","process":"p","type":"ok","f":"send","value":1})"),
            "history line 1: \"t_us\" must be an integer");
  EXPECT_EQ(message("[1]"), "history line 1: expected a JSON object");
}

// The EDN of jepsen.tests.kafka: sends pair into [:send k v] / [:send k
// [offset v]], the records of one poll become one :poll op keyed by
// partition, commit and connect have no Jepsen form and are left out, a
// record without its invoke gets one, and a send still in flight when the
// history ends is written alone.
TEST(CheckHistory, WritesJepsenKafkaEdn) {
  std::ostringstream out;
  sample().write_edn(out);
  EXPECT_EQ(out.str(),
            R"({:index 0, :time 1000000, :type :invoke, :process 1, :f :send, :value [[:send 1 10]]}
{:index 1, :time 1500000, :type :invoke, :process 4, :f :send, :value [[:send 0 11]]}
{:index 2, :time 2000000, :type :ok, :process 1, :f :send, :value [[:send 1 [4 10]]]}
{:index 3, :time 2500000, :type :info, :process 4, :f :send, :value [[:send 0 11]], :error "REQUEST_TIMED_OUT"}
{:index 4, :time 3000000, :type :invoke, :process 1, :f :send, :value [[:send 0 11]]}
{:index 5, :time 3100000, :type :invoke, :process 7, :f :send, :value [[:send 1 12]]}
{:index 6, :time 3200000, :type :ok, :process 1, :f :send, :value [[:send 0 [7 11]]]}
{:index 7, :time 3300000, :type :fail, :process 7, :f :send, :value [[:send 1 12]], :error "NOT_ENOUGH_REPLICAS"}
{:index 8, :time 4000000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 9, :time 4500000, :type :ok, :process 2, :f :poll, :value [[:poll {0 [[7 11] [8 11]], 1 [[4 10]]}]]}
{:index 10, :time 5000000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 11, :time 5600000, :type :ok, :process 2, :f :poll, :value [[:poll {}]]}
{:index 12, :time 6000000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 13, :time 6500000, :type :fail, :process 2, :f :poll, :value [[:poll]], :error "connection_refused"}
{:index 14, :time 8000000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 15, :time 8000000, :type :ok, :process 2, :f :poll, :value [[:poll {1 [[5 13]]}]]}
{:index 16, :time 9000000, :type :invoke, :process 1, :f :send, :value [[:send 1 14]]}
)");
}

// Several topics: ranked by name, key = rank * 100 + partition when some
// partition number reaches 10. A send that never learnt its partition has key
// nil; an acks=0 acknowledgement has no offset, written nil as Jepsen does.
TEST(CheckHistory, EdnKeysForSeveralTopicsAndUnknownPartitionsAndOffsets) {
  Builder b;
  b.op(1, "p", OpType::invoke, OpFunction::send).topic("b").value(1).producer("p")
      .op(2, "p", OpType::ok, OpFunction::send).topic("b").at(3).value(1).producer("p")
      .op(3, "p", OpType::invoke, OpFunction::send).topic("a").value(2).producer("p")
      .op(4, "p", OpType::info, OpFunction::send).topic("a").value(2).producer("p")
      .error("REQUEST_TIMED_OUT")
      .op(5, "c", OpType::ok, OpFunction::poll).topic("a").at(11, 0).value(3);
  std::ostringstream out;
  b.history().write_edn(out);
  EXPECT_EQ(out.str(),
            R"({:index 0, :time 1000, :type :invoke, :process 1, :f :send, :value [[:send 103 1]]}
{:index 1, :time 2000, :type :ok, :process 1, :f :send, :value [[:send 103 [nil 1]]]}
{:index 2, :time 3000, :type :invoke, :process 1, :f :send, :value [[:send nil 2]]}
{:index 3, :time 4000, :type :info, :process 1, :f :send, :value [[:send nil 2]], :error "REQUEST_TIMED_OUT"}
{:index 4, :time 5000, :type :invoke, :process 2, :f :poll, :value [[:poll]]}
{:index 5, :time 5000, :type :ok, :process 2, :f :poll, :value [[:poll {11 [[0 3]]}]]}
)");
}

// After an :info a Jepsen process is never used again (its interpreter gives
// the worker a new process); lanes of completed ops are reused.
TEST(CheckHistory, EdnRetiresAJepsenProcessAfterInfo) {
  Builder b;
  b.send(1, "p", OpType::invoke, 1).at(0)
      .send(2, "p", OpType::info, 1).at(0)
      .send(3, "p", OpType::invoke, 2).at(0)
      .send(4, "p", OpType::ok, 2).at(0, 0)
      .send(5, "p", OpType::invoke, 3).at(0)
      .send(6, "p", OpType::fail, 3).at(0);
  std::ostringstream out;
  b.history().write_edn(out);
  EXPECT_EQ(out.str(),
            R"({:index 0, :time 1000, :type :invoke, :process 1, :f :send, :value [[:send 0 1]]}
{:index 1, :time 2000, :type :info, :process 1, :f :send, :value [[:send 0 1]]}
{:index 2, :time 3000, :type :invoke, :process 3, :f :send, :value [[:send 0 2]]}
{:index 3, :time 4000, :type :ok, :process 3, :f :send, :value [[:send 0 [0 2]]]}
{:index 4, :time 5000, :type :invoke, :process 3, :f :send, :value [[:send 0 3]]}
{:index 5, :time 6000, :type :fail, :process 3, :f :send, :value [[:send 0 3]]}
)");
}

TEST(CheckHistory, FinalStateReferenceIsTheLeaderElseTheLongestReplica) {
  using Replica = FinalState::Replica;
  std::vector<Replica> rs(3);
  rs[0].broker = 1;
  rs[0].records = {{0, 10}, {1, 11}};
  rs[1].broker = 2;
  rs[1].records = {{0, 10}, {1, 11}, {2, 12}};
  rs[2].broker = 3;
  rs[2].log_start = 5;  // empty, but its log ends at 5
  EXPECT_EQ(FinalState::reference(rs)->broker, 3);
  rs[2].log_start = 0;
  EXPECT_EQ(FinalState::reference(rs)->broker, 2);
  rs[0].leader = true;
  EXPECT_EQ(FinalState::reference(rs)->broker, 1);
  EXPECT_EQ(FinalState::reference(std::vector<Replica>{}), nullptr);
  EXPECT_EQ(FinalState::log_end(rs[1]), 3);
  EXPECT_EQ(FinalState::value_at(rs[1], 2), 12u);
  EXPECT_EQ(FinalState::value_at(rs[1], 3), std::nullopt);
  FinalState fs;
  fs.partitions[{"t", 0}] = rs;
  EXPECT_EQ(fs.reference(kafka::TopicPartition{"t", 0})->broker, 1);
  EXPECT_EQ(fs.reference(kafka::TopicPartition{"t", 1}), nullptr);
}


// --- pairing, against the definition -------------------------------------------

// pair_index as history.h defines it, written the plain way: a FIFO per
// (process, function, value) in an ordered map.
std::vector<int64_t> pairs_by_hand(const History& h) {
  const std::vector<Op>& ops = h.ops();
  std::vector<int64_t> partner(ops.size(), -1);
  std::map<std::tuple<uint32_t, OpFunction, uint64_t>, std::deque<size_t>> pending;
  std::map<uint32_t, size_t> previous;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    std::optional<size_t> prev;
    if (auto it = previous.find(op.process); it != previous.end()) prev = it->second;
    previous[op.process] = i;
    if (op.f == OpFunction::connect || op.f == OpFunction::exit) continue;
    const auto key = std::make_tuple(op.process, op.f, op.f == OpFunction::send ? op.value : 0);
    if (op.type == OpType::invoke) {
      pending[key].push_back(i);
      continue;
    }
    if (prev && op.f == OpFunction::poll && op.type == OpType::ok &&
        ops[*prev].f == OpFunction::poll && ops[*prev].type == OpType::ok &&
        ops[*prev].time_us == op.time_us) {
      partner[i] = partner[*prev];
      continue;
    }
    auto& queue = pending[key];
    if (queue.empty()) continue;
    partner[i] = static_cast<int64_t>(queue.front());
    partner[queue.front()] = static_cast<int64_t>(i);
    queue.pop_front();
  }
  return partner;
}

// Random histories of every op shape: few processes, times that repeat (so
// that polls continue), values from a narrow range (many tries of one value
// in flight at once) or a wide one (hundreds of keys pending together).
History random_history(uint64_t seed) {
  sim::Rng rng(seed);
  History h;
  const uint64_t values = rng.chance(1, 2) ? 4 : 500;
  const int n = static_cast<int>(rng.below(1'500));
  int64_t t = 0;
  for (int i = 0; i < n; ++i) {
    Op op;
    t += static_cast<int64_t>(rng.below(3));
    op.time_us = t;
    op.process = h.process(std::string(1, static_cast<char>('a' + rng.below(4))));
    op.type = static_cast<OpType>(rng.chance(1, 2) ? 0 : rng.below(4));
    op.f = static_cast<OpFunction>(rng.chance(1, 2) ? 0 : rng.below(6));
    op.value = rng.below(values);
    h.add(op);
    // The records of one poll: more ok polls of the process at the same instant.
    if (op.f == OpFunction::poll && op.type == OpType::ok) {
      for (uint64_t k = rng.below(3); k > 0; --k) h.add(op);
    }
  }
  return h;
}

RC_GTEST_PROP(CheckHistory, PairIndexAgreesWithTheDefinition, (uint64_t seed)) {
  const History h = random_history(seed);
  RC_ASSERT(pair_index(h) == pairs_by_hand(h));
}

// The generator must reach pairs, continued polls and completions left alone.
TEST(CheckHistory, RandomHistoriesPairContinueAndLeaveUnpaired) {
  uint64_t paired = 0, continued = 0, unpaired = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const History h = random_history(seed);
    const std::vector<int64_t> p = pairs_by_hand(h);
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] < 0) {
        if (h.ops()[i].type != OpType::invoke) ++unpaired;
      } else if (h.ops()[static_cast<size_t>(p[i])].type == OpType::invoke) {
        if (p[static_cast<size_t>(p[i])] == static_cast<int64_t>(i)) {
          ++paired;
        } else {
          ++continued;
        }
      }
    }
    EXPECT_EQ(pair_index(h), p) << "seed " << seed;
  }
  EXPECT_GT(paired, 1'000u);
  EXPECT_GT(continued, 10u);
  EXPECT_GT(unpaired, 100u);
}
}  // namespace
}  // namespace check
