// A Kafka broker in ZooKeeper mode (kafka.server.KafkaServer and what it
// starts), as one simulated process.
//
// Start: load the logs found on disk (recovering a torn tail), connect to
// ZooKeeper, create the top-level paths if missing, register
// /brokers/ids/<id> (ephemeral; its czxid is the broker epoch, KIP-380), then
// try to become the controller and wait for the controller's LeaderAndIsr
// and UpdateMetadata. If /brokers/ids/<id> still belongs to an older session
// the start fails and the process exits, as a real broker restarted within
// the session timeout of a crash does.
//
// Requests (one connection at a time, in order, see wire.h):
//   LeaderAndIsr / UpdateMetadata / StopReplica from the controller, fenced
//     by controller epoch, and per partition by leader epoch;
//   Fetch from followers (replica id >= 0, up to the log end) and consumers
//     (up to the high watermark), long-polled with max wait / min bytes;
//   OffsetsForLeaderEpoch from followers (KIP-101/279);
//   Produce with acks 0 / 1 / all, min.insync.replicas, idempotent producers;
//   Metadata (auto-creating topics), ListOffsets, CreateTopics (controller
//   only), FindCoordinator (creating __consumer_offsets), InitProducerId;
//   JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch
//   to the group coordinator (group_coordinator.h), which owns the groups of
//   the __consumer_offsets partitions this broker leads.
//   ControlledShutdown when this broker is the controller.
//
// Background tasks, on Kafka's schedules: ISR expiry every
// replica.lag.time.max.ms / 2; ISR change propagation every 2.5 s;
// high-watermark checkpoint; log retention (first run after 30 s); log flush.
//
// Graceful stop (SIGTERM): controlled shutdown with retries, then flush
// every log, close the ZooKeeper session (its ephemerals go at once) and exit.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "model/kafka/config.h"
#include "model/kafka/controller.h"
#include "model/kafka/group_coordinator.h"
#include "model/kafka/network_client.h"
#include "model/kafka/partition.h"
#include "model/kafka/producer_ids.h"
#include "model/kafka/wire.h"
#include "sim/deadline_timer.h"
#include "sim/fifo.h"
#include "sim/flat_map.h"
#include "model/zk/client.h"

namespace kafka {

class Broker final : public sim::Process {
 public:
  explicit Broker(BrokerConfig config);
  ~Broker() override;

  void on_start() override;
  void on_terminate() override;
  void on_accept(sim::SocketId socket, uint16_t port) override;
  void on_connected(sim::SocketId socket) override;
  void on_connect_failed(sim::SocketId socket, sim::ConnectError error) override;
  void on_message(sim::SocketId socket, sim::Payload& payload) override;
  void on_closed(sim::SocketId socket, sim::CloseReason reason) override;


  // --- inspection (tests, checkers, `describe`) ----------------------------------
  const BrokerConfig& config() const { return config_; }
  BrokerId id() const { return config_.broker_id; }
  bool registered() const { return registered_; }
  // The ZooKeeper server this broker's session is connected to, if it is.
  std::optional<std::string> zk_server() const { return zk_ ? zk_->server() : std::nullopt; }
  // This broker's ZooKeeper session, if it has one (tests look at what it
  // has in flight).
  const zk::Client* zk_client() const { return zk_.get(); }
  int64_t broker_epoch() const { return broker_epoch_; }
  bool is_controller() const { return controller_ != nullptr && controller_->active(); }
  const Controller* controller() const { return is_controller() ? controller_.get() : nullptr; }
  // ISR changes waiting to be (or being) sent to the controller (AlterIsr).
  size_t alter_isr_changes_unsent() const { return alter_isr_unsent_.size(); }
  // The highest controller epoch this broker has accepted a request from.
  ControllerEpoch controller_epoch_seen() const { return controller_epoch_; }
  const Partition* partition(const TopicPartition& tp) const;
  std::vector<TopicPartition> partitions() const;
  // Every partition replica this broker holds, without copying.
  const std::map<TopicPartition, std::unique_ptr<Partition>>& partition_map() const { return partitions_; }
  // Raised whenever partition_map() gains or loses an entry.
  uint64_t partitions_generation() const { return partitions_generation_; }
  // Raised whenever one of its partitions is made leader or follower: while
  // it and partitions_generation() hold, the same partitions lead here.
  uint64_t roles_version() const { return roles_version_; }
  struct MetadataCache {
    BrokerId controller_id = kNoBroker;
    std::map<BrokerId, Endpoint> brokers;
    std::map<TopicPartition, PartitionState> partitions;
  };
  const MetadataCache& metadata() const { return metadata_; }
  // The consumer-group coordinator (null before start).
  const GroupCoordinator* group_coordinator() const { return group_coordinator_.get(); }
  // The leader epoch in which the replica fetcher's request now in flight
  // asks about `tp` (a fetch or OffsetsForLeaderEpoch); nullopt when none is.
  std::optional<LeaderEpoch> fetch_in_flight_epoch(const TopicPartition& tp) const;

