// The cluster's final state for the checkers (check::FinalState in
// history.h), read straight from the brokers of a world, and a recorder of
// every log truncation during a run.
//
// Which replicas count. FinalState holds, per partition, the replicas of the
// brokers whose process is running at the end of the run — paused ones
// included. A paused broker (a long GC, SIGSTOP) keeps its log in memory and
// goes on with it when it resumes: it is part of the cluster. A broker that
// was killed or whose host lost power is left out even though its log is on
// its disk: nobody can read that log, and what of it survives is decided only
// when the broker starts again (recovery cuts a torn tail; the page cache is
// gone after a power loss; as a follower it truncates to the new leader). So
// "the final log" that check_lost judges against (FinalState::reference: the
// leader's log) is the log the cluster would serve now. An acknowledged value
// that only a dead broker holds is lost as far as any client can tell — which
// is what a run that ends with every broker started again and a quiet period
// (the tests' recipe) makes precise: then no broker is left out.
//
// The leader flag. A broker believes it leads a partition until it is told
// otherwise; a paused or cut-off old leader may still believe it after the
// controller elected another. Of the live replicas that believe they lead,
// only the one with the highest leader epoch is marked leader (the others are
// fenced: their epoch is stale); on a tie — two leaders in one epoch, which
// the invariants forbid — the lower broker id.
//
// Truncations. TruncationRecorder watches the world's trace (sim::Trace
// observers) for what the brokers put on record, so it survives broker
// restarts without touching the broker: every `log_truncated` (a follower
// truncating by leader epoch, to its high watermark, on OFFSET_OUT_OF_RANGE,
// or below the leader's log start), and what a restart lost — the log end a
// broker had when its host lost power against the log end it loads back
// (records only in the page cache never reach the disk, and a torn tail is
// cut by recovery), or, when that is not known (the broker was already down
// when the power went), the torn tail recovery reports (`log_recovered`).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/check/history.h"
#include "model/kafka/types.h"
#include "sim/world.h"

namespace check {

struct FinalStateOptions {
  // __consumer_offsets and __transaction_state (Kafka's Topic.isInternal)
  // are left out unless asked for: no client sends to them.
  bool include_internal_topics = false;
};

// Kafka's internal topics.
bool is_internal_topic(const std::string& topic);

// Reads the live replicas of every partition (see above) from the brokers of
// `world`; `brokers` maps broker ids to their processes (a test cluster's
// broker_processes()). `truncations` is copied in as it is.
FinalState read_final_state(const sim::World& world, const std::map<kafka::BrokerId, sim::ProcessId>& brokers,
                            std::vector<FinalState::Truncation> truncations = {},
                            const FinalStateOptions& options = {});

class TruncationRecorder {
 public:
  // Starts recording; `world` and the recorder must outlive each other's use
  // (the recorder removes its observer when destroyed, so destroy it before
  // the world).
  TruncationRecorder(sim::World& world, std::map<kafka::BrokerId, sim::ProcessId> brokers,
                     FinalStateOptions options = {});
  ~TruncationRecorder();
  TruncationRecorder(const TruncationRecorder&) = delete;
  TruncationRecorder& operator=(const TruncationRecorder&) = delete;

  // In the order they happened.
  const std::vector<FinalState::Truncation>& truncations() const { return truncations_; }

 private:
  void on_record(const sim::TraceRecord& r);
  // The broker whose process emitted `r`, or kNoBroker.
  kafka::BrokerId broker_of(const sim::TraceRecord& r) const;
  void add(int64_t time_us, kafka::BrokerId broker, kafka::TopicPartition tp, int64_t from, int64_t to);

  sim::World& world_;
  std::map<kafka::BrokerId, sim::ProcessId> brokers_;
  FinalStateOptions options_;
  uint64_t handle_ = 0;
  // (host name, process name) -> broker.
  std::map<std::pair<std::string, std::string>, kafka::BrokerId> by_name_;
  // The log end of each partition a broker held when its host lost power,
  // until the broker loads that partition again.
  std::map<kafka::BrokerId, std::map<kafka::TopicPartition, int64_t>> at_power_off_;
  std::vector<FinalState::Truncation> truncations_;
};

}  // namespace check
