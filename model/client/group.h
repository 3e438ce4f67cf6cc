// A consumer-group member (librdkafka's rdkafka_cgrp.c; the Java client's
// AbstractCoordinator + ConsumerCoordinator), with the eager rebalance
// protocol: it owns a client::Consumer and decides which partitions that
// consumer fetches.
//
//   1. Find the coordinator: FindCoordinator(group.id) to any known broker;
//      COORDINATOR_NOT_AVAILABLE or no answer: again after retry.backoff.ms.
//   2. JoinGroup on a connection of its own to the coordinator (Java uses
//      node id Integer.MAX_VALUE - coordinator id for it), with the member id
//      it has ("" the first time), session.timeout.ms, max.poll.interval.ms
//      as the rebalance timeout, and one protocol per assignment strategy
//      carrying its subscription (assignor.h). Without a member id the
//      coordinator answers MEMBER_ID_REQUIRED with one (KIP-394) and the
//      member asks again at once with it. JoinGroups are paced as
//      librdkafka paces them: after a failed JoinGroup or SyncGroup or a lost
//      coordinator, the next waits until a second after the last one (two
//      after a JoinGroup answered with an error); a rejoin that revokes the
//      assignment goes at once.
//   3. The leader computes the assignment over the partition counts its
//      metadata knows, with the strategy the coordinator chose; every member
//      sends SyncGroup and gets its partitions.
//   4. OffsetFetch for them: a committed offset becomes the position; a
//      partition without one starts where auto.offset.reset says (the
//      Consumer's ListOffsets).
//   5. Heartbeat every heartbeat.interval.ms.
//
// Rebalances and failures, as the clients handle them:
//   - REBALANCE_IN_PROGRESS (heartbeat, commit, sync): revoke — commit the
//     consumed positions first when enable.auto.commit (librdkafka commits on
//     revoke, Java in onJoinPrepare), stop fetching — then rejoin.
//   - UNKNOWN_MEMBER_ID: the coordinator forgot the member: member id reset
//     to "", partitions lost (no commit), rejoin. ILLEGAL_GENERATION: lost
//     too, rejoin with the same member id (librdkafka).
//   - NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
//     a disconnect or a request timeout (librdkafka's: JoinGroup
//     max.poll.interval.ms + 3 s; SyncGroup session.timeout.ms + 3 s,
//     Heartbeat session.timeout.ms, LeaveGroup 5 s, each at most
//     request.timeout.ms; the others request.timeout.ms): the coordinator is marked unknown and found
//     again; an assigned member keeps fetching meanwhile, and a join in
//     progress is retried.
//   - No successful heartbeat for session.timeout.ms: the coordinator has
//     surely removed the member; it resets its member id and rejoins
//     (librdkafka's session timeout check).
//   - max.poll.interval.ms without a call to polled(): the member leaves the
//     group (LeaveGroup) and stops fetching, and rejoins on the next
//     polled() (librdkafka, KIP-62).
//
// Offsets: with enable.auto.commit the consumed positions (the offset after
// the last record handed to the listener) of partitions whose position moved
// since the last commit are committed every auto.commit.interval.ms, on
// revoke and on close(); commit() commits them by hand. The commits on
// revoke and close are retried (the coordinator found again) while they
// fail retriably, within the rebalance timeout and 30 s respectively.
//
// History (optional): the ops model/check/checkers.h describes — rebalance
// invoke when JoinGroup is sent, ok "group=G generation=N assigned=t-0,t-1"
// at the SyncGroup answer, fail (an error answer) / info (no answer) ending a
// join, info "group=G left" when it leaves; commit invoke and ok / fail /
// info per partition with its offset. Polls are the application's to record.
//
// Use inside a sim::Process: construct in on_start(), route the socket
// callbacks to on_connected … on_closed (each returns true when the socket
// was this client's), call polled() from the application's poll loop (a
// workload whose application never stalls calls it on a timer, say every
// 100 ms), and close() before exiting. Records reach the listener's
// on_records only for assigned partitions; connection-level events of the
// fetch connections and of the coordinator connection reach on_client_event.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/check/history.h"
#include "model/client/consumer.h"