 private:
  // --- ZooKeeper ------------------------------------------------------------------
  class ZkListener;
  std::string zk_path(const std::string& p) const { return chroot_ + p; }
  void on_session_state(uint64_t generation, zk::SessionState state);
  void on_watch(uint64_t generation, const zk::WatchEvent& event);
  void new_zk_session();
  void create_top_level_paths(size_t i);
  void register_broker();
  void elect_controller();
  void start_listening();
  void start_serving_requests();
  void register_controller(ControllerEpoch next, int32_t epoch_version, int64_t timestamp_ms);
  void check_controller_and_epoch(ControllerEpoch next);
  void check_controller_epoch(ControllerEpoch next);
  bool retry_after_connection_loss(zk::Error e) const;
  void watch_controller();
  void become_controller(ControllerEpoch epoch, int32_t epoch_version);
  void resign(const std::string& why, Controller::StopKind how = Controller::StopKind::resigned);

  // --- serving requests -------------------------------------------------------------
  struct ServerConnection {
    sim::Fifo<RequestFrame> pending;
    bool busy = false;  // a request is being served; the channel is muted
    // The request being served: its number on this connection (a reply for
    // an earlier one is stale), its correlation id, whether it is answered.
    uint32_t serving = 0;
    int32_t correlation_id = 0;
    bool answer = true;
  };
  // Serves the next pending request of a connection that is not busy (or
  // parks it, below).
  void dispatch(sim::SocketId socket);
  // The 2.2 profile's partition lock (ReplicationRules::
  // isr_write_holds_partition_lock): while a partition's ISR write is on
  // its way to ZooKeeper, a request that needs the partition's lock —
  // produce, fetch, ListOffsets and OffsetsForLeaderEpoch on it, OffsetCommit
  // and SyncGroup appending to it, LeaderAndIsr and a deleting StopReplica
  // naming it, and every LeaderAndIsr / StopReplica behind one that waits
  // (ReplicaManager's replicaStateChangeLock) — is parked: its connection
  // stays muted and it holds one of num.io.threads request handler threads.
  // With every handler thread parked the broker serves nothing more until
  // one is freed. Parked requests are served in order when the write ends.
  bool partition_locked(const TopicPartition& tp) const;
  // Whether `request` must wait: a partition it needs is locked, or (a
  // LeaderAndIsr, a StopReplica) one of the first `ahead` parked requests
  // is a LeaderAndIsr or StopReplica (for a request not parked yet, all).
  bool waits_for_lock(const Request& request, size_t ahead) const;
  bool fetch_waits_for_lock(const FetchRequest& r) const;
  // No lock held and nothing parked: no request waits (the common case,
  // checked first).
  bool nothing_locked() const { return isr_writes_in_flight_ == 0 && parked_.empty(); }
  size_t isr_writes_in_flight_ = 0;
  bool handlers_exhausted() const {
    return parked_.size() >= static_cast<size_t>(config_.num_io_threads);
  }
  void park(sim::SocketId socket, ServerConnection& c, RequestFrame frame);
  // An ISR write of `tp` ended: the partition's lock is released (where the
  // write holds it), and the ISR-expiration pass goes on.
  void isr_write_ended(const TopicPartition& tp);
  // Parked requests that can go on are served, waiting fetches retried.
  void release_partition_lock(const TopicPartition& tp);
  struct Parked {
    sim::SocketId socket;
    RequestFrame frame;
  };
  std::vector<Parked> parked_;
  std::vector<sim::SocketId> waiting_for_handler_;  // connections with a request and no free handler
  // Serves `frame` on connection `c` (not busy): it is handled in place, so
  // a request that finds its connection idle is never queued.
  void serve(sim::SocketId socket, ServerConnection& c, RequestFrame& frame);
  // Takes the response by rvalue: it moves once, into the frame sent.
  using Reply = std::function<void(Response&&)>;
  void handle(Request& request, Reply reply);
  void handle_leader_and_isr(const LeaderAndIsrRequest& r, Reply reply);
  void apply_leader_and_isr(const LeaderAndIsrRequest& r, Reply reply);
  void handle_update_metadata(const UpdateMetadataRequest& r, Reply reply);
  void handle_stop_replica(const StopReplicaRequest& r, Reply reply);
  void handle_fetch(FetchRequest r, Reply reply);
  void handle_offsets_for_leader_epoch(const OffsetsForLeaderEpochRequest& r, Reply reply);
  // Takes the records out of `r`: a request is spent once handled.
  void handle_produce(ProduceRequest& r, Reply reply);
  void handle_metadata(const MetadataRequest& r, Reply reply);
  void handle_list_offsets(const ListOffsetsRequest& r, Reply reply);
  void handle_create_topics(const CreateTopicsRequest& r, Reply reply);
  void handle_find_coordinator(const FindCoordinatorRequest& r, Reply reply);
  void handle_init_producer_id(const InitProducerIdRequest& r, Reply reply);

