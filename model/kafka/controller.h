// The Kafka controller in ZooKeeper mode (kafka.controller.KafkaController,
// 2.x/3.x): one broker at a time, elected through the /controller ephemeral
// znode, holding controller epoch N (the /controller_epoch it bumped when it
// won).
//
// Like Kafka's ControllerEventManager it processes one event at a time from
// its own queue: startup (failover), broker change, topic change, ISR change
// notification, controlled shutdown, preferred-leader rebalance. An event may
// wait on ZooKeeper; the next one starts only when it has finished.
//
// Every ZooKeeper write it makes is a multi that first checks the version of
// /controller_epoch it created, so a controller that has been replaced (a
// zombie back from a long pause) fails its writes and resigns; every request
// it sends carries its epoch, and brokers that have seen a newer one ignore it.
//
// Leader election follows kafka.controller.Election:
//   offline:             the first replica in assignment order that is
//                        online (live and not shutting down,
//                        ControllerContext.isReplicaOnline) and in the ISR;
//                        failing that, if unclean election is enabled for the
//                        topic, the first online replica (new ISR: just it);
//                        otherwise none: the partition stays offline (leader
//                        -1). A partition whose leader is not online (one led
//                        by a broker still shutting down included) is marked
//                        offline, and a broker failure or startup elects every
//                        partition marked offline, until one election serves it;
//   controlled shutdown: the first live ISR member not shutting down; the new
//                        ISR drops the brokers shutting down;
//   preferred:           the first replica in assignment order, if live and
//                        in the ISR.
// Removing a replica from the ISR (it went offline) keeps the last ISR member
// — an ISR is never empty, so the last in-sync broker is known — and sets
// leader -1 if it led (KafkaController.doRemoveReplicasFromIsr /
// ReplicaStateMachine's OfflineReplica transition).
// Every change bumps leader_epoch by one.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "model/kafka/config.h"
#include "model/kafka/network_client.h"
#include "model/kafka/znodes.h"
#include "model/zk/client.h"

namespace kafka {

class Controller {
 public:
  struct Environment {
    sim::ProcessContext* ctx = nullptr;
    zk::Client* zk = nullptr;
    std::string chroot;
    const BrokerConfig* config = nullptr;
    // Asks the owning broker to drop this controller (it lost /controller,
    // or a fenced write showed another controller has taken over).
    std::function<void(const std::string& why)> resign;
  };

  Controller(Environment env, ControllerEpoch epoch, int32_t epoch_zk_version);
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Queues the failover: load the cluster state and act on it.
  void start();
  // How the controller stops, which decides what the requests it holds are
  // told. Kafka clears its event queue when the session expires or the
  // broker shuts down (ControllerEventManager.clearAndPut, preempting each
  // queued event); when it resigns otherwise (a fenced write, another
  // controller in /controller) the queued events still run, as an inactive
  // controller's.
  enum class StopKind { resigned, queue_cleared };
  // Stops acting: nothing more is sent or written.
  void stop(StopKind how = StopKind::resigned);
  bool active() const { return active_; }

  // A watch fired for one of the controller's paths (chroot removed).
  // Returns true when the path was one of its.
  bool on_watch(const zk::WatchEvent& event);
  void controlled_shutdown(BrokerId id, int64_t broker_epoch,
                           std::function<void(ControlledShutdownResponse)> reply);
  // A leader's proposed ISR changes (AlterIsr, ReplicationRules::
  // isr_changes_through_controller), queued as a controller event.
  void alter_isr(AlterIsrRequest request, std::function<void(AlterIsrResponse)> reply);
  // A broker's request for a block of producer ids (KIP-730), queued as a
  // controller event that claims the block from ZooKeeper.
  void allocate_producer_ids(AllocateProducerIdsRequest request,
                             std::function<void(AllocateProducerIdsResponse)> reply);

  NetworkClient& channel() { return channel_; }