namespace client {

class GroupConsumer final : private ConsumerListener {
 public:
  // Where the member is in the group protocol (for tests and traces).
  enum class State {
    unjoined,          // no coordinator or not yet joining
    revoking,          // committing before a rejoin
    joining,           // JoinGroup in flight
    syncing,           // SyncGroup in flight (or the leader waiting for metadata)
    fetching_offsets,  // OffsetFetch for a new assignment
    stable,            // assigned, heartbeating
    left,              // left after max.poll.interval.ms; rejoins on polled()
    closed,            // close() done (or in progress)
    failed,            // a fatal error (INCONSISTENT_GROUP_PROTOCOL, GROUP_MAX_SIZE_REACHED ...)
  };

  // `config.group_id` must not be empty and `topics` not empty
  // (std::invalid_argument otherwise). `process_name` names the process in
  // the history; "" means ctx.name().
  GroupConsumer(sim::ProcessContext& ctx, ConsumerConfig config, std::vector<std::string> topics,
                ConsumerListener& listener, check::History* history = nullptr,
                std::string process_name = "");
  GroupConsumer(const GroupConsumer&) = delete;
  GroupConsumer& operator=(const GroupConsumer&) = delete;
  ~GroupConsumer() override;

  // Commits the consumed positions now (those moved since the last commit).
  // `done`, if given, hears whether every partition's commit succeeded
  // (false also when there was no coordinator or member to commit with).
  void commit(std::function<void(bool)> done = {});
  // Commits (with enable.auto.commit), leaves the group and stops; `done`
  // runs when that is over (answered or not).
  void close(std::function<void()> done = {});
  // The application polled: resets the max.poll.interval.ms clock.
  void polled();

  const std::set<kafka::TopicPartition>& assignment() const { return assignment_; }
  std::optional<int64_t> position(const kafka::TopicPartition& tp) const { return consumer_->position(tp); }
  State state() const { return state_; }
  int32_t generation() const { return generation_; }
  const std::string& member_id() const { return member_id_; }
  bool is_leader() const { return leader_; }
  std::optional<kafka::BrokerId> coordinator() const;
  // The last offsets the coordinator acknowledged for this member's commits.
  const std::map<kafka::TopicPartition, int64_t>& committed() const { return committed_; }

  bool on_connected(sim::SocketId s);
  bool on_connect_failed(sim::SocketId s, sim::ConnectError e);
  bool on_message(sim::SocketId s, sim::Payload& p);
  bool on_closed(sim::SocketId s, sim::CloseReason r);

 private:
  struct Coordinator {
    kafka::BrokerId id = kafka::kNoBroker;
    kafka::NodeAddress address;
  };
  using Handler = std::function<void(kafka::SendError, const kafka::Response*)>;

  // ConsumerListener, forwarded to the application's listener.
  void on_client_event(const std::string& event, int32_t node) override;
  void on_records(const std::vector<ConsumedRecord>& records) override;
  void on_fetch_error(const kafka::TopicPartition& tp, const std::string& error) override;