  // The group coordinator's writes to __consumer_offsets, as the leader:
  // offsets assigned, high watermark and waiting fetches updated. Returns
  // the log end offset after them.
  Offset append_to_offsets_partition(const TopicPartition& tp, std::vector<Record> records);

  // Writes /config/topics/<t> and /brokers/topics/<t> (AdminZkClient.createTopic).
  void create_topic(const NewTopic& topic, std::function<void(ErrorCode, std::string)> done);

  // --- the replica manager ---------------------------------------------------------
  Partition* find_partition(const TopicPartition& tp);
  Partition& get_or_create_partition(const TopicPartition& tp, const LogConfig& config);
  std::string partition_dir(const TopicPartition& tp) const;
  LogConfig log_config_for(const std::string& topic) const;
  void load_logs();
  void become_follower(Partition& p, const std::vector<LiveBroker>& live_leaders);
  void stop_fetching(const TopicPartition& tp);
  // The high watermark moved or the log grew: complete what waited for it.
  void on_partition_progress(const TopicPartition& tp);
  // Partition.maybeExpandIsr for the follower whose fetch just arrived.
  void maybe_expand_isr(Partition& p, BrokerId fetcher);
  void shrink_isrs();
  // Starts the shrink of `p`'s ISR if followers lag; true if a write went out.
  bool maybe_shrink_isr(Partition& p, int64_t now_ms);
  // The ISR-expiration pass of a broker writing ZooKeeper itself (2.2, 2.3,
  // and later releases on a protocol below 2.7-IV2): one scheduler thread
  // goes through the partitions in turn, each write synchronous
  // (ReplicaManager.maybeShrinkIsr; ZkIsrManager.submit), so a write that
  // waits for ZooKeeper holds up the rest of the pass, and the next pass
  // waits for this one (scheduleAtFixedRate).
  void continue_shrink_pass();
  std::deque<TopicPartition> shrink_pass_;
  bool shrink_pass_active_ = false;
  bool shrink_front_started_ = false;  // the front partition's shrink went out
  void write_isr(Partition& p, std::vector<BrokerId> isr, const char* why);
  // One ISR change on its way to ZooKeeper (write_isr).
  struct IsrWrite {
    TopicPartition tp;
    znodes::LeaderAndIsr state;  // what is written
    int32_t expected_version = 0;
    const char* why = "";
    std::string old_isr;  // for the trace
  };
  void send_isr_write(std::shared_ptr<const IsrWrite> w);
  void create_isr_change_notification(const std::string& data);
  void check_isr_write(std::shared_ptr<const IsrWrite> w);
  void finish_isr_write(const IsrWrite& w, zk::Error e, int32_t version);
  void apply_isr_write(const IsrWrite& w, zk::Error e, int32_t version);
  void propagate_isr_changes();