  // --- inspection -------------------------------------------------------------
  ControllerEpoch epoch() const { return epoch_; }
  const std::map<BrokerId, std::pair<Endpoint, int64_t>>& live_brokers() const { return live_; }
  // Requests to `b` waiting to be sent again after a failed send (tests).
  size_t held_requests(BrokerId b) const {
    auto it = held_.find(b);
    return it == held_.end() ? 0 : it->second.size();
  }
  struct PartitionInfo {
    std::vector<BrokerId> replicas;
    std::optional<znodes::LeaderAndIsr> state;  // none while the partition is new
    int32_t zk_version = -1;
  };
  const std::map<TopicPartition, PartitionInfo>& partitions() const { return partitions_; }
  // Raised whenever partitions() may have changed (kafka::Invariants checks
  // an unchanged view only once).
  uint64_t partitions_version() const { return partitions_version_; }

 private:
  using Done = std::function<void()>;
  using Step = std::function<void(Done)>;
  // Answers an event's requester when the controller stops before the event
  // has answered (a request still queued, or one whose ZooKeeper calls die
  // with the controller): Kafka answers such a ControlledShutdown or AlterIsr
  // rather than leave the broker to its request timeout (doControlledShutdown
  // and processAlterIsr check isActive; a write fenced by a newer controller
  // fails the event and its callback).
  enum class AbortCase {
    running_fenced,   // the event being handled; its writes fail as fenced
                      // (ControllerMovedException)
    running_expired,  // the event being handled; its writes fail with the
                      // session (SESSIONEXPIRED: not a ControllerMovedException)
    queued,           // run later by an inactive controller (isActive false)
    preempted,        // dropped with the queue (the event's preempt())
  };
  using Abort = std::function<void(AbortCase)>;
  enum class ElectionKind { offline, controlled_shutdown, preferred };
  struct Batch {
    std::map<BrokerId, std::vector<PartitionState>> leader_and_isr;
    std::set<TopicPartition> metadata;  // partitions for UpdateMetadata
    bool metadata_to_all = false;       // send UpdateMetadata even if no partition changed
    std::map<BrokerId, std::vector<TopicPartition>> stop_replica;
  };
  using BatchPtr = std::shared_ptr<Batch>;

  void enqueue(std::string name, Step step, Abort abort = nullptr);
  void process_next();

  std::string path(const std::string& p) const { return env_.chroot + p; }
  bool alive(BrokerId b) const { return live_.count(b) != 0; }
  // Alive and not shutting down (ControllerContext.isReplicaOnline).
  bool online(BrokerId b) const { return alive(b) && shutting_down_.count(b) == 0; }
  PartitionState state_of(const TopicPartition& tp, bool is_new = false) const;
  bool unclean_allowed(const std::string& topic) const;

  // --- steps ----------------------------------------------------------------------
  void failover(Done done);
  void load_brokers(std::function<void(std::map<BrokerId, std::pair<Endpoint, int64_t>>)> then);
  void load_topics(const std::vector<std::string>& topics, Done done);
  void load_states(std::vector<TopicPartition> tps, Done done);
  void on_broker_change(Done done);
  void on_broker_startup(const std::vector<BrokerId>& brokers, const BatchPtr& batch, Done done);
  void on_broker_failure(const std::vector<BrokerId>& brokers, const BatchPtr& batch, Done done);
  void on_topic_change(Done done);
  void on_isr_change(Done done);
  void auto_rebalance(Done done);
  void do_controlled_shutdown(BrokerId id, std::function<void(ControlledShutdownResponse)> reply,
                              Done done);
  void do_alter_isr(const AlterIsrRequest& request, std::function<void(AlterIsrResponse)> reply,
                    Done done);
  void claim_producer_ids(BrokerId broker, std::function<void(AllocateProducerIdsResponse)> reply, Done done);
  // The partitions (with more than one replica) `id` leads, as a
  // ControlledShutdown answer lists them.
  std::vector<TopicPartition> still_led_by(BrokerId id) const;