  int64_t now_ms() const { return ctx_.now().us() / 1000; }
  // A timer that does nothing once this object is gone.
  template <typename F>
  void after(int32_t delay_ms, F&& fn);
  void trace(const std::string& what, const std::string& why);
  void step();
  void step_later(int32_t delay_ms);
  // The next JoinGroup may go at once (librdkafka's rd_interval_reset).
  void skip_join_pacing();
  void find_coordinator();
  // `cause`: the connection-level error that showed it, if any.
  void coordinator_lost(const std::string& why, kafka::SendError cause = kafka::SendError::none);
  int32_t net_timeout_ms() const;
  // A request timeout librdkafka does not force: at most socket.timeout.ms
  // (request.timeout.ms here; rd_kafka_buf_calc_timeout).
  int32_t capped(int32_t timeout_ms) const;
  void send_to_coordinator(kafka::Request request, int32_t timeout_ms, Handler done);
  void send_to(int32_t node, const kafka::NodeAddress& address, kafka::Request request,
               int32_t timeout_ms, Handler done);
  // Closes the connection to `node`: request `first` fails with
  // `first_error`, the others there with `rest`.
  void drop_connection(int32_t node, uint64_t first, kafka::SendError first_error, kafka::SendError rest);
  void join();
  void on_join(const kafka::JoinGroupResponse& r);
  void lead(kafka::JoinGroupResponse r, int32_t attempt);
  void sync(std::vector<kafka::SyncGroupAssignment> assignments);
  void on_sync(const kafka::SyncGroupResponse& r);
  void fetch_offsets();
  void start_fetching(const std::map<kafka::TopicPartition, int64_t>& committed);
  void heartbeat();
  void schedule_heartbeat();
  void cancel_heartbeat();
  void arm_session_check();
  void check_session();
  void check_poll_interval();
  void auto_commit();
  // The partitions are revoked (a rebalance) or lost; `commit_first`
  // commits the consumed positions (enable.auto.commit) before rejoining.
  void rejoin(bool commit_first, const std::string& why);
  void membership_lost(bool reset_member_id, const std::string& why);
  // REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION: acted on
  // (when assigned) and true; false for any other error.
  bool handle_group_error(kafka::ErrorCode e);
  void unassign();
  // How a commit ended: every partition stored, failed in a way worth
  // trying again (no coordinator, a lost answer, a coordinator error,
  // REQUEST_TIMED_OUT — Java's RetriableCommitFailedException), or failed.
  enum class CommitResult { ok, retriable, failed };
  // Commits `offsets` once.
  // `timeout_ms`: the request's client-side timeout (request.timeout.ms
  // unless a caller's deadline leaves less).
  void send_commit(std::map<kafka::TopicPartition, int64_t> offsets, std::function<void(CommitResult)> done,
                   std::optional<int64_t> timeout_ms = std::nullopt);
  // Commits `offsets`, finding the coordinator again and retrying a
  // retriable failure every retry.backoff.ms until `deadline`: how both
  // clients commit on close and on revoke (Java's commitOffsetsSync under a
  // timer; librdkafka defers a commit once, for up to session.timeout.ms,
  // when it has no coordinator). `done(all_ok)`.
  void commit_sync(std::map<kafka::TopicPartition, int64_t> offsets, sim::Time deadline,
                   std::function<void(bool)> done);
  std::map<kafka::TopicPartition, int64_t> commit_candidates() const;
  // retry.backoff.ms, at least 1 ms: several waits here poll for an answer
  // that comes later in virtual time, and fetch.error.backoff.ms (which sets
  // the same field) may be 0.
  int32_t backoff_ms() const { return std::max(config_.retry_backoff_ms, 1); }
  void end_join(check::OpType type, const std::string& error);
  void leave(const std::string& why, std::function<void()> done);

  void record(check::OpType type, check::OpFunction f, const std::string& detail,
              const std::string& error, const kafka::TopicPartition* tp = nullptr, int64_t offset = -1);
  std::string group_detail() const { return "group=" + config_.group_id; }

  sim::ProcessContext& ctx_;
  ConsumerConfig config_;
  std::vector<std::string> topics_;
  ConsumerListener& listener_;
  check::History* history_;
  std::string process_name_;
  std::unique_ptr<Consumer> consumer_;
  kafka::NetworkClient net_;  // FindCoordinator and the coordinator connection

  State state_ = State::unjoined;
  std::optional<Coordinator> coordinator_;
  bool finding_ = false;
  int coordinator_failures_ = 0;  // in a row, for the rediscovery backoff
  bool step_scheduled_ = false;
  uint64_t epoch_ = 0;  // bumped when the coordinator is lost or the member rejoins: stale answers are ignored
  std::string member_id_;
  int32_t generation_ = -1;
  bool leader_ = false;
  bool join_open_ = false;  // a rebalance invoke is waiting for its completion
  std::string protocol_;
  std::set<kafka::TopicPartition> assignment_;
  std::vector<kafka::TopicPartition> pending_assignment_;  // from SyncGroup, waiting for offsets
  bool heartbeat_in_flight_ = false;
  bool offsets_in_flight_ = false;
  bool session_check_set_ = false;
  sim::TimerId heartbeat_timer_;
  bool heartbeat_timer_set_ = false;
  int64_t last_heartbeat_ok_ms_ = 0;
  int64_t last_poll_ms_ = 0;
  // librdkafka's join interval (rkcg_join_intvl): when the last JoinGroup
  // went (none: the next goes at once), and the extra wait after one the
  // coordinator answered with an error.
  std::optional<sim::Time> last_join_;
  int64_t join_backoff_ms_ = 0;
  std::map<kafka::TopicPartition, int64_t> committed_;
  int32_t commits_in_flight_ = 0;
  uint64_t next_request_ = 1;
  std::map<uint64_t, int32_t> outstanding_;  // requests not yet answered -> node
  std::map<uint64_t, kafka::SendError> forced_;  // ... failed by us: the error to report
  std::shared_ptr<int> life_ = std::make_shared<int>(0);
};

const char* to_string(GroupConsumer::State s);

}  // namespace client