  // --- AlterIsr (ReplicationRules::isr_changes_through_controller) ----------
  // One proposed ISR change (Kafka's AlterIsrItem): at most one a partition,
  // kept until the controller answers it or a LeaderAndIsr replaces it
  // (DefaultAlterIsrManager.unsentIsrUpdates).
  struct AlterIsrItem {
    uint64_t proposal = 0;  // Partition::isr_proposal when it was made
    AlterIsrPartition change;
    const char* why = "";
    std::string old_isr;  // for the trace
  };
  using AlterIsrItems = std::vector<AlterIsrItem>;
  void submit_alter_isr(Partition& p, std::vector<BrokerId> isr, const char* why);
  // A LeaderAndIsr replaced whatever change `p` had pending.
  void forget_isr_proposal(Partition& p);
  // Sends every unsent item in one request unless one is in flight.
  void maybe_send_alter_isr();
  // Sends `body` on `channel` to the controller the metadata cache names,
  // again after a lost connection, a timeout or NOT_CONTROLLER, until a
  // controller answers it or `deadline` passes (BrokerToControllerChannel-
  // Manager: the AlterIsr channel's retryTimeoutMs is Long.MaxValue, the
  // forwarding channel's request.timeout.ms).
  void send_to_controller(NetworkClient& channel, std::shared_ptr<const Request> body, sim::Time deadline,
                          std::function<void(const Response&)> answered, std::function<void()> timed_out);
  void on_alter_isr_response(const AlterIsrResponse& r, const AlterIsrItems& items);
  void apply_alter_isr(const AlterIsrItem& item, const AlterIsrPartitionResponse& r);
  std::map<TopicPartition, AlterIsrItem> alter_isr_unsent_;
  bool alter_isr_in_flight_ = false;
  uint64_t next_isr_proposal_ = 1;
  std::unique_ptr<NetworkClient> alter_isr_client_;

  void checkpoint_high_watermarks();
  void retention_check();
  void flush_check();
  void schedule_tasks();