  // Creates the state znodes of new partitions and makes them online.
  void create_partitions(std::vector<TopicPartition> tps, const BatchPtr& batch, Done done);
  // Elects leaders for `tps` and writes the results, retrying a partition
  // whose state changed under us.
  void elect(std::vector<TopicPartition> tps, ElectionKind kind, const BatchPtr& batch, Done done);
  // Removes `replica` from the ISR of `tps` (OfflineReplica).
  void remove_from_isr(std::vector<TopicPartition> tps, BrokerId replica, const BatchPtr& batch, Done done);
  // Computes a partition's new state; nullopt: leave it as it is.
  using Decide = std::function<std::optional<znodes::LeaderAndIsr>(const TopicPartition&,
                                                                    const PartitionInfo&)>;
  // Reads the partitions' states from ZooKeeper, then decides and writes
  // (write_states): the controller's copy can be stale, since a leader
  // changes the ISR itself and the controller hears of it late or never
  // (an ISR change notification), so Kafka reads before it decides
  // (getTopicPartitionStatesRaw in ZkPartitionStateMachine.
  // doElectLeaderForPartitions and ZkReplicaStateMachine.
  // doRemoveReplicasFromIsr, 2.2 to 3.9).
  void update_states(std::vector<TopicPartition> tps, Decide decide, const BatchPtr& batch, Done done);
  void write_states(std::vector<TopicPartition> tps, Decide decide, const BatchPtr& batch, Done done,
                    int attempt);
  void add_leader_and_isr(const BatchPtr& batch, const TopicPartition& tp, bool is_new = false,
                          BrokerId except = kNoBroker);
  // UpdateMetadata with these partition states and the live brokers, to
  // each of `to` (send_request skips a broker not alive).
  void send_update_metadata(const std::vector<BrokerId>& to, const std::vector<PartitionState>& states);
  void send(const Batch& batch);
  void send_request(BrokerId to, Request request);
  // Puts a request on the broker's channel; a failed one is held (below).
  void transmit(BrokerId to, Request request);
  // Sends again, in order, what is held for `to`.
  void release_held(BrokerId to);
  void schedule_rebalance(sim::Duration delay);
  // A fenced write failed: another controller has taken over.
  void moved(const std::string& why);
  std::vector<LiveBroker> live_list() const;
  void trace_state(const TopicPartition& tp, const char* why);
  // ZooKeeper calls that retry on CONNECTIONLOSS while this controller is
  // active (Kafka's ZooKeeperClient resends once reconnected).
  void zk_get_data(const std::string& p, bool watch, zk::Client::DataDone done);
  void zk_get_children(const std::string& p, bool watch, zk::Client::ChildrenDone done);
  void zk_multi(std::vector<zk::WriteOp> ops, zk::Client::MultiDone done);
  void zk_create(const std::string& p, const std::string& data, zk::Client::CreateDone done);
  void zk_remove(const std::string& p, zk::Client::Done done);

  Environment env_;
  ControllerEpoch epoch_;
  int32_t epoch_zk_version_;
  bool active_ = true;
  bool busy_ = false;
  struct Event {
    std::string name;
    Step step;
    Abort abort;
  };
  std::deque<Event> queue_;
  Abort current_abort_;  // the running event's, until it calls Done
  NetworkClient channel_;

  std::map<BrokerId, std::pair<Endpoint, int64_t>> live_;  // endpoint, broker epoch
  std::set<BrokerId> shutting_down_;
  std::set<std::string> topics_;
  std::map<std::string, std::map<std::string, std::string>> topic_configs_;
  std::map<TopicPartition, PartitionInfo> partitions_;
  // Partitions in Kafka's OfflinePartition state: their leader was found
  // gone (at failover, or when a broker died) and no election has given them
  // one since. They leave it only through an election, so one whose last
  // leader comes back is elected again — the same broker, a new leader epoch
  // (PartitionStateMachine.triggerOnlinePartitionStateChange elects every
  // partition in OfflinePartition or NewPartition, whoever its stored leader).
  std::set<TopicPartition> offline_;
  // The brokers one look at /brokers/ids found gone, while that look is
  // handled: Kafka removes their channels first, so no step sends to them.
  std::set<BrokerId> departed_;
  // Per broker, the requests whose send failed and everything sent to that
  // broker since, in order, until they go again after kResendDelay: Kafka's
  // RequestSendThread retries the request at the head of the broker's queue
  // and sends nothing behind it meanwhile, so requests never overtake one
  // another (an UpdateMetadata that did would leave older states in the
  // broker's cache).
  std::map<BrokerId, std::vector<Request>> held_;
  uint64_t partitions_version_ = 0;
  // Every access to partitions_ that may insert or write goes through here.
  PartitionInfo& change_partition(const TopicPartition& tp) {
    ++partitions_version_;
    return partitions_[tp];
  }
  sim::TimerId rebalance_timer_;
};

}  // namespace kafka