  // Delayed produce (acks=all) and delayed fetch, Kafka's purgatories.
  struct DelayedProduce {
    uint64_t id = 0;
    std::vector<ProducePartitionResponse> results;
    std::map<TopicPartition, Offset> required;  // HW that completes each partition
    Reply reply;
    sim::TimerId timer;
  };
  // The partitions a fetch names, in its order (null: not here), looked up
  // once and again only after the partition map changed.
  struct FetchTargets {
    boost::container::small_vector<const Partition*, 4> partitions;
    uint64_t generation = UINT64_MAX;  // partitions_generation_ when looked up
    // The segment each fetch offset was in when the fetch came (its base;
    // -1 for a partition in error): Kafka keeps the offset's metadata from
    // the first read, so a fetch parked at a segment's end is on the older
    // segment once the log rolls.
    boost::container::small_vector<Offset, 4> fetch_segments;
  };
  struct DelayedFetch {
    uint64_t id = 0;
    FetchRequest request;
    FetchTargets targets;
    Reply reply;
    sim::Time deadline;  // max_wait_ms after it came
  };
  void try_complete_produce(uint64_t id, bool timed_out);
  // The response to `r` now, or nullopt if it should wait (not `final`, no
  // error and too few bytes: see fetch_satisfied). `waiting`: `r` waits in
  // the purgatory (DelayedFetch), rather than having just come.
  std::optional<FetchResponse> read_for_fetch(const FetchRequest& r, bool final, bool waiting,
                                              FetchTargets& t);
  // Whether read_for_fetch would answer `r` now (without building the
  // answer): a partition in error, or enough bytes. A fetch that has just
  // come is answered when the bytes it reads reach min_bytes
  // (ReplicaManager.fetchMessages); otherwise, and for a waiting one, when
  // the bytes there are to read, each partition's capped at its own limit
  // but not at the answer's, reach min_bytes, or a partition's fetch offset
  // and end are in different segments (DelayedFetch.tryComplete, which
  // tryCompleteElseWatch runs at once for a new fetch).
  bool fetch_satisfied(const FetchRequest& r, bool waiting, FetchTargets& t) const;
  const FetchTargets& targets(const FetchRequest& r, FetchTargets& t) const;
  // Why `fp` cannot be read from `p` (its partition here, or null), or none.
  ErrorCode fetch_error(const FetchPartition& fp, const Partition* p) const;
  // Where a follower's fetch with a last fetched epoch finds its log parting
  // from this leader's: the diverging epoch and its end offset (KAFKA-10554).
  std::optional<std::pair<LeaderEpoch, Offset>> diverging_epoch(const FetchPartition& fp, const Partition& p) const;
  void try_complete_fetch(uint64_t id, bool timed_out);
  // The waiting fetches' max waits: one timer, due at the earliest deadline
  // (sim::DeadlineTimer).
  void arm_fetch_timer(sim::Time deadline);
  void expire_fetches();

  // --- replica fetchers --------------------------------------------------------------
  // One fetcher thread per leader (AbstractFetcherThread). It sends one
  // request at a time; between them it may be blocked in an append's
  // synchronous flush, or asleep (partitionMapCond.await, which a partition
  // added or removed wakes early). A partition in error waits
  // replica.fetch.backoff.ms on its own (delayPartitions) while the others
  // are fetched.
  struct FetcherState {
    Endpoint leader_endpoint;
    bool in_flight = false;
    bool flushing = false;
    bool sleeping = false;
    sim::TimerId sleep_timer;
    // Delayed when the sleep ends: the partitions of a request that failed
    // (2.2 to 3.0 sleep first, then delay them: about twice the backoff).
    std::vector<TopicPartition> delay_after_sleep;
    // The partitions fetched, in the order a request names them. One goes to
    // the back when it is added, delayed, handled out of range or given data
    // (PartitionStates.updateAndMoveToEnd), so that when the answer's limit
    // binds, the partitions served first take turns.
    std::vector<TopicPartition> partitions;
    bool fetches(const TopicPartition& tp) const;
    void remove(const TopicPartition& tp);
    // To the back of the order, if fetched.
    void move_to_back(const TopicPartition& tp);
    std::map<TopicPartition, sim::Time> delayed_until;
    // The partitions of the request in flight (or last sent), with the
    // leader epoch each was asked in, in the request's order.
    std::vector<std::pair<TopicPartition, LeaderEpoch>> asked;
  };
  void add_to_fetcher(const TopicPartition& tp, BrokerId leader, const Endpoint& endpoint);
  void run_fetcher(BrokerId leader);
  // A partition in error is left out of requests for replica.fetch.backoff.ms
  // (unless it is delayed already).
  void delay_partition(FetcherState& f, const TopicPartition& tp);
  // The leader answered with an error for `tp`: traced, then the partition
  // is delayed, or (fenced) left out until the next LeaderAndIsr.
  void on_partition_fetch_error(BrokerId leader, const TopicPartition& tp, ErrorCode error);
  // A request to the leader failed: every partition it had is delayed, after
  // a sleep in the profiles before Kafka 3.1 (KAFKA-8529).
  void on_fetcher_request_failed(BrokerId leader);
  void fetcher_sleep(BrokerId leader);
  // Whether the answer's i-th partition, `tp`, was asked in epoch `current`.
  bool asked_in_current_epoch(const FetcherState& f, size_t i, const TopicPartition& tp,
                              LeaderEpoch current) const;
  void wake_fetcher(BrokerId leader);
  // Returns when the appends' synchronous flushes complete.
  sim::Time on_fetch_response(BrokerId leader, const FetchResponse& r);
  void on_epoch_response(BrokerId leader, const OffsetsForLeaderEpochResponse& r);
  // Cuts `p` where the leader says epoch `epoch` ends (an OffsetsForLeaderEpoch
  // answer, or a Fetch answer's diverging epoch); false when this log does
  // not know that epoch and the cut is a first step only.
  bool truncate_to_epoch_end(Partition& p, LeaderEpoch epoch, Offset end, const char* why);
  // A follower takes the high watermark and log start of the leader's answer.
  void take_leader_offsets(Partition& p, const FetchPartitionResponse& pr);
  void truncate_to_high_watermark(Partition& p);
  void truncate(Partition& p, Offset to, const char* why);

  // --- controlled shutdown -----------------------------------------------------------
  void controlled_shutdown(int32_t attempt);
  void finish_shutdown();
  // The controller the last attempt found (prevController).
  std::optional<std::pair<BrokerId, Endpoint>> shutdown_controller_;
  // The controller as ZooKeeper names it, and its inter-broker endpoint
  // (StartupRules::controlled_shutdown_reads_zookeeper); kNoBroker or no
  // endpoint when there is none.
  void find_controller_in_zookeeper(std::function<void(BrokerId, std::optional<Endpoint>)> found);
  void find_broker_in_zookeeper(BrokerId id, std::function<void(BrokerId, std::optional<Endpoint>)> found);

  BrokerConfig config_;
  std::string chroot_;
  std::vector<std::string> zk_servers_;
  std::unique_ptr<zk::Client> zk_;
  std::vector<std::unique_ptr<zk::Client>> old_zk_;  // expired sessions, kept for late callbacks
  std::vector<std::unique_ptr<ZkListener>> zk_listeners_;
  // Self-rescheduling closures kept alive for the life of the process.
  std::shared_ptr<void> tasks_;
  std::vector<std::shared_ptr<std::function<void(std::string)>>> fetches_;
  uint64_t zk_generation_ = 0;
  bool zk_ready_ = false;
  // The first session connected: zookeeper.connection.timeout.ms bounds only
  // that first wait (initZkClient); a session after an expiry waits as long
  // as it takes.
  bool zk_connected_once_ = false;
  bool listening_ = false;      // the listeners are bound (start_listening): StartupRules say when
  bool serving_requests_ = false;  // startup is done: requests are read (start_serving_requests)
  // The host's address when this process first registered (register_broker).
  std::optional<std::string> advertised_address_;
  bool registered_ = false;
  int64_t broker_epoch_ = -1;
  bool shutting_down_ = false;
  bool fetchers_stopped_ = false;  // finish_shutdown: the replica fetchers are stopped

  std::unique_ptr<Controller> controller_;
  std::vector<std::unique_ptr<Controller>> old_controllers_;
  ControllerEpoch controller_epoch_{-1};

  std::unique_ptr<GroupCoordinator> group_coordinator_;

  MetadataCache metadata_;
  std::map<TopicPartition, std::unique_ptr<Partition>> partitions_;
  uint64_t partitions_generation_ = 0;  // raised when a partition is created or deleted
  // The last two lookups in partitions_ (a hit or a miss), valid while the
  // generation holds: nearly every request names one of a few partitions.
  struct CachedLookup {
    uint64_t generation = UINT64_MAX;
    TopicPartition tp;
    Partition* partition = nullptr;
  };
  mutable std::array<CachedLookup, 2> lookups_;
  mutable size_t next_lookup_ = 0;
  Partition* lookup(const TopicPartition& tp) const;
  uint64_t roles_version_ = 0;          // raised by every make_leader / make_follower
  std::map<std::string, std::map<std::string, std::string>> topic_configs_;
  std::map<TopicPartition, std::unique_ptr<PartitionLog>> loaded_logs_;  // found on disk at start
  std::map<std::string, Offset> checkpointed_hw_;  // "topic-p" -> hw, from the checkpoint files

  // The listener's connections, looked up for every request and answer. Only
  // on_accept and on_closed add or remove one, each an event of its own, so
  // a ServerConnection& stays valid within one event, never longer: a reply
  // that comes in a later event (a delayed produce or fetch) looks its
  // connection up again.
  sim::FlatMap<sim::SocketId, ServerConnection> connections_;
  std::map<uint64_t, DelayedProduce> delayed_produces_;
  // Ascending id: the order they came. Held by pointer: completing one
  // erases it from the middle, and a pointer moves for less than a request.
  std::vector<std::unique_ptr<DelayedFetch>> delayed_fetches_;
  sim::DeadlineTimer fetch_timer_;  // the waiting fetches' max waits
  uint64_t next_delayed_id_ = 1;

  std::unique_ptr<NetworkClient> fetch_client_;
  std::unique_ptr<NetworkClient> shutdown_client_;
  std::map<BrokerId, FetcherState> fetchers_;
  std::map<TopicPartition, BrokerId> fetching_from_;

  std::set<TopicPartition> isr_changes_;  // not yet propagated
  int64_t last_isr_change_ms_ = 0;
  int64_t last_isr_propagation_ms_ = 0;

  // Producer ids (StartupRules::producer_id_block_at_startup): the block
  // this broker claimed from /latest_producer_id_block (ZkProducerIdManager).
  int64_t next_producer_id_ = 0;
  int64_t producer_id_block_end_ = -1;  // inclusive; -1: no block
  // InitProducerId requests waiting for a block (either manager).
  std::deque<Reply> producer_id_waiters_;
  bool claiming_block_ = false;
  void claim_producer_id_block();

  // Or from the controller (RPCProducerIdManager, 3.0+ on protocol
  // 3.0-IV0): the current block, the next id (3.1: -1 before the first
  // InitProducerId), and the next block or, up to 3.5, why asking for it
  // failed (the queue of one a waiting request polls).
  ProducerIdRange producer_id_block_;
  int64_t rpc_next_producer_id_ = -1;
  std::optional<AllocateProducerIdsResponse> next_producer_id_block_;
  bool producer_id_request_in_flight_ = false;
  sim::Time producer_id_backoff_until_ = sim::Time::zero();  // 3.6+: after a refusal
  bool producer_id_waiting_ = false;                         // the head waiter polls
  sim::TimerId producer_id_wait_timer_;
  std::unique_ptr<NetworkClient> forwarding_client_;
  void serve_producer_id_waiters();  // StartupRules::producer_id_waits_for_block
  void take_next_producer_id_block();   // for the head waiter, or its error
  void adopt_next_producer_id_block();  // the next block becomes the current one
  void answer_producer_id_waiter(const InitProducerIdResponse& r);
  void wake_producer_id_waiter();
  InitProducerIdResponse producer_id_at_once();  // from 3.6
  void maybe_request_producer_id_block();
  void on_producer_id_block(const AllocateProducerIdsResponse& r);
  void on_producer_id_block_timeout();
  // After the registration: requests are read once startup is done, which
  // in the 2.2 and 2.8 profiles waits for a first producer id block
  // (StartupRules::producer_id_block_at_startup).
  void finish_startup();
  bool serve_after_block_ = false;  // finish_startup waits for the block being claimed
};

// A factory for World::add_process.
sim::ProcessFactory broker_factory(BrokerConfig config);

}  // namespace kafka
