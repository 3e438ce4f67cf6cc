#include "model/kafka/broker.h"

#include <algorithm>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "model/kafka/assignment.h"
#include "model/kafka/producer_ids.h"
#include "model/kafka/znodes.h"
#include "sim/assert.h"

namespace kafka {

namespace {

bool contains(const std::vector<BrokerId>& v, BrokerId b) {
  return std::find(v.begin(), v.end(), b) != v.end();
}

std::string join_ids(const std::vector<BrokerId>& v) {
  std::string s;
  for (BrokerId b : v) s += (s.empty() ? "" : ",") + std::to_string(b);
  return s;
}

const std::string kOffsetsTopic = "__consumer_offsets";
const sim::Duration kZkRetryDelay = sim::Duration::millis(200);
// The channels to the controller (AlterIsr, forwarding): their NetworkClient's
// reconnect.backoff.ms (50), also the wait before an AlterIsr the controller
// refused is built again; and how often a channel looks for a controller in
// the metadata cache while it knows none (BrokerToControllerChannelManager,
// DefaultAlterIsrManager in 2.8).
const sim::Duration kControllerChannelReconnectBackoff = sim::Duration::millis(50);
const sim::Duration kControllerChannelNoControllerBackoff = sim::Duration::millis(100);
// ReplicaManager: ISR changes are propagated every 2.5 s once none has
// happened for 5 s, or at least every 60 s.
const sim::Duration kIsrPropagationInterval = sim::Duration::millis(2500);
constexpr int64_t kIsrChangeQuietMs = 5000;
constexpr int64_t kIsrPropagationMaxDelayMs = 60000;
// LogManager.InitialTaskDelayMs.
const sim::Duration kInitialTaskDelay = sim::Duration::seconds(30);
// RPCProducerIdManager.RetryBackoffMs (3.6+): after the controller refused a block.
const sim::Duration kProducerIdRetryBackoff = sim::Duration::millis(50);

bool valid_topic_name(const std::string& t) {
  if (t.empty() || t.size() > 249 || t == "." || t == "..") return false;
  return std::all_of(t.begin(), t.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  });
}

}  // namespace

// Forwards one ZooKeeper session's events, so that a late event from an
// expired session is told apart from the current one's.
class Broker::ZkListener final : public zk::ClientListener {
 public:
  ZkListener(Broker& b, uint64_t generation) : broker_(b), generation_(generation) {}
  void on_session_state(zk::SessionState s) override { broker_.on_session_state(generation_, s); }
  void on_watch(const zk::WatchEvent& e) override { broker_.on_watch(generation_, e); }

 private:
  Broker& broker_;
  uint64_t generation_;
};

Broker::Broker(BrokerConfig config) : config_(std::move(config)) {}
Broker::~Broker() = default;

sim::ProcessFactory broker_factory(BrokerConfig config) {
  return [config] { return std::make_unique<Broker>(config); };
}

// --- start ------------------------------------------------------------------------------

void Broker::on_start() {
  chroot_ = zk::parse_connect_string(config_.zookeeper_connect, "broker", "zookeeper.connect").chroot;
  fetch_client_ = std::make_unique<NetworkClient>(
      ctx(), NetworkClient::Options{config_.replica_socket_timeout_ms, 1});
  shutdown_client_ = std::make_unique<NetworkClient>(
      ctx(), NetworkClient::Options{config_.request_timeout_ms, 1});
  // The AlterIsr channel gives each request controller.socket.timeout.ms
  // (BrokerToControllerRequestThread is an InterBrokerSendThread built with
  // config.controllerSocketTimeoutMs; 3.9: the smaller of it and the retry
  // timeout, which is unbounded here).
  alter_isr_client_ = std::make_unique<NetworkClient>(
      ctx(), NetworkClient::Options{config_.controller_socket_timeout_ms, 1});
  // The forwarding channel (AllocateProducerIds), a channel of its own
  // (KafkaServer's clientToControllerChannelManager), its retry timeout
  // request.timeout.ms.
  forwarding_client_ = std::make_unique<NetworkClient>(
      ctx(), NetworkClient::Options{config_.startup_rules.controller_request_timeout_capped
                                        ? std::min(config_.controller_socket_timeout_ms, config_.request_timeout_ms)
                                        : config_.controller_socket_timeout_ms,
                                    1});
  ctx().trace("broker_starting", {{"broker", config_.broker_id},
                                  {"version", to_string(config_.version)}});
  load_logs();
  GroupCoordinator::Environment groups;
  groups.ctx = &ctx();
  groups.config = &config_;
  groups.find_partition = [this](const TopicPartition& tp) { return find_partition(tp); };
  groups.append = [this](const TopicPartition& tp, std::vector<Record> records) {
    return append_to_offsets_partition(tp, std::move(records));
  };
  group_coordinator_ = std::make_unique<GroupCoordinator>(std::move(groups));
  new_zk_session();
  // KafkaServer.startup begins with initZkClient, whose ZooKeeperClient waits
  // up to zookeeper.connection.timeout.ms (default: the session timeout) for
  // a connection and otherwise throws ZooKeeperClientTimeoutException: a
  // fatal startup error, and the process exits. The listeners are bound only
  // after that (SocketServer.startup comes later).
  const int32_t timeout_ms = config_.zookeeper_connection_timeout_ms > 0 ? config_.zookeeper_connection_timeout_ms
                                                                        : config_.zookeeper_session_timeout_ms;
  ctx().after(sim::Duration::millis(timeout_ms), [this, timeout_ms] {
    if (zk_connected_once_ || shutting_down_) return;
    ctx().trace("zk_connect_timeout", {{"broker", config_.broker_id}, {"timeout_ms", timeout_ms}});
    shutting_down_ = true;
    if (zk_) zk_->close();
    ctx().exit();
  });
  schedule_tasks();
}

void Broker::start_serving_requests() {
  // The end of KafkaServer.startup (the rest of it, after the registration,
  // starts the controller, coordinators and request handlers without
  // waiting on anyone): requests that waited on connections made before are
  // read now, in order.
  if (serving_requests_) return;
  serving_requests_ = true;
  start_listening();
  std::vector<sim::SocketId> waiting;
  for (const auto& [socket, c] : connections_) {
    if (!c.pending.empty()) waiting.push_back(socket);
  }
  for (const sim::SocketId socket : waiting) dispatch(socket);
}

void Broker::finish_startup() {
  if (serving_requests_) return;
  if (config_.startup_rules.producer_id_block_at_startup && producer_id_block_end_ < 0) {
    // The first block, claimed once per process; a registration again
    // (a new session) while it is being claimed waits for the same claim.
    if (!serve_after_block_) {
      serve_after_block_ = true;
      claim_producer_id_block();
    }
    return;
  }
  start_serving_requests();
}

void Broker::start_listening() {
  if (listening_) return;
  listening_ = true;
  std::set<uint16_t> ports;
  for (const Listener& l : config_.listeners) ports.insert(l.port);
  for (uint16_t port : ports) ctx().listen(port);
}

void Broker::load_logs() {
  for (const std::string& dir : config_.log_dirs) {
    const std::string prefix = dir + "/";
    // LogManager: the marker says the last stop was clean; it is removed at
    // start. (The model reads every segment back either way.)
    const std::string marker = prefix + ".kafka_cleanshutdown";
    const bool clean = ctx().disk().exists(marker);
    if (clean) ctx().disk().remove(marker);
    ctx().trace("log_dir_loading", {{"dir", dir}, {"clean_shutdown", clean}});
    std::set<std::string> partition_dirs;
    for (const std::string& path : ctx().disk().list(prefix)) {
      const std::string rest = path.substr(prefix.size());
      const size_t slash = rest.find('/');
      if (slash != std::string::npos) partition_dirs.insert(rest.substr(0, slash));
    }
    for (const std::string& name : partition_dirs) {
      const size_t dash = name.rfind('-');
      if (dash == std::string::npos || dash == 0 || dash + 1 == name.size()) continue;
      const std::string digits = name.substr(dash + 1);
      if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          digits.size() > 9) {
        continue;
      }
      TopicPartition tp{name.substr(0, dash), static_cast<int32_t>(std::stol(digits))};
      auto log = std::make_unique<PartitionLog>(ctx(), prefix + name, config_.log);
      const PartitionLog::LoadResult r = log->load(config_.startup_rules.load_cuts_epochs_at_log_start);
      ctx().trace("log_loaded", {{"partition", to_string(tp)},
                                 {"log_start", log->log_start().value},
                                 {"log_end", log->log_end().value},
                                 {"truncated", r.truncated_records}});
      loaded_logs_[tp] = std::move(log);
    }
    // replication-offset-checkpoint: version, count, then "topic partition offset".
    if (const sim::File* f = ctx().disk().find(prefix + "replication-offset-checkpoint")) {
      const sim::RecordRange records = f->records();
      for (size_t i = 2; i < records.size(); ++i) {
        if (!records[i].intact) break;
        const std::string line(records[i].data);
        const size_t a = line.find(' ');
        const size_t b = line.rfind(' ');
        if (a == std::string::npos || a == b) continue;
        try {
          checkpointed_hw_[line.substr(0, a) + "-" + line.substr(a + 1, b - a - 1)] =
              Offset{std::stoll(line.substr(b + 1))};
        } catch (const std::exception&) {
          continue;
        }
      }
    }
  }
}

void Broker::schedule_tasks() {
  // A periodic task; it keeps rescheduling itself for the life of the process.
  // KafkaScheduler runs its tasks at a fixed rate (scheduleAtFixedRate): a
  // run that comes late — the process was paused — leaves the schedule where
  // it was: the next run is due at the schedule's first point after the late
  // run, not a period after it ran. Java runs every run missed meanwhile at once,
  // back to back; here they are one run, as the tasks (ISR shrink, high
  // watermark checkpoint, retention, flush) would find nothing more to do.
  auto every = std::make_shared<std::function<void(sim::Time, sim::Duration, std::function<void()>)>>();
  *every = [this, weak = std::weak_ptr(every)](sim::Time due, sim::Duration period, std::function<void()> fn) {
    ctx().at(due, [this, weak, due, period, fn] {
      fn();
      const sim::Time now = ctx().now();
      const int64_t missed = (now - due).us() / period.us();
      const sim::Time next = due + sim::Duration::micros(period.us() * (missed + 1));
      if (auto self = weak.lock()) (*self)(next, period, fn);
    });
  };
  auto every_from_now = [this, every](sim::Duration first, sim::Duration period, std::function<void()> fn) {
    (*every)(ctx().now() + first, period, std::move(fn));
  };
  tasks_ = every;
  const sim::Duration isr_check = sim::Duration::millis(std::max<int64_t>(1, config_.replica_lag_time_max_ms / 2));
  every_from_now(isr_check, isr_check, [this] { shrink_isrs(); });
  every_from_now(kIsrPropagationInterval, kIsrPropagationInterval, [this] { propagate_isr_changes(); });
  const sim::Duration hw = sim::Duration::millis(config_.replica_high_watermark_checkpoint_interval_ms);
  every_from_now(hw, hw, [this] { checkpoint_high_watermarks(); });
  const sim::Duration retention = sim::Duration::millis(config_.log_retention_check_interval_ms);
  every_from_now(kInitialTaskDelay, retention, [this] { retention_check(); });
  // LogManager's flusher runs every log.flush.scheduler.interval.ms after a
  // first run at 30 s; with the default (Long.MAX_VALUE) that first run is
  // the only one, so flush.ms alone hardly flushes anything.
  const int64_t flush_ms = config_.log_flush_scheduler_interval_ms;
  if (flush_ms != INT64_MAX) {
    const sim::Duration flush = sim::Duration::millis(std::max<int64_t>(1, flush_ms));
    every_from_now(kInitialTaskDelay, flush, [this] { flush_check(); });
  } else {
    ctx().after(kInitialTaskDelay, [this] { flush_check(); });
  }
}

// --- ZooKeeper session, registration and controller election ------------------------

void Broker::new_zk_session() {
  if (zk_) old_zk_.push_back(std::move(zk_));
  ++zk_generation_;
  zk_ready_ = false;
  registered_ = false;
  zk_listeners_.push_back(std::make_unique<ZkListener>(*this, zk_generation_));
  zk::ClientConfig c{{config_.zookeeper_connect}, config_.zookeeper_session_timeout_ms};
  zk_ = std::make_unique<zk::Client>(ctx(), c, *zk_listeners_.back());
  zk_->start();
}

void Broker::on_session_state(uint64_t generation, zk::SessionState state) {
  if (generation != zk_generation_) return;
  ctx().trace("zk_session", {{"state", zk::to_string(state)}});
  switch (state) {
    case zk::SessionState::connected:
      if (!zk_ready_) {
        zk_ready_ = true;
        zk_connected_once_ = true;
        if (!config_.startup_rules.listen_at_end_of_startup) start_listening();
        create_top_level_paths(0);
      }
      break;
    case zk::SessionState::expired:
      // KafkaZkClient's session-expiration handlers: the controller resigns,
      // a new session is made, the broker registers again and re-elects.
      resign("zookeeper session expired", Controller::StopKind::queue_cleared);
      if (!shutting_down_) new_zk_session();
      break;
    case zk::SessionState::connecting:
    case zk::SessionState::closed:
      break;
  }
}

void Broker::create_top_level_paths(size_t i) {
  std::vector<std::string> paths;
  if (!chroot_.empty()) {
    // KafkaServer creates the chroot path itself if it is missing.
    for (size_t pos = chroot_.find('/', 1);; pos = chroot_.find('/', pos + 1)) {
      paths.push_back(chroot_.substr(0, pos));
      if (pos == std::string::npos) break;
    }
  }
  for (const std::string& p : znodes::top_level_paths()) paths.push_back(zk_path(p));
  if (i >= paths.size()) {
    register_broker();
    return;
  }
  const uint64_t generation = zk_generation_;
  zk_->create(paths[i], "", zk::CreateMode::persistent,
              [this, i, generation](zk::Error e, const std::string&) {
                if (generation != zk_generation_) return;
                if (e == zk::Error::connection_loss) {
                  ctx().after(kZkRetryDelay, [this, i, generation] {
                    if (generation == zk_generation_) create_top_level_paths(i);
                  });
                  return;
                }
                if (e == zk::Error::session_expired) return;
                create_top_level_paths(i + 1);
              });
}

void Broker::register_broker() {
  // KafkaServer.createBrokerInfo, once per process, just before the first
  // registration (after initZkClient has connected and created the top-level
  // paths): a listener without a host advertises this machine's own
  // (InetAddress.getLocalHost) as it is then; a retry of that registration
  // and every later one (after a session expiry,
  // processRegisterBrokerAndReelect) send the same BrokerInfo, even if the
  // host's address has changed since.
  if (!advertised_address_) advertised_address_ = ctx().address();
  znodes::BrokerRegistration reg;
  reg.id = config_.broker_id;
  reg.timestamp_ms = ctx().now().us() / 1000;
  for (const Listener& l : config_.advertised_listeners) {
    Endpoint e{l.name, l.host, l.port};
    if (e.host.empty() || e.host == "0.0.0.0") e.host = *advertised_address_;
    reg.endpoints.push_back(e);
  }
  const uint64_t generation = zk_generation_;
  const std::string path = zk_path(znodes::broker_path(config_.broker_id));
  zk_->create(path, znodes::encode_broker(reg), zk::CreateMode::ephemeral,
              [this, path, generation](zk::Error e, const std::string&) {
                if (generation != zk_generation_) return;
                if (e == zk::Error::connection_loss) {
                  ctx().after(kZkRetryDelay, [this, generation] {
                    if (generation == zk_generation_) register_broker();
                  });
                  return;
                }
                if (e != zk::Error::ok && e != zk::Error::node_exists) return;
                zk_->exists(path, false, [this, e, generation](zk::Error e2,
                                                               const std::optional<zk::Stat>& stat) {
                  if (generation != zk_generation_) return;
                  if (e2 != zk::Error::ok || !stat) {
                    ctx().after(kZkRetryDelay, [this, generation] {
                      if (generation == zk_generation_) register_broker();
                    });
                    return;
                  }
                  if (e == zk::Error::node_exists && stat->ephemeral_owner != zk_->session().value) {
                    // KafkaZkClient.CheckedEphemeral: the node belongs to an
                    // older session (a crash less than a session timeout
                    // ago): "Fatal error during KafkaServer startup".
                    ctx().trace("registration_failed",
                                {{"broker", config_.broker_id},
                                 {"owner", stat->ephemeral_owner},
                                 {"session", zk_->session().value}});
                    shutting_down_ = true;
                    ctx().exit();
                    return;
                  }
                  registered_ = true;
                  broker_epoch_ = static_cast<int64_t>(stat->czxid.value);
                  ctx().trace("broker_registered",
                              {{"broker", config_.broker_id}, {"broker_epoch", broker_epoch_}});
                  elect_controller();
                  finish_startup();
                });
              });
}

void Broker::elect_controller() {
  if (!registered_ || shutting_down_) return;
  const uint64_t generation = zk_generation_;
  // exists() with a watch: we hear when /controller appears or goes.
  zk_->exists(zk_path(znodes::kController), true,
              [this, generation](zk::Error e, const std::optional<zk::Stat>& stat) {
                if (generation != zk_generation_) return;
                if (e == zk::Error::connection_loss) {
                  ctx().after(kZkRetryDelay, [this, generation] {
                    if (generation == zk_generation_) elect_controller();
                  });
                  return;
                }
                if (e != zk::Error::ok && e != zk::Error::no_node) return;
                if (e == zk::Error::ok && stat) {
                  watch_controller();
                  return;
                }
                // Read the epoch, then create /controller and bump the epoch in
                // one multi (KafkaZkClient.registerControllerAndIncrementControllerEpoch).
                zk_->get_data(zk_path(znodes::kControllerEpoch), false,
                              [this, generation](zk::Error e, const std::string& data,
                                                 const std::optional<zk::Stat>& stat) {
                                if (generation != zk_generation_) return;
                                if (e == zk::Error::no_node) {
                                  zk_->create(zk_path(znodes::kControllerEpoch), "0",
                                              zk::CreateMode::persistent,
                                              [this, generation](zk::Error, const std::string&) {
                                                if (generation == zk_generation_) elect_controller();
                                              });
                                  return;
                                }
                                if (e != zk::Error::ok || !stat) {
                                  ctx().after(kZkRetryDelay, [this, generation] {
                                    if (generation == zk_generation_) elect_controller();
                                  });
                                  return;
                                }
                                const ControllerEpoch current =
                                    znodes::decode_controller_epoch(data).value_or(ControllerEpoch{0});
                                register_controller(ControllerEpoch{current.value + 1}, stat->version,
                                                    ctx().now().us() / 1000);
                              });
              });
}

void Broker::register_controller(ControllerEpoch next, int32_t epoch_version, int64_t timestamp_ms) {
  const uint64_t generation = zk_generation_;
  std::vector<zk::WriteOp> ops{
      zk::CreateOp{zk_path(znodes::kController), znodes::encode_controller(config_.broker_id, timestamp_ms),
                   zk::CreateMode::ephemeral},
      zk::SetDataOp{zk_path(znodes::kControllerEpoch), std::to_string(next.value), epoch_version}};
  zk_->multi(std::move(ops), [this, generation, next, epoch_version, timestamp_ms](
                                 zk::Error e, const std::vector<zk::Error>&) {
    if (generation != zk_generation_) return;
    switch (e) {
      case zk::Error::ok:
        become_controller(next, epoch_version + 1);
        return;
      case zk::Error::session_expired:
        return;
      case zk::Error::connection_loss:
        // The multi may have been applied with its answer lost. Kafka sends
        // the same request again once connected (KAFKA-6082, 2.1) and sorts
        // the outcome out below.
        if (retry_after_connection_loss(e)) register_controller(next, epoch_version, timestamp_ms);
        return;
      case zk::Error::node_exists:
      case zk::Error::bad_version:
        check_controller_and_epoch(next);
        return;
      default:
        elect_controller();
        return;
    }
  });
}

void Broker::check_controller_and_epoch(ControllerEpoch next) {
  // KafkaZkClient.registerControllerAndIncrementControllerEpoch's
  // checkControllerAndEpoch: /controller naming this broker with
  // /controller_epoch at the epoch it asked for means its own earlier try was
  // applied (no other election can write that epoch); anything else is
  // another broker's win (ControllerMovedException), and elect_controller
  // watches /controller again.
  // Both reads are sent again once connected if the connection is lost
  // (getControllerId and getControllerEpoch go through
  // retryRequestUntilConnected too).
  const uint64_t generation = zk_generation_;
  zk_->get_data(zk_path(znodes::kController), false,
                [this, generation, next](zk::Error e, const std::string& data, const std::optional<zk::Stat>&) {
                  if (generation != zk_generation_) return;
                  if (retry_after_connection_loss(e)) {
                    check_controller_and_epoch(next);
                    return;
                  }
                  if (e != zk::Error::ok ||
                      znodes::decode_controller(data).value_or(kNoBroker) != config_.broker_id) {
                    elect_controller();
                    return;
                  }
                  check_controller_epoch(next);
                });
}

void Broker::check_controller_epoch(ControllerEpoch next) {
  const uint64_t generation = zk_generation_;
  zk_->get_data(zk_path(znodes::kControllerEpoch), false,
                [this, generation, next](zk::Error e, const std::string& data, const std::optional<zk::Stat>& stat) {
                  if (generation != zk_generation_) return;
                  if (retry_after_connection_loss(e)) {
                    check_controller_epoch(next);
                    return;
                  }
                  if (e == zk::Error::ok && stat && znodes::decode_controller_epoch(data) == next) {
                    become_controller(next, stat->version);
                    return;
                  }
                  elect_controller();
                });
}

bool Broker::retry_after_connection_loss(zk::Error e) const {
  // KafkaZkClient.retryRequestUntilConnected: a request whose answer was lost
  // with the connection is sent again once connected (our client holds a
  // request made while disconnected until then). Not once the session is
  // closed.
  return e == zk::Error::connection_loss && zk_->state() != zk::SessionState::closed;
}

void Broker::watch_controller() {
  const uint64_t generation = zk_generation_;
  zk_->get_data(zk_path(znodes::kController), false,
                [this, generation](zk::Error e, const std::string& data, const std::optional<zk::Stat>&) {
                  if (generation != zk_generation_) return;
                  if (e == zk::Error::no_node) {
                    elect_controller();
                    return;
                  }
                  if (e != zk::Error::ok) return;
                  const BrokerId id = znodes::decode_controller(data).value_or(kNoBroker);
                  if (id != config_.broker_id && is_controller()) resign("another broker is controller");
                });
}

void Broker::become_controller(ControllerEpoch epoch, int32_t epoch_version) {
  // An election answered after this broker began to shut down (and resigned)
  // starts nothing; its /controller goes with the session.
  if (shutting_down_) return;
  ctx().trace("controller_elected", {{"broker", config_.broker_id}, {"epoch", epoch.value}});
  Controller::Environment env;
  env.ctx = &ctx();
  env.zk = zk_.get();
  env.chroot = chroot_;
  env.config = &config_;
  env.resign = [this](const std::string& why) { resign(why); };
  if (controller_) old_controllers_.push_back(std::move(controller_));
  controller_ = std::make_unique<Controller>(std::move(env), epoch, epoch_version);
  controller_->start();
}

void Broker::resign(const std::string& why, Controller::StopKind how) {
  if (!controller_) return;
  const bool was_active = controller_->active();
  controller_->stop(how);
  if (was_active) {
    ctx().trace("controller_resigned",
                {{"epoch", controller_->epoch().value}, {"why", why}});
  }
  old_controllers_.push_back(std::move(controller_));
}

void Broker::on_watch(uint64_t generation, const zk::WatchEvent& event) {
  if (generation != zk_generation_) return;
  std::string path = event.path;
  if (!chroot_.empty()) {
    if (path.compare(0, chroot_.size(), chroot_) != 0) return;
    path = path.substr(chroot_.size());
    if (path.empty()) path = "/";
  }
  if (path == znodes::kController) {
    if (event.type == zk::EventType::node_deleted) {
      elect_controller();
    } else {
      // Re-arm the watch and look at who it is now.
      zk_->exists(zk_path(znodes::kController), true, [](zk::Error, const std::optional<zk::Stat>&) {});
      watch_controller();
    }
    return;
  }
  if (controller_ && controller_->active()) controller_->on_watch(zk::WatchEvent{event.type, path});
}

// --- sockets ---------------------------------------------------------------------------

void Broker::on_accept(sim::SocketId socket, uint16_t) { connections_[socket] = ServerConnection{}; }

void Broker::on_connected(sim::SocketId s) {
  if (zk_ && zk_->on_connected(s)) return;
  if (controller_ && controller_->channel().on_connected(s)) return;
  if (fetch_client_->on_connected(s)) return;
  if (shutdown_client_->on_connected(s)) return;
  if (alter_isr_client_->on_connected(s)) return;
  forwarding_client_->on_connected(s);
}

void Broker::on_connect_failed(sim::SocketId s, sim::ConnectError e) {
  if (zk_ && zk_->on_connect_failed(s, e)) return;
  for (auto& old : old_zk_) {
    if (old->on_connect_failed(s, e)) return;
  }
  if (controller_ && controller_->channel().on_connect_failed(s, e)) return;
  if (fetch_client_->on_connect_failed(s, e)) return;
  if (shutdown_client_->on_connect_failed(s, e)) return;
  if (alter_isr_client_->on_connect_failed(s, e)) return;
  forwarding_client_->on_connect_failed(s, e);
}

void Broker::on_message(sim::SocketId s, sim::Payload& p) {
  // A request can only have come in on one of the listener's connections
  // (the clients below only ever receive answers and ZooKeeper messages):
  // it is served without asking each client whether the socket is its own.
  if (auto* frame = sim::payload_cast<RequestFrame>(&p)) {
    if (ServerConnection* found = connections_.find(s)) {
      ServerConnection& c = *found;
      if (!serving_requests_) {
        c.pending.push_back(std::move(*frame));  // read once startup is done
        return;
      }
      if (!c.busy && c.pending.empty() &&
          (nothing_locked() || (!handlers_exhausted() && !waits_for_lock(frame->body, parked_.size())))) {
        serve(s, c, *frame);
        return;
      }
      c.pending.push_back(std::move(*frame));
      if (!c.busy) dispatch(s);
      return;
    }
  }
  if (zk_ && zk_->on_message(s, p)) return;
  for (auto& old : old_zk_) {
    if (old->on_message(s, p)) return;
  }
  if (controller_ && controller_->channel().on_message(s, p)) return;
  if (fetch_client_->on_message(s, p)) return;
  if (shutdown_client_->on_message(s, p)) return;
  if (alter_isr_client_->on_message(s, p)) return;
  forwarding_client_->on_message(s, p);
}

void Broker::on_closed(sim::SocketId s, sim::CloseReason r) {
  if (zk_ && zk_->on_closed(s, r)) return;
  for (auto& old : old_zk_) {
    if (old->on_closed(s, r)) return;
  }
  if (controller_ && controller_->channel().on_closed(s, r)) return;
  if (fetch_client_->on_closed(s, r)) return;
  if (shutdown_client_->on_closed(s, r)) return;
  if (alter_isr_client_->on_closed(s, r)) return;
  if (forwarding_client_->on_closed(s, r)) return;
  connections_.erase(s);
}

void Broker::dispatch(sim::SocketId socket) {
  if (!serving_requests_) return;
  ServerConnection* found = connections_.find(socket);
  if (found == nullptr || found->busy || found->pending.empty()) return;
  ServerConnection& c = *found;
  if (handlers_exhausted()) {
    // Every request handler thread waits for a partition's lock: the
    // request stays queued (Kafka's request channel) until one is free.
    if (std::find(waiting_for_handler_.begin(), waiting_for_handler_.end(), socket) ==
        waiting_for_handler_.end()) {
      waiting_for_handler_.push_back(socket);
    }
    return;
  }
  RequestFrame frame = std::move(c.pending.front());
  c.pending.pop_front();
  if (waits_for_lock(frame.body, parked_.size())) {
    park(socket, c, std::move(frame));
    return;
  }
  serve(socket, c, frame);
}

// --- the 2.2 partition lock ------------------------------------------------------------

bool Broker::partition_locked(const TopicPartition& tp) const {
  if (!config_.replication_rules.isr_write_holds_partition_lock) return false;
  auto it = partitions_.find(tp);
  return it != partitions_.end() && it->second->isr_write_in_flight;
}

bool Broker::fetch_waits_for_lock(const FetchRequest& r) const {
  if (!config_.replication_rules.isr_write_holds_partition_lock || isr_writes_in_flight_ == 0) return false;
  return std::any_of(r.partitions.begin(), r.partitions.end(),
                     [this](const FetchPartition& f) { return partition_locked(f.tp); });
}

bool Broker::waits_for_lock(const Request& request, size_t ahead) const {
  if (!config_.replication_rules.isr_write_holds_partition_lock || nothing_locked()) return false;
  // A LeaderAndIsr or StopReplica waiting holds replicaStateChangeLock: the
  // next one waits behind it whatever it names.
  const auto state_change_waits = [this, ahead] {
    for (size_t i = 0; i < ahead && i < parked_.size(); ++i) {
      const Request& body = parked_[i].frame.body;
      if (std::holds_alternative<LeaderAndIsrRequest>(body) || std::holds_alternative<StopReplicaRequest>(body)) {
        return true;
      }
    }
    return false;
  };
  return std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, ProduceRequest>) {
          return std::any_of(r.batches.begin(), r.batches.end(),
                             [this](const ProduceBatch& b) { return partition_locked(b.tp); });
        } else if constexpr (std::is_same_v<T, FetchRequest>) {
          return fetch_waits_for_lock(r);
        } else if constexpr (std::is_same_v<T, ListOffsetsRequest>) {
          return std::any_of(r.partitions.begin(), r.partitions.end(),
                             [this](const ListOffsetsPartition& q) { return partition_locked(q.tp); });
        } else if constexpr (std::is_same_v<T, OffsetsForLeaderEpochRequest>) {
          // Partition.lastOffsetForLeaderEpoch reads under the lock.
          return std::any_of(r.partitions.begin(), r.partitions.end(),
                             [this](const EpochQuery& q) { return partition_locked(q.tp); });
        } else if constexpr (std::is_same_v<T, OffsetCommitRequest> || std::is_same_v<T, SyncGroupRequest>) {
          // Their records are appended to the group's __consumer_offsets
          // partition (appendRecordsToLeader, under its lock).
          return group_coordinator_ != nullptr &&
                 partition_locked({kOffsetsTopic, group_coordinator_->partition_for(r.group_id)});
        } else if constexpr (std::is_same_v<T, LeaderAndIsrRequest>) {
          return state_change_waits() ||
                 std::any_of(r.partitions.begin(), r.partitions.end(),
                             [this](const PartitionState& s) { return partition_locked(s.tp); });
        } else if constexpr (std::is_same_v<T, StopReplicaRequest>) {
          // Only a deletion takes the partition's lock (Partition.delete).
          return state_change_waits() ||
                 (r.delete_partitions && std::any_of(r.partitions.begin(), r.partitions.end(),
                                                     [this](const TopicPartition& tp) { return partition_locked(tp); }));
        } else {
          return false;
        }
      },
      request);
}

void Broker::park(sim::SocketId socket, ServerConnection& c, RequestFrame frame) {
  c.busy = true;  // muted: its handler thread waits
  ctx().trace("request_waits_for_partition_lock",
              {{"api", api_name(frame.body)}, {"waiting", parked_.size() + 1}});
  parked_.push_back(Parked{socket, std::move(frame)});
}

void Broker::isr_write_ended(const TopicPartition& tp) {
  if (config_.replication_rules.isr_write_holds_partition_lock) release_partition_lock(tp);
  if (shrink_pass_active_) continue_shrink_pass();
}

void Broker::release_partition_lock(const TopicPartition& tp) {
  // In the order they came: a request that still waits keeps its place.
  // Each leaves parked_ before it is served, so that what its answer sets
  // off (the next request of its connection) sees the handlers as they are.
  size_t i = 0;
  while (i < parked_.size()) {
    ServerConnection* c = connections_.find(parked_[i].socket);
    if (c != nullptr && waits_for_lock(parked_[i].frame.body, i)) {
      ++i;
      continue;
    }
    Parked p = std::move(parked_[i]);
    parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
    if (c == nullptr) continue;  // the client went away; its thread is free now
    c->busy = false;
    serve(p.socket, *c, p.frame);
  }
  std::vector<sim::SocketId> waiting = std::move(waiting_for_handler_);
  waiting_for_handler_.clear();
  for (sim::SocketId s : waiting) dispatch(s);
  // Fetches waiting in the purgatory could not read the partition either.
  const sim::Time now = ctx().now();
  boost::container::small_vector<std::pair<uint64_t, bool>, 8> fetches;
  for (const auto& op : delayed_fetches_) {
    for (const FetchPartition& fp : op->request.partitions) {
      if (fp.tp == tp) {
        fetches.emplace_back(op->id, op->deadline <= now);
        break;
      }
    }
  }
  for (const auto& [id, due] : fetches) try_complete_fetch(id, due);
}

namespace {

bool produce_failed(const Response& response) {
  const auto* p = std::get_if<ProduceResponse>(&response);
  if (p == nullptr) return false;
  return std::any_of(p->partitions.begin(), p->partitions.end(),
                     [](const ProducePartitionResponse& r) { return r.error != ErrorCode::none; });
}

}  // namespace

void Broker::serve(sim::SocketId socket, ServerConnection& c, RequestFrame& frame) {
  c.busy = true;
  ++c.serving;
  c.correlation_id = frame.correlation_id;
  const auto* produce = std::get_if<ProduceRequest>(&frame.body);
  c.answer = produce == nullptr || produce->acks != 0;
  // The reply names the connection and the request's number on it, packed
  // so that the closure fits in std::function's inline storage: a request
  // is answered at most once, and a late answer (after the connection was
  // closed, or for a request already answered) goes nowhere.
  SIM_ASSERT(socket.value <= UINT32_MAX, "socket id {} does not fit a reply key", socket.value);
  const uint64_t key = (socket.value << 32) | c.serving;
  handle(frame.body, [this, key](Response&& response) {
    const sim::SocketId s{key >> 32};
    ServerConnection* conn = connections_.find(s);
    if (conn == nullptr) return;  // the client went away meanwhile
    ServerConnection& served = *conn;
    if (!served.busy || served.serving != static_cast<uint32_t>(key)) return;  // answered
    if (served.answer && ctx().is_open(s)) {
      ctx().send(s, ResponseFrame{served.correlation_id, std::move(response)});
    } else if (!served.answer && produce_failed(response)) {
      // KafkaApis.handleProduceRequest: an acks=0 produce gets no answer,
      // so when it failed (NOT_LEADER, MESSAGE_TOO_LARGE ...) the broker
      // closes the connection, for the client to notice and refresh its
      // metadata. What was queued on it goes with it.
      connections_.erase(s);
      ctx().close(s);
      return;
    }
    // With acks=0 the client expects no answer; either way the channel is
    // unmuted and the next request is served.
    served.busy = false;
    dispatch(s);
  });
}

void Broker::handle(Request& request, Reply reply) {
  std::visit(
      [&](auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, LeaderAndIsrRequest>) {
          handle_leader_and_isr(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, UpdateMetadataRequest>) {
          handle_update_metadata(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, StopReplicaRequest>) {
          handle_stop_replica(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, ControlledShutdownRequest>) {
          if (!is_controller()) {
            reply(ControlledShutdownResponse{ErrorCode::not_controller, {}});
            return;
          }
          controller_->controlled_shutdown(r.broker_id, r.broker_epoch,
                                           [reply](ControlledShutdownResponse resp) { reply(resp); });
        } else if constexpr (std::is_same_v<T, AlterIsrRequest>) {
          if (!is_controller()) {
            reply(AlterIsrResponse{ErrorCode::not_controller, {}});
            return;
          }
          controller_->alter_isr(std::move(r), [reply](AlterIsrResponse resp) { reply(std::move(resp)); });
        } else if constexpr (std::is_same_v<T, AllocateProducerIdsRequest>) {
          if (!is_controller()) {
            reply(AllocateProducerIdsResponse{ErrorCode::not_controller, kNoProducerId, 0});
            return;
          }
          controller_->allocate_producer_ids(r, [reply](AllocateProducerIdsResponse resp) { reply(resp); });
        } else if constexpr (std::is_same_v<T, FetchRequest>) {
          handle_fetch(std::move(r), std::move(reply));
        } else if constexpr (std::is_same_v<T, OffsetsForLeaderEpochRequest>) {
          handle_offsets_for_leader_epoch(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, ProduceRequest>) {
          handle_produce(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, MetadataRequest>) {
          handle_metadata(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, ListOffsetsRequest>) {
          handle_list_offsets(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, CreateTopicsRequest>) {
          handle_create_topics(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, FindCoordinatorRequest>) {
          handle_find_coordinator(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, InitProducerIdRequest>) {
          handle_init_producer_id(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, JoinGroupRequest>) {
          group_coordinator_->handle_join_group(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, SyncGroupRequest>) {
          group_coordinator_->handle_sync_group(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, HeartbeatRequest>) {
          group_coordinator_->handle_heartbeat(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, LeaveGroupRequest>) {
          group_coordinator_->handle_leave_group(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, OffsetCommitRequest>) {
          group_coordinator_->handle_offset_commit(r, std::move(reply));
        } else if constexpr (std::is_same_v<T, OffsetFetchRequest>) {
          group_coordinator_->handle_offset_fetch(r, std::move(reply));
        } else {
          static_assert(!sizeof(T*), "a request without a handler");
        }
      },
      request);
}

// --- controller requests --------------------------------------------------------------

void Broker::handle_leader_and_isr(const LeaderAndIsrRequest& r, Reply reply) {
  if (r.controller_epoch < controller_epoch_) {
    ctx().trace("stale_controller_request", {{"api", "LeaderAndIsr"},
                                             {"epoch", r.controller_epoch.value},
                                             {"seen", controller_epoch_.value}});
    reply(LeaderAndIsrResponse{ErrorCode::stale_controller_epoch, {}});
    return;
  }
  controller_epoch_ = r.controller_epoch;
  // A new log needs its topic's overrides (/config/topics/<t>) first.
  std::set<std::string> missing;
  for (const PartitionState& s : r.partitions) {
    if (contains(s.replicas, config_.broker_id) && find_partition(s.tp) == nullptr &&
        topic_configs_.count(s.tp.topic) == 0) {
      missing.insert(s.tp.topic);
    }
  }
  if (missing.empty()) {
    apply_leader_and_isr(r, std::move(reply));
    return;
  }
  auto left = std::make_shared<size_t>(missing.size());
  auto request = std::make_shared<LeaderAndIsrRequest>(r);
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  auto fetch = std::make_shared<std::function<void(std::string)>>();
  *fetch = [this, left, request, shared_reply, weak = std::weak_ptr(fetch)](std::string topic) {
    const uint64_t generation = zk_generation_;
    zk_->get_data(zk_path(znodes::topic_config_path(topic)), false,
                  [this, topic, left, request, shared_reply, weak, generation](
                      zk::Error e, const std::string& data, const std::optional<zk::Stat>&) {
                    if (e == zk::Error::connection_loss && generation == zk_generation_) {
                      ctx().after(kZkRetryDelay, [weak, topic] {
                        if (auto f = weak.lock()) (*f)(topic);
                      });
                      return;
                    }
                    std::map<std::string, std::string> config;
                    if (e == zk::Error::ok) config = znodes::decode_topic_config(data).value_or(config);
                    topic_configs_[topic] = config;
                    if (--*left == 0) apply_leader_and_isr(*request, *shared_reply);
                  });
  };
  fetches_.push_back(fetch);
  for (const std::string& t : missing) (*fetch)(t);
}

void Broker::apply_leader_and_isr(const LeaderAndIsrRequest& r, Reply reply) {
  LeaderAndIsrResponse resp;
  const int64_t now_ms = ctx().now().us() / 1000;
  for (const PartitionState& s : r.partitions) {
    if (!contains(s.replicas, config_.broker_id)) {
      resp.partitions.emplace_back(s.tp, ErrorCode::unknown_topic_or_partition);
      continue;
    }
    Partition* existing = find_partition(s.tp);
    if (existing != nullptr && s.leader_epoch <= existing->leader_epoch()) {
      // ReplicaManager.becomeLeaderOrFollower ignores a state that is not
      // newer than what the partition has.
      resp.partitions.emplace_back(s.tp, ErrorCode::stale_controller_epoch);
      continue;
    }
    Partition& p = get_or_create_partition(s.tp, log_config_for(s.tp.topic));
    if (s.leader == config_.broker_id) {
      stop_fetching(s.tp);
      p.make_leader(s, now_ms);
      forget_isr_proposal(p);
      ++roles_version_;
      ctx().trace("become_leader", {{"partition", to_string(s.tp)},
                                    {"leader_epoch", s.leader_epoch.value},
                                    {"isr", join_ids(s.isr)},
                                    {"log_end", p.log().log_end().value},
                                    {"hw", p.high_watermark().value}});
      on_partition_progress(s.tp);
      // GroupCoordinator.onElection: load the groups of this partition.
      if (s.tp.topic == kOffsetsTopic) group_coordinator_->on_become_leader(s.tp.partition);
    } else if (std::none_of(r.live_leaders.begin(), r.live_leaders.end(),
                            [&s](const LiveBroker& b) { return b.id == s.leader; })) {
      // ReplicaManager.makeFollowers changes a partition's state only when
      // its new leader is alive in the metadata cache; the model asks the
      // live leaders the request names (the controller names as leader only
      // brokers it holds live, and tells every broker of those as they join
      // or as it takes over).
      // Otherwise, leader -1 included, the partition keeps its state, its
      // epoch and its fetcher; only its log is created (KAFKA-1647), as
      // get_or_create_partition did above.
      ctx().trace("follower_leader_unavailable", {{"partition", to_string(s.tp)},
                                                  {"leader", s.leader},
                                                  {"leader_epoch", s.leader_epoch.value}});
    } else {
      p.make_follower(s);
      forget_isr_proposal(p);
      ++roles_version_;
      ctx().trace("become_follower", {{"partition", to_string(s.tp)},
                                      {"leader", s.leader},
                                      {"leader_epoch", s.leader_epoch.value},
                                      {"log_end", p.log().log_end().value}});
      // Produce requests waiting here can no longer complete.
      on_partition_progress(s.tp);
      // GroupCoordinator.onResignation: unload its groups.
      if (s.tp.topic == kOffsetsTopic) group_coordinator_->on_resign(s.tp.partition);
      become_follower(p, r.live_leaders);
    }
    resp.partitions.emplace_back(s.tp, ErrorCode::none);
  }
  reply(resp);
}

void Broker::handle_update_metadata(const UpdateMetadataRequest& r, Reply reply) {
  if (r.controller_epoch < controller_epoch_) {
    ctx().trace("stale_controller_request", {{"api", "UpdateMetadata"},
                                             {"epoch", r.controller_epoch.value},
                                             {"seen", controller_epoch_.value}});
    reply(UpdateMetadataResponse{ErrorCode::stale_controller_epoch});
    return;
  }
  controller_epoch_ = r.controller_epoch;
  metadata_.controller_id = r.controller_id;
  metadata_.brokers.clear();
  for (const LiveBroker& b : r.live_brokers) metadata_.brokers[b.id] = b.endpoint;
  for (const PartitionState& s : r.partitions) metadata_.partitions[s.tp] = s;
  reply(UpdateMetadataResponse{ErrorCode::none});
}

void Broker::handle_stop_replica(const StopReplicaRequest& r, Reply reply) {
  if (r.controller_epoch < controller_epoch_) {
    reply(StopReplicaResponse{ErrorCode::stale_controller_epoch});
    return;
  }
  controller_epoch_ = r.controller_epoch;
  for (const TopicPartition& tp : r.partitions) {
    stop_fetching(tp);
    ctx().trace("stop_replica", {{"partition", to_string(tp)}, {"delete", r.delete_partitions}});
    // Only a deleting StopReplica unloads the partition's groups
    // (KafkaApis.handleStopReplicaRequest); a broker that stops leading one
    // hears it by LeaderAndIsr.
    if (tp.topic == kOffsetsTopic && r.delete_partitions) group_coordinator_->on_resign(tp.partition);
    if (r.delete_partitions) {
      auto it = partitions_.find(tp);
      if (it != partitions_.end()) {
        const std::string dir = it->second->log().dir();
        partitions_.erase(it);
        ++partitions_generation_;
        for (const std::string& path : ctx().disk().list(dir + "/")) ctx().disk().remove(path);
      }
    }
  }
  reply(StopReplicaResponse{ErrorCode::none});
}

// --- the replica manager -----------------------------------------------------------------

Partition* Broker::lookup(const TopicPartition& tp) const {
  for (const CachedLookup& c : lookups_) {
    if (c.generation == partitions_generation_ && c.tp == tp) return c.partition;
  }
  auto it = partitions_.find(tp);
  Partition* found = it == partitions_.end() ? nullptr : it->second.get();
  lookups_[next_lookup_] = CachedLookup{partitions_generation_, tp, found};
  next_lookup_ = (next_lookup_ + 1) % lookups_.size();
  return found;
}

Partition* Broker::find_partition(const TopicPartition& tp) { return lookup(tp); }

const Partition* Broker::partition(const TopicPartition& tp) const { return lookup(tp); }

std::vector<TopicPartition> Broker::partitions() const {
  std::vector<TopicPartition> out;
  for (const auto& [tp, _] : partitions_) out.push_back(tp);
  return out;
}

std::string Broker::partition_dir(const TopicPartition& tp) const {
  // LogManager.nextLogDirs: the directory holding the fewest partitions.
  std::map<std::string, size_t> count;
  for (const std::string& d : config_.log_dirs) count[d] = 0;
  for (const auto& [_, p] : partitions_) {
    const std::string& dir = p->log().dir();
    for (const std::string& d : config_.log_dirs) {
      if (dir.compare(0, d.size() + 1, d + "/") == 0) ++count[d];
    }
  }
  std::string best = config_.log_dirs.front();
  for (const std::string& d : config_.log_dirs) {
    if (count[d] < count[best]) best = d;
  }
  return fmt::format("{}/{}-{}", best, tp.topic, tp.partition);
}

LogConfig Broker::log_config_for(const std::string& topic) const {
  auto it = topic_configs_.find(topic);
  if (it == topic_configs_.end() || it->second.empty()) return config_.log;
  try {
    return apply_topic_overrides(config_.log, model::from_map(it->second, znodes::topic_config_path(topic)),
                                 topic == kOffsetsTopic, message_format_reading(config_));
  } catch (const model::ConfigError& e) {
    ctx().trace("bad_topic_config", {{"topic", topic}, {"error", e.what()}});
    return config_.log;
  }
}

Partition& Broker::get_or_create_partition(const TopicPartition& tp, const LogConfig& config) {
  auto it = partitions_.find(tp);
  if (it != partitions_.end()) {
    it->second->log().set_config(config);
    return *it->second;
  }
  std::unique_ptr<PartitionLog> log;
  auto loaded = loaded_logs_.find(tp);
  if (loaded != loaded_logs_.end()) {
    log = std::move(loaded->second);
    loaded_logs_.erase(loaded);
    log->set_config(config);
  } else {
    log = std::make_unique<PartitionLog>(ctx(), partition_dir(tp), config);
  }
  auto p = std::make_unique<Partition>(tp, std::move(log), config_.broker_id);
  p->set_rules(config_.replication_rules);
  p->set_replica_lag_time_max_ms(config_.replica_lag_time_max_ms);
  // Alive: in the live brokers of the last UpdateMetadata.
  p->set_liveness([this](BrokerId b) { return b == config_.broker_id || metadata_.brokers.count(b) != 0; });
  auto hw = checkpointed_hw_.find(to_string(tp));
  if (hw != checkpointed_hw_.end()) p->set_checkpointed_high_watermark(hw->second);
  Partition& ref = *p;
  partitions_[tp] = std::move(p);
  ++partitions_generation_;
  return ref;
}

void Broker::become_follower(Partition& p, const std::vector<LiveBroker>& live_leaders) {
  stop_fetching(p.tp());
  const BrokerId leader = p.leader();
  const auto it = std::find_if(live_leaders.begin(), live_leaders.end(),
                               [leader](const LiveBroker& b) { return b.id == leader; });
  SIM_ASSERT(it != live_leaders.end(), "{}: follower of {} with no live leader named", to_string(p.tp()), leader);
  if (config_.truncation == Truncation::high_watermark) {
    // Before KIP-101 a new follower cut its log at its high watermark.
    truncate_to_high_watermark(p);
    p.needs_truncation = false;
  } else if (config_.replication_rules.truncation_on_fetch && !p.log().epochs().empty()) {
    // KAFKA-10554: it fetches from its log end at once (Fetching, with its
    // latest epoch); the leader's answer says where the logs part.
    p.needs_truncation = false;
  }
  add_to_fetcher(p.tp(), leader, it->endpoint);
}

void Broker::truncate(Partition& p, Offset to, const char* why) {
  PartitionLog& log = p.log();
  if (to >= log.log_end()) {
    // Log.truncateTo with nothing to cut (KAFKA-10706, from 2.6.1 / 2.7.0).
    if (config_.replication_rules.no_op_truncation_trims_epochs) log.trim_epochs_from(log.log_end());
    return;
  }
  const Offset from = log.log_end();
  if (to < log.log_start()) {
    log.truncate_fully_and_start_at(to);
  } else {
    log.truncate_to(to);
  }
  p.rebuild_producers();
  p.set_follower_high_watermark(p.high_watermark());
  if (log.log_end() == to) {
    ctx().trace("log_truncated", {{"partition", to_string(p.tp())},
                                  {"from", from.value},
                                  {"to", to.value},
                                  {"why", why}});
  } else {
    // `to` fell inside a batch, which went whole (PartitionLog::truncate_to).
    ctx().trace("log_truncated", {{"partition", to_string(p.tp())},
                                  {"from", from.value},
                                  {"to", log.log_end().value},
                                  {"asked", to.value},
                                  {"why", why}});
  }
}

void Broker::truncate_to_high_watermark(Partition& p) {
  truncate(p, p.high_watermark(), "high_watermark");
}

void Broker::on_partition_progress(const TopicPartition& tp) {
  // Collected first: completing one can add or remove others. Usually a
  // handful: kept on the stack.
  boost::container::small_vector<uint64_t, 8> produces, fetches;
  for (const auto& [id, op] : delayed_produces_) {
    if (op.required.count(tp) != 0) produces.push_back(id);
  }
  for (const auto& op : delayed_fetches_) {
    for (const FetchPartition& fp : op->request.partitions) {
      if (fp.tp == tp) {
        fetches.push_back(op->id);
        break;
      }
    }
  }
  for (uint64_t id : produces) try_complete_produce(id, false);
  for (uint64_t id : fetches) try_complete_fetch(id, false);
  if (tp.topic == kOffsetsTopic && group_coordinator_) group_coordinator_->on_partition_progress(tp);
}

Offset Broker::append_to_offsets_partition(const TopicPartition& tp, std::vector<Record> records) {
  // ReplicaManager.appendRecords for an internal topic, as handle_produce
  // appends a batch without a producer id.
  Partition* p = find_partition(tp);
  SIM_ASSERT(p != nullptr && p->is_leader(), "append to {} which this broker does not lead",
             to_string(tp));
  if (!records.empty()) {
    const int64_t now_ms = ctx().now().us() / 1000;
    p->log().append_as_leader(std::move(records), p->leader_epoch(), now_ms);
    p->maybe_increment_high_watermark(now_ms);
    on_partition_progress(tp);
  }
  return p->log().log_end();
}

void Broker::maybe_expand_isr(Partition& p, BrokerId fetcher) {
  if (p.isr_write_in_flight || p.isr_change_given_up || !p.can_join_isr(fetcher)) return;
  std::vector<BrokerId> isr = p.isr();
  isr.push_back(fetcher);
  write_isr(p, std::move(isr), "expand");
}

void Broker::shrink_isrs() {
  if (!config_.replication_rules.isr_changes_through_controller) {
    if (shrink_pass_active_) return;  // the last pass still waits on a write
    shrink_pass_.clear();
    shrink_front_started_ = false;
    for (const auto& [tp, p] : partitions_) shrink_pass_.push_back(tp);
    shrink_pass_active_ = true;
    continue_shrink_pass();
    return;
  }
  const int64_t now_ms = ctx().now().us() / 1000;
  for (auto& [tp, p] : partitions_) {
    if (!p->isr_write_in_flight) maybe_shrink_isr(*p, now_ms);
  }
}

bool Broker::maybe_shrink_isr(Partition& p, int64_t now_ms) {
  if (!p.is_leader() || p.isr_change_given_up) return false;
  const std::vector<BrokerId> lagging = p.out_of_sync(now_ms, config_.replica_lag_time_max_ms);
  if (lagging.empty()) return false;
  std::vector<BrokerId> isr;
  for (BrokerId r : p.isr()) {
    if (!contains(lagging, r)) isr.push_back(r);
  }
  write_isr(p, std::move(isr), "shrink");
  return p.isr_write_in_flight;
}

void Broker::continue_shrink_pass() {
  while (!shrink_pass_.empty()) {
    Partition* p = find_partition(shrink_pass_.front());
    // The pass waits for the front partition's own shrink (the write is
    // synchronous on its thread) and, in 2.2 and 2.3, for an expand on its
    // way too (inWriteLock); after an expand it looks at the partition, after
    // its own shrink it moves on. From 2.7 it looks at the change in flight
    // first (isrState.isInflight) and passes the partition by.
    const bool writing = p != nullptr && p->isr_write_in_flight;
    const bool waits_for_expand = !config_.replication_rules.shrink_pass_skips_change_in_flight;
    if (writing && (shrink_front_started_ || waits_for_expand)) return;
    const bool shrunk = shrink_front_started_;
    shrink_front_started_ = false;
    if (!shrunk && p != nullptr && !writing && maybe_shrink_isr(*p, ctx().now().us() / 1000)) {
      shrink_front_started_ = true;
      return;
    }
    shrink_pass_.pop_front();
  }
  shrink_pass_active_ = false;
}

void Broker::write_isr(Partition& p, std::vector<BrokerId> isr, const char* why) {
  if (config_.replication_rules.isr_changes_through_controller) {
    submit_alter_isr(p, std::move(isr), why);
    return;
  }
  if (!zk_) return;
  p.isr_write_in_flight = true;
  ++isr_writes_in_flight_;
  p.set_pending_isr(isr);
  auto w = std::make_shared<IsrWrite>();
  w->tp = p.tp();
  w->state = znodes::LeaderAndIsr{config_.broker_id, p.leader_epoch(), isr, p.controller_epoch()};
  w->expected_version = p.zk_version();
  w->why = why;
  w->old_isr = join_ids(p.isr());
  send_isr_write(std::move(w));
}

void Broker::send_isr_write(std::shared_ptr<const IsrWrite> w) {
  // ReplicationUtils.updateLeaderAndIsr: a conditional setData sent again
  // once connected when the connection is lost (retryRequestUntilConnected);
  // a BADVERSION is a success after all when the node holds exactly what we
  // wrote (checkLeaderAndIsrZkData: our own write, its answer lost).
  const std::string path = zk_path(znodes::partition_state_path(w->tp));
  zk_->set_data(path, znodes::encode_partition_state(w->state), w->expected_version,
                [this, w, path](zk::Error e, const std::optional<zk::Stat>& stat) {
                  if (retry_after_connection_loss(e)) {
                    send_isr_write(w);
                    return;
                  }
                  if (e != zk::Error::bad_version) {
                    finish_isr_write(*w, e, stat ? stat->version : -1);
                    return;
                  }
                  check_isr_write(w);
                });
}

void Broker::check_isr_write(std::shared_ptr<const IsrWrite> w) {
  zk_->get_data(zk_path(znodes::partition_state_path(w->tp)), false,
                [this, w](zk::Error e, const std::string& data, const std::optional<zk::Stat>& stat) {
                  if (retry_after_connection_loss(e)) {
                    check_isr_write(w);
                    return;
                  }
                  const bool ours = e == zk::Error::ok && stat && znodes::decode_partition_state(data) == w->state;
                  finish_isr_write(*w, ours ? zk::Error::ok : zk::Error::bad_version, ours ? stat->version : -1);
                });
}

void Broker::finish_isr_write(const IsrWrite& w, zk::Error e, int32_t version) {
  SIM_ASSERT(isr_writes_in_flight_ > 0, "an ISR write of {} ended that never started", to_string(w.tp));
  --isr_writes_in_flight_;
  apply_isr_write(w, e, version);
  isr_write_ended(w.tp);
}

void Broker::apply_isr_write(const IsrWrite& w, zk::Error e, int32_t version) {
  Partition* p = find_partition(w.tp);
  if (p == nullptr) return;
  p->isr_write_in_flight = false;
  if (!p->is_leader() || p->leader_epoch() != w.state.leader_epoch) return;
  if (e != zk::Error::ok) {
    // Partition.updateIsr: a BADVERSION means the controller changed the
    // state; it will tell us with LeaderAndIsr. From 2.8 the change stays
    // pending until then; before, the partition is free to try again.
    ctx().trace("isr_update_failed", {{"partition", to_string(w.tp)}, {"error", zk::to_string(e)}});
    if (config_.replication_rules.zk_isr_failure_stays_pending) {
      p->isr_change_given_up = true;
    } else {
      p->clear_pending_isr();
    }
    return;
  }
  p->clear_pending_isr();
  p->set_isr(w.state.isr, version);
  ctx().trace(std::string("isr_") + w.why, {{"partition", to_string(w.tp)},
                                             {"from", w.old_isr},
                                             {"to", join_ids(w.state.isr)},
                                             {"leader_epoch", w.state.leader_epoch.value}});
  isr_changes_.insert(w.tp);
  last_isr_change_ms_ = ctx().now().us() / 1000;
  p->maybe_increment_high_watermark(last_isr_change_ms_);
  on_partition_progress(w.tp);
}

// --- AlterIsr ------------------------------------------------------------------------

void Broker::forget_isr_proposal(Partition& p) {
  // Partition.makeLeader / makeFollower: the controller's state replaces a
  // pending change (isrState = CommittedIsr); an answer still on its way is
  // ignored. 2.8.2 also drops the change from the manager's map
  // (alterIsrManager.clearPending); from 3.0 there is no such call, and the
  // old item stays there until answered (alter_isr_keeps_sent_change).
  // A change written to ZooKeeper and given up is dropped the same way.
  p.isr_change_given_up = false;
  if (!config_.replication_rules.isr_changes_through_controller) return;
  p.isr_write_in_flight = false;
  p.isr_proposal = 0;
  if (!config_.replication_rules.alter_isr_keeps_sent_change) alter_isr_unsent_.erase(p.tp());
}

void Broker::submit_alter_isr(Partition& p, std::vector<BrokerId> isr, const char* why) {
  // Partition.sendAlterIsrRequest: the change is pending from now on; while
  // it is, the high watermark counts the maximal ISR (set_pending_isr adds
  // a member being added; a shrink keeps the current ISR until committed).
  if (alter_isr_unsent_.count(p.tp()) != 0) {
    // From 3.0 the manager refuses a second item for a partition
    // (DefaultAlterIsrManager / AlterPartitionManager.submit:
    // OperationNotAttemptedException), and the partition falls back to its
    // committed state at once (handleAlterIsrError / handleAlterPartitionError);
    // a later check proposes again. (2.8.2 cleared the old item on
    // LeaderAndIsr, so it never gets here.)
    ctx().trace("isr_update_failed", {{"partition", to_string(p.tp())}, {"error", "OPERATION_NOT_ATTEMPTED"}});
    return;
  }
  p.isr_write_in_flight = true;
  p.isr_proposal = next_isr_proposal_++;
  p.set_pending_isr(isr);
  AlterIsrItem item;
  item.proposal = p.isr_proposal;
  item.change = AlterIsrPartition{p.tp(), p.leader_epoch(), std::move(isr), p.zk_version()};
  item.why = why;
  item.old_isr = join_ids(p.isr());
  alter_isr_unsent_.insert_or_assign(p.tp(), std::move(item));
  maybe_send_alter_isr();
}

void Broker::maybe_send_alter_isr() {
  // DefaultAlterIsrManager.maybePropagateIsrChanges: one request in flight at
  // a time, carrying every change not yet answered.
  if (alter_isr_unsent_.empty() || alter_isr_in_flight_) return;
  alter_isr_in_flight_ = true;
  AlterIsrRequest request;
  request.broker_id = config_.broker_id;
  request.broker_epoch = broker_epoch_;
  request.by_topic_id = config_.replication_rules.alter_isr_by_topic_id;
  auto items = std::make_shared<AlterIsrItems>();
  for (const auto& [tp, item] : alter_isr_unsent_) {
    request.partitions.push_back(item.change);
    items->push_back(item);
  }
  send_to_controller(*alter_isr_client_, std::make_shared<const Request>(std::move(request)), sim::Time::max(),
                     [this, items = std::move(items)](const Response& r) {
                       on_alter_isr_response(std::get<AlterIsrResponse>(r), *items);
                     },
                     nullptr);
}

// Whether an answer from the controller says it no longer is one.
static bool says_not_controller(const Response& r) {
  if (const auto* alter = std::get_if<AlterIsrResponse>(&r)) {
    if (alter->error == ErrorCode::not_controller) return true;
    for (const AlterIsrPartitionResponse& p : alter->partitions) {
      if (p.error == ErrorCode::not_controller) return true;
    }
    return false;
  }
  if (const auto* ids = std::get_if<AllocateProducerIdsResponse>(&r)) return ids->error == ErrorCode::not_controller;
  return false;
}

void Broker::send_to_controller(NetworkClient& channel, std::shared_ptr<const Request> body, sim::Time deadline,
                                std::function<void(const Response&)> answered, std::function<void()> timed_out) {
  // NodeToControllerRequestThread.generateRequests: a request older than
  // the channel's retryTimeoutMs is given up.
  if (ctx().now() >= deadline) {
    timed_out();
    return;
  }
  const auto again = [this, &channel, body, deadline, answered, timed_out](sim::Duration after) {
    ctx().after(after, [this, &channel, body, deadline, answered, timed_out] {
      send_to_controller(channel, body, deadline, answered, timed_out);
    });
  };
  // MetadataCacheControllerNodeProvider: the controller is whom the
  // metadata cache names; with none, look again every 100 ms
  // (BrokerToControllerRequestThread.doWork).
  auto b = metadata_.brokers.find(metadata_.controller_id);
  if (metadata_.controller_id == kNoBroker || b == metadata_.brokers.end()) {
    again(kControllerChannelNoControllerBackoff);
    return;
  }
  channel.send(metadata_.controller_id, NodeAddress{b->second.host, b->second.port}, Request(*body),
               [again, answered](SendError e, const Response* r) {
                 // A lost connection, a timeout or NOT_CONTROLLER: the same
                 // request goes again, to the controller the cache names by
                 // then (BrokerToControllerRequestThread.handleResponse, putFirst).
                 if (e != SendError::none || r == nullptr || says_not_controller(*r)) {
                   again(kControllerChannelReconnectBackoff);
                   return;
                 }
                 answered(*r);
               });
}

void Broker::on_alter_isr_response(const AlterIsrResponse& r, const AlterIsrItems& items) {
  alter_isr_in_flight_ = false;
  if (r.error != ErrorCode::none) {
    // STALE_BROKER_EPOCH and the like: built again (with the broker epoch
    // of then) and sent after 50 ms (DefaultAlterIsrManager.sendRequest).
    ctx().trace("alter_isr_failed", {{"error", to_string(r.error)}});
    ctx().after(kControllerChannelReconnectBackoff, [this] { maybe_send_alter_isr(); });
    return;
  }
  for (const AlterIsrItem& item : items) {
    auto answer = std::find_if(r.partitions.begin(), r.partitions.end(),
                               [&](const AlterIsrPartitionResponse& p) { return p.tp == item.change.tp; });
    if (answer == r.partitions.end()) continue;
    // The partition's item leaves the unsent map whatever its answer
    // (unsentIsrUpdates.remove(topicPartition): in the callback's finally,
    // after the partition's handler, up to 3.2.0; before it from 3.2.1,
    // KAFKA-14010, which ReplicationRules::alter_isr_retry models) — even
    // one a LeaderAndIsr replaced meanwhile with a newer proposal, which
    // then is never sent and stays pending until the next LeaderAndIsr, as
    // in Kafka 2.8 (KAFKA-12686, fixed in 3.0 where the item is not replaced
    // meanwhile: submit_alter_isr).
    alter_isr_unsent_.erase(item.change.tp);
    apply_alter_isr(item, *answer);
  }
  maybe_send_alter_isr();
}

void Broker::apply_alter_isr(const AlterIsrItem& item, const AlterIsrPartitionResponse& r) {
  Partition* p = find_partition(item.change.tp);
  // Partition.handleAlterIsrResponse: an answer to a change that is no
  // longer the pending one (a LeaderAndIsr came between) is ignored.
  if (p == nullptr || !p->isr_write_in_flight || p->isr_proposal != item.proposal) return;
  const std::string partition = to_string(item.change.tp);
  if (r.error != ErrorCode::none) {
    ctx().trace("isr_update_failed", {{"partition", partition}, {"error", to_string(r.error)}});
    switch (r.error) {
      case ErrorCode::ineligible_replica:
      case ErrorCode::operation_not_attempted:
        // 3.3 on: the controller says it applied nothing; back to the last
        // committed ISR, free to propose again.
        p->isr_write_in_flight = false;
        p->clear_pending_isr();
        return;
      case ErrorCode::unknown_topic_or_partition:
      case ErrorCode::fenced_leader_epoch:
      case ErrorCode::invalid_update_version:
        // Given up: the change stays pending until the next LeaderAndIsr.
        return;
      default:
        // Anything else is tried again as the same change, which only 3.2.1
        // on manages to send (ReplicationRules::alter_isr_retry).
        switch (config_.replication_rules.alter_isr_retry) {
          case AlterIsrRetry::stays_pending:
            return;
          case AlterIsrRetry::falls_back:
            ctx().trace("isr_update_failed",
                        {{"partition", partition}, {"error", to_string(ErrorCode::operation_not_attempted)}});
            p->isr_write_in_flight = false;
            p->clear_pending_isr();
            return;
          case AlterIsrRetry::sent_again: {
            AlterIsrItem again = item;
            alter_isr_unsent_.insert_or_assign(item.change.tp, std::move(again));
            maybe_send_alter_isr();
            return;
          }
        }
        return;
    }
  }
  // An answer for another leader epoch, or older than what this replica
  // knows, leaves the change pending.
  if (r.leader_epoch != p->leader_epoch() || r.zk_version < p->zk_version()) {
    ctx().trace("isr_update_failed", {{"partition", partition}, {"error", "STALE_ANSWER"}});
    return;
  }
  p->isr_write_in_flight = false;
  p->clear_pending_isr();
  p->set_isr(r.isr, r.zk_version);
  ctx().trace(std::string("isr_") + item.why, {{"partition", partition},
                                               {"from", item.old_isr},
                                               {"to", join_ids(r.isr)},
                                               {"leader_epoch", r.leader_epoch.value}});
  if (config_.replication_rules.isr_commit_moves_high_watermark) {
    p->maybe_increment_high_watermark(ctx().now().us() / 1000);
  }
  on_partition_progress(item.change.tp);
}

void Broker::propagate_isr_changes() {
  if (isr_changes_.empty() || !zk_ || !registered_) return;
  const int64_t now_ms = ctx().now().us() / 1000;
  if (now_ms - last_isr_change_ms_ <= kIsrChangeQuietMs &&
      now_ms - last_isr_propagation_ms_ <= kIsrPropagationMaxDelayMs) {
    return;
  }
  std::vector<TopicPartition> tps(isr_changes_.begin(), isr_changes_.end());
  isr_changes_.clear();
  last_isr_propagation_ms_ = now_ms;
  create_isr_change_notification(znodes::encode_isr_change(tps));
}

void Broker::create_isr_change_notification(const std::string& data) {
  // KafkaZkClient.propagateIsrChanges: sent again once connected if the
  // connection is lost (retryRequestUntilConnected).
  zk_->create(zk_path(znodes::kIsrChangePrefix), data, zk::CreateMode::persistent_sequential,
              [this, data](zk::Error e, const std::string&) {
                if (retry_after_connection_loss(e)) create_isr_change_notification(data);
              });
}

void Broker::checkpoint_high_watermarks() {
  for (const std::string& dir : config_.log_dirs) {
    std::vector<std::string> lines;
    for (const auto& [tp, p] : partitions_) {
      if (p->log().dir().compare(0, dir.size() + 1, dir + "/") != 0) continue;
      lines.push_back(fmt::format("{} {} {}", tp.topic, tp.partition, p->high_watermark().value));
    }
    std::vector<std::string> records{"0", std::to_string(lines.size())};
    records.insert(records.end(), lines.begin(), lines.end());
    const std::string path = dir + "/replication-offset-checkpoint";
    sim::File& f = ctx().disk().open(path);
    if (f.records().size() == records.size()) {
      bool same = true;
      for (size_t i = 0; i < records.size() && same; ++i) same = f.records()[i].data == records[i];
      if (same) continue;
    }
    f.rewrite(records, ctx().now());
    ctx().fsync(path, [] {});
  }
}

void Broker::retention_check() {
  const int64_t now_ms = ctx().now().us() / 1000;
  for (auto& [tp, p] : partitions_) p->log().delete_expired_segments(now_ms, p->high_watermark());
}

void Broker::flush_check() {
  const int64_t now_ms = ctx().now().us() / 1000;
  for (auto& [tp, p] : partitions_) p->log().maybe_flush_by_time(now_ms);
}

// --- fetch ---------------------------------------------------------------------------------

void Broker::handle_fetch(FetchRequest r, Reply reply) {
  if (r.replica_id >= 0) {
    const int64_t now_ms = ctx().now().us() / 1000;
    for (const FetchPartition& fp : r.partitions) {
      Partition* p = find_partition(fp.tp);
      // updateFollowerFetchState skips a read that failed (a fenced epoch,
      // an offset out of range) or found the logs parting.
      if (fetch_error(fp, p) != ErrorCode::none || diverging_epoch(fp, *p)) continue;
      p->update_follower(r.replica_id, fp.fetch_offset, now_ms);
      maybe_expand_isr(*p, r.replica_id);
      if (p->maybe_increment_high_watermark(now_ms)) on_partition_progress(fp.tp);
    }
  }
  FetchTargets targets;
  if (auto resp = read_for_fetch(r, r.max_wait_ms <= 0, /*waiting=*/false, targets)) {
    reply(std::move(*resp));
    return;
  }
  const uint64_t id = next_delayed_id_++;
  auto op = std::make_unique<DelayedFetch>();
  op->id = id;
  op->deadline = ctx().now() + sim::Duration::millis(r.max_wait_ms);
  arm_fetch_timer(op->deadline);
  op->request = std::move(r);
  op->targets = std::move(targets);
  op->reply = std::move(reply);
  delayed_fetches_.push_back(std::move(op));  // ids ascend: the vector stays sorted
}

std::optional<std::pair<LeaderEpoch, Offset>> Broker::diverging_epoch(const FetchPartition& fp,
                                                                     const Partition& p) const {
  // Partition.readRecords (KAFKA-10554): the largest epoch this log knows
  // not above the follower's last fetched one, and where it ends; the logs
  // part when that is an older epoch or ends before the fetch offset.
  if (fp.last_fetched_epoch.value < 0) return std::nullopt;
  const PartitionLog& log = p.log();
  if (fp.last_fetched_epoch == log.latest_epoch() && fp.fetch_offset <= log.log_end()) return std::nullopt;
  const auto end = log.end_offset_for_epoch(fp.last_fetched_epoch);
  if (!end || (end->first >= fp.last_fetched_epoch && end->second >= fp.fetch_offset)) return std::nullopt;
  return end;
}

ErrorCode Broker::fetch_error(const FetchPartition& fp, const Partition* p) const {
  if (p == nullptr || !p->is_leader()) {
    const bool known = metadata_.partitions.count(fp.tp) != 0;
    return known ? ErrorCode::not_leader_for_partition : ErrorCode::unknown_topic_or_partition;
  }
  if (fp.current_leader_epoch.value >= 0 && fp.current_leader_epoch < p->leader_epoch()) {
    return ErrorCode::fenced_leader_epoch;
  }
  if (fp.current_leader_epoch > p->leader_epoch()) return ErrorCode::unknown_leader_epoch;
  if (fp.last_fetched_epoch.value >= 0) {
    // readRecords: an epoch the log cannot place, or an offset below its
    // start, is out of range whatever the epochs say; a diverging fetch
    // is answered without records, even from beyond the log end.
    if (fp.last_fetched_epoch != p->log().latest_epoch() && !p->log().end_offset_for_epoch(fp.last_fetched_epoch)) {
      return ErrorCode::offset_out_of_range;
    }
    if (fp.fetch_offset < p->log().log_start()) return ErrorCode::offset_out_of_range;
    if (diverging_epoch(fp, *p)) return ErrorCode::none;
  }
  if (fp.fetch_offset < p->log().log_start() || fp.fetch_offset > p->log().log_end()) {
    return ErrorCode::offset_out_of_range;
  }
  return ErrorCode::none;
}

// What a follower may read: all it has; a consumer: up to the high watermark.
static Offset fetch_upto(const FetchRequest& r, const Partition& p) {
  return r.replica_id >= 0 ? p.log().log_end() : p.high_watermark();
}

const Broker::FetchTargets& Broker::targets(const FetchRequest& r, FetchTargets& t) const {
  // A waiting fetch is looked at on every append to its partitions: the map
  // lookups are done once, while no partition comes or goes.
  if (t.generation != partitions_generation_) {
    t.partitions.clear();
    for (const FetchPartition& fp : r.partitions) t.partitions.push_back(partition(fp.tp));
    t.generation = partitions_generation_;
  }
  return t;
}

// How much of a fetch's answer is left for `fp`: its own limit, or what the
// partitions before it left of the answer's (ReplicaManager.readFromLocalLog).
static int64_t partition_limit(const FetchPartition& fp, int64_t answer_left) {
  return std::min<int64_t>(fp.max_bytes, answer_left);
}

bool Broker::fetch_satisfied(const FetchRequest& r, bool waiting, FetchTargets& t) const {
  // The same walks as read_for_fetch, counting bytes instead of copying
  // records: most looks at a waiting fetch find nothing new.
  const auto& found = targets(r, t).partitions;
  if (!waiting) {
    // bytesReadable: the slices readFromLocalLog would send.
    int64_t readable = 0;
    int64_t answer_left = r.max_bytes;
    bool min_one = true;
    for (size_t i = 0; i < r.partitions.size(); ++i) {
      const FetchPartition& fp = r.partitions[i];
      const Partition* p = found[i];
      if (fetch_error(fp, p) != ErrorCode::none) return true;
      if (diverging_epoch(fp, *p)) return true;  // fetchMessages: hasDivergingEpoch
      const Offset upto = fetch_upto(r, *p);
      if (fp.fetch_offset >= upto) continue;
      const int64_t n =
          p->log().fetch_read(fp.fetch_offset, upto, partition_limit(fp, answer_left), min_one, nullptr);
      min_one = min_one && n == 0;
      readable += n;
      answer_left = std::max<int64_t>(0, answer_left - n);
    }
    if (readable >= r.min_bytes) return true;
  }
  if (t.fetch_segments.size() != r.partitions.size()) {
    // The first look, as the fetch comes: where each offset is now.
    t.fetch_segments.clear();
    for (size_t i = 0; i < r.partitions.size(); ++i) {
      const Partition* p = found[i];
      t.fetch_segments.push_back(p == nullptr ? Offset{-1} : p->log().segment_base(r.partitions[i].fetch_offset));
    }
  }
  const bool above_end_completes = config_.replication_rules.fetch_above_end_completes;
  int64_t available = 0;
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const FetchPartition& fp = r.partitions[i];
    const Partition* p = found[i];
    if (fetch_error(fp, p) != ErrorCode::none) return true;
    if (diverging_epoch(fp, *p)) return true;  // DelayedFetch, case H
    const Offset upto = fetch_upto(r, *p);
    if (fp.fetch_offset == upto) continue;
    const PartitionLog& log = p->log();
    const Offset fetch_segment = t.fetch_segments[i];
    const Offset end_segment = log.segment_base(upto);
    if (above_end_completes) {
      // 3.8+: an offset above the end (case F), or the end on a later
      // segment (a roll, case F), answers at once; bytes count within one.
      if (fp.fetch_offset > upto || fetch_segment < end_segment) return true;
      if (fetch_segment == end_segment) {
        available += std::min<int64_t>(log.bytes_between(fp.fetch_offset, upto), fp.max_bytes);
      }
    } else {
      // Case C: the end on an older segment than the offset (a truncated
      // leader), or the offset on an older one than the end (a roll).
      if (end_segment < fetch_segment || fetch_segment < end_segment) return true;
      if (fp.fetch_offset < upto) {
        available += std::min<int64_t>(log.bytes_between(fp.fetch_offset, upto), fp.max_bytes);
      }
    }
  }
  return available >= r.min_bytes;
}

std::optional<FetchResponse> Broker::read_for_fetch(const FetchRequest& r, bool final, bool waiting,
                                                    FetchTargets& t) {
  if (!final && !fetch_satisfied(r, waiting, t)) return std::nullopt;
  FetchResponse resp;
  resp.partitions.reserve(r.partitions.size());
  // readFromLocalLog: each partition reads at most its own limit and what
  // is left of the answer's, from one segment; the first partition with
  // data reads its first batch whole however large (minOneMessage: the
  // clients modelled send fetch versions above 2), the others only what fits.
  int64_t answer_left = r.max_bytes;
  bool min_one = true;
  const auto& found = targets(r, t).partitions;
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const FetchPartition& fp = r.partitions[i];
    FetchPartitionResponse pr;
    pr.tp = fp.tp;
    const Partition* p = found[i];
    pr.error = fetch_error(fp, p);
    if (pr.error == ErrorCode::none || pr.error == ErrorCode::offset_out_of_range) {
      const PartitionLog& log = p->log();
      pr.high_watermark = p->high_watermark();
      pr.log_start_offset = log.log_start();
      pr.log_end_offset = log.log_end();
    }
    const auto diverging = pr.error == ErrorCode::none ? diverging_epoch(fp, *p) : std::nullopt;
    if (diverging) {
      pr.diverging_epoch = diverging->first;
      pr.diverging_end_offset = diverging->second;
    } else if (pr.error == ErrorCode::none) {
      const Offset upto = fetch_upto(r, *p);
      if (fp.fetch_offset < upto) {
        // The answer's limit goes down by the slice Kafka sends, the part of
        // a batch it ends with included (records.sizeInBytes).
        const int64_t n = p->log().fetch_read(fp.fetch_offset, upto, partition_limit(fp, answer_left),
                                              min_one, &pr.records);
        min_one = min_one && n == 0;
        answer_left = std::max<int64_t>(0, answer_left - n);
      }
    }
    resp.partitions.push_back(std::move(pr));
  }
  return resp;
}

void Broker::try_complete_fetch(uint64_t id, bool timed_out) {
  auto it = std::lower_bound(delayed_fetches_.begin(), delayed_fetches_.end(), id,
                             [](const auto& f, uint64_t want) { return f->id < want; });
  if (it == delayed_fetches_.end() || (*it)->id != id) return;
  // DelayedFetch reads under the partitions' locks (2.2): it waits for
  // isr_write_ended.
  if (fetch_waits_for_lock((*it)->request)) return;
  auto resp = read_for_fetch((*it)->request, timed_out, /*waiting=*/true, (*it)->targets);
  if (!resp) return;
  std::unique_ptr<DelayedFetch> op = std::move(*it);
  delayed_fetches_.erase(it);
  op->reply(std::move(*resp));
}

void Broker::arm_fetch_timer(sim::Time deadline) {
  fetch_timer_.arm(ctx(), deadline, [this] { expire_fetches(); });
}

void Broker::expire_fetches() {
  // Kafka's purgatory answers a fetch whose max wait has passed with what
  // there is. Those due now are answered in the order they came (their ids),
  // and the timer is set again for the earliest of the rest, including any
  // that came meanwhile.
  const sim::Time now = ctx().now();
  boost::container::small_vector<uint64_t, 8> due;
  for (const auto& op : delayed_fetches_) {
    if (op->deadline <= now) due.push_back(op->id);
  }
  for (uint64_t id : due) try_complete_fetch(id, true);
  // One still due waits for a partition's lock (isr_write_ended answers it).
  sim::Time next = sim::Time::max();
  for (const auto& op : delayed_fetches_) {
    if (op->deadline > now) next = std::min(next, op->deadline);
  }
  if (next != sim::Time::max()) arm_fetch_timer(next);
}

void Broker::handle_offsets_for_leader_epoch(const OffsetsForLeaderEpochRequest& r, Reply reply) {
  OffsetsForLeaderEpochResponse resp;
  for (const EpochQuery& q : r.partitions) {
    EpochEndOffset e;
    e.tp = q.tp;
    Partition* p = find_partition(q.tp);
    if (p == nullptr || !p->is_leader()) {
      e.error = ErrorCode::not_leader_for_partition;
    } else if (q.current_leader_epoch.value >= 0 && q.current_leader_epoch < p->leader_epoch()) {
      e.error = ErrorCode::fenced_leader_epoch;
    } else if (q.current_leader_epoch > p->leader_epoch()) {
      e.error = ErrorCode::unknown_leader_epoch;
    } else if (auto answer = p->log().end_offset_for_epoch(q.leader_epoch)) {
      e.leader_epoch = answer->first;
      e.end_offset = answer->second;
    }
    resp.partitions.push_back(e);
  }
  reply(resp);
}

// --- produce -------------------------------------------------------------------------------

void Broker::handle_produce(ProduceRequest& r, Reply reply) {
  ProduceResponse resp;
  std::map<TopicPartition, Offset> required;
  const int64_t now_ms = ctx().now().us() / 1000;
  for (ProduceBatch& b : r.batches) {
    ProducePartitionResponse pr;
    pr.tp = b.tp;
    Partition* p = find_partition(b.tp);
    if (p == nullptr || !p->is_leader()) {
      const bool known = metadata_.partitions.count(b.tp) != 0;
      pr.error = known ? ErrorCode::not_leader_for_partition : ErrorCode::unknown_topic_or_partition;
    } else if (r.acks == -1 && p->under_min_isr()) {
      pr.error = ErrorCode::not_enough_replicas;
    } else if (const int64_t bytes = batch_bytes(b.records); bytes > p->log().config().max_message_bytes) {
      // Log.analyzeAndValidateRecords, before the producer state is looked
      // at: a batch over the topic's max.message.bytes is refused whole.
      pr.error = ErrorCode::message_too_large;
    } else if (bytes > p->log().config().segment_bytes) {
      // Log.append: records that would not fit one segment
      // (RecordBatchTooLargeException).
      pr.error = ErrorCode::record_list_too_large;
    } else if (b.records.empty()) {
      pr.base_offset = p->log().log_end();
    } else {
      const int32_t count = static_cast<int32_t>(b.records.size());
      Offset duplicate{-1};
      SequenceCheck check = SequenceCheck::append;
      if (b.producer_id != kNoProducerId) {
        check = p->check_sequence(b.producer_id, b.producer_epoch, b.base_sequence,
                                  b.base_sequence + count - 1, &duplicate);
      }
      switch (check) {
        case SequenceCheck::duplicate:
          pr.base_offset = duplicate;
          required[b.tp] = duplicate + count;
          ctx().trace("produce_duplicate", {{"partition", to_string(b.tp)},
                                            {"producer_id", b.producer_id},
                                            {"sequence", b.base_sequence}});
          break;
        case SequenceCheck::out_of_order:
          pr.error = ErrorCode::out_of_order_sequence_number;
          break;
        case SequenceCheck::invalid_epoch:
          pr.error = ErrorCode::invalid_producer_epoch;
          break;
        case SequenceCheck::append: {
          // The request is spent once handled: its records are taken, not copied.
          std::vector<Record> records = std::move(b.records);
          for (int32_t i = 0; i < count; ++i) {
            records[static_cast<size_t>(i)].producer_id = b.producer_id;
            records[static_cast<size_t>(i)].producer_epoch = b.producer_epoch;
            records[static_cast<size_t>(i)].sequence =
                b.producer_id == kNoProducerId ? -1 : b.base_sequence + i;
          }
          pr.base_offset = p->log().append_as_leader(std::move(records), p->leader_epoch(), now_ms);
          p->record_producers_from(pr.base_offset);
          required[b.tp] = pr.base_offset + count;
          p->maybe_increment_high_watermark(now_ms);
          break;
        }
      }
    }
    resp.partitions.push_back(pr);
  }
  for (const auto& [tp, _] : required) on_partition_progress(tp);
  // Log.append flushes synchronously when flush.messages says so: the
  // request handler is busy until the fsync returns.
  sim::Time flushed = ctx().now();
  for (const auto& [tp, _] : required) {
    if (Partition* p = find_partition(tp)) flushed = std::max(flushed, p->log().flush_done_at());
  }
  if (flushed > ctx().now()) {
    reply = [this, inner = std::move(reply), flushed](Response&& response) {
      if (flushed <= ctx().now()) {
        inner(std::move(response));  // a delayed produce answered after the fsync
        return;
      }
      ctx().at(flushed, [inner, response = std::move(response)]() mutable { inner(std::move(response)); });
    };
  }
  if (r.acks != -1 || required.empty()) {
    reply(std::move(resp));
    return;
  }
  const uint64_t id = next_delayed_id_++;
  DelayedProduce op;
  op.id = id;
  op.results = std::move(resp.partitions);
  op.required = std::move(required);
  op.reply = std::move(reply);
  op.timer = ctx().after(sim::Duration::millis(r.timeout_ms), [this, id] { try_complete_produce(id, true); });
  delayed_produces_.emplace(id, std::move(op));
  try_complete_produce(id, false);
}

void Broker::try_complete_produce(uint64_t id, bool timed_out) {
  auto it = delayed_produces_.find(id);
  if (it == delayed_produces_.end()) return;
  DelayedProduce& op = it->second;
  bool all_done = true;
  for (ProducePartitionResponse& pr : op.results) {
    auto req = op.required.find(pr.tp);
    if (req == op.required.end()) continue;  // failed or done already
    Partition* p = find_partition(pr.tp);
    if (p == nullptr || !p->is_leader()) {
      pr.error = ErrorCode::not_leader_for_partition;
    } else if (p->high_watermark() >= req->second) {
      // DelayedProduce: acknowledged once the high watermark passes the
      // batch, but NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR is too small.
      pr.error = p->under_min_isr_after_append() ? ErrorCode::not_enough_replicas_after_append : ErrorCode::none;
    } else if (timed_out) {
      pr.error = ErrorCode::request_timed_out;
    } else {
      all_done = false;
      continue;
    }
    op.required.erase(req);
  }
  if (!all_done) return;
  DelayedProduce done = std::move(it->second);
  delayed_produces_.erase(it);
  ctx().cancel(done.timer);
  done.reply(ProduceResponse{std::move(done.results)});
}

// --- metadata, offsets, topics, coordinators, producer ids -----------------------------------

void Broker::handle_metadata(const MetadataRequest& r, Reply reply) {
  MetadataResponse resp;
  resp.controller_id = metadata_.controller_id;
  for (const auto& [id, ep] : metadata_.brokers) resp.brokers.push_back({id, ep.host, ep.port});
  std::vector<std::string> topics;
  if (r.topics) {
    topics = *r.topics;
  } else {
    for (const auto& [tp, _] : metadata_.partitions) {
      if (topics.empty() || topics.back() != tp.topic) topics.push_back(tp.topic);
    }
  }
  for (const std::string& t : topics) {
    TopicMetadata tm;
    tm.name = t;
    tm.internal = t == kOffsetsTopic;
    for (auto it = metadata_.partitions.lower_bound({t, 0});
         it != metadata_.partitions.end() && it->first.topic == t; ++it) {
      const PartitionState& s = it->second;
      PartitionMetadata pm;
      pm.partition = s.tp.partition;
      pm.leader = metadata_.brokers.count(s.leader) != 0 ? s.leader : kNoBroker;
      pm.leader_epoch = s.leader_epoch;
      pm.replicas = s.replicas;
      pm.isr = s.isr;
      for (BrokerId b : s.replicas) {
        if (metadata_.brokers.count(b) == 0) pm.offline_replicas.push_back(b);
      }
      pm.error = pm.leader == kNoBroker ? ErrorCode::leader_not_available : ErrorCode::none;
      tm.partitions.push_back(pm);
    }
    if (tm.partitions.empty()) {
      if (r.allow_auto_topic_creation && config_.auto_create_topics_enable && !tm.internal &&
          valid_topic_name(t)) {
        // KafkaApis: start creating it, answer LEADER_NOT_AVAILABLE for now.
        create_topic(NewTopic{t, -1, -1, {}, {}}, [](ErrorCode, std::string) {});
        tm.error = ErrorCode::leader_not_available;
      } else {
        tm.error = ErrorCode::unknown_topic_or_partition;
      }
    }
    resp.topics.push_back(std::move(tm));
  }
  reply(std::move(resp));
}

void Broker::handle_list_offsets(const ListOffsetsRequest& r, Reply reply) {
  ListOffsetsResponse resp;
  for (const ListOffsetsPartition& q : r.partitions) {
    ListOffsetsPartitionResponse pr;
    pr.tp = q.tp;
    Partition* p = find_partition(q.tp);
    if (p == nullptr || !p->is_leader()) {
      pr.error = metadata_.partitions.count(q.tp) != 0 ? ErrorCode::not_leader_for_partition
                                                        : ErrorCode::unknown_topic_or_partition;
    } else if (q.timestamp == kEarliestTimestamp) {
      pr.offset = p->log().log_start();
    } else if (r.replica_id < 0 && p->high_watermark() < p->leader_epoch_start()) {
      // KIP-207 (Partition.fetchOffsetForTimestamp, 2.2 on): a new leader
      // does not hand a consumer "latest" while its high watermark is still
      // below where its epoch began — that would be an offset the old leader
      // may already have served past. The clients send ListOffsets v5 or
      // later, so the error is OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE
      // below v5).
      pr.error = ErrorCode::offset_not_available;
    } else {
      pr.offset = r.replica_id >= 0 ? p->log().log_end() : p->high_watermark();
    }
    resp.partitions.push_back(pr);
  }
  reply(resp);
}

void Broker::create_topic(const NewTopic& topic, std::function<void(ErrorCode, std::string)> done) {
  if (!valid_topic_name(topic.name)) {
    done(ErrorCode::invalid_topic_exception, fmt::format("invalid topic name '{}'", topic.name));
    return;
  }
  znodes::Assignment assignment;
  if (!topic.assignment.empty()) {
    assignment = topic.assignment;
  } else {
    const int32_t partitions = topic.num_partitions > 0 ? topic.num_partitions : config_.num_partitions;
    const int32_t rf = topic.replication_factor > 0 ? topic.replication_factor
                                                    : config_.default_replication_factor;
    std::vector<BrokerId> live;
    for (const auto& [id, _] : metadata_.brokers) live.push_back(id);
    if (partitions < 1) {
      done(ErrorCode::invalid_partitions, "Number of partitions must be larger than 0.");
      return;
    }
    if (rf < 1 || static_cast<size_t>(rf) > live.size()) {
      done(ErrorCode::invalid_replication_factor,
           fmt::format("Replication factor: {} larger than available brokers: {}.", rf, live.size()));
      return;
    }
    assignment = assign_replicas(live, partitions, rf, ctx().rng());
  }
  try {
    apply_topic_overrides(config_.log, model::from_map(topic.configs, "CreateTopics " + topic.name),
                          topic.name == kOffsetsTopic, message_format_reading(config_));
  } catch (const model::ConfigError& e) {
    done(ErrorCode::invalid_config, e.what());
    return;
  }
  topic_configs_[topic.name] = topic.configs;
  const std::string name = topic.name;
  const std::string config_data = znodes::encode_topic_config(topic.configs);
  const std::string assignment_data = znodes::encode_assignment(assignment);
  zk_->exists(zk_path(znodes::topic_path(name)), false,
              [this, name, config_data, assignment_data, done](zk::Error e,
                                                                const std::optional<zk::Stat>& stat) {
                if (e != zk::Error::ok && e != zk::Error::no_node) {
                  done(ErrorCode::unknown_server_error, zk::to_string(e));
                  return;
                }
                if (e == zk::Error::ok && stat) {
                  done(ErrorCode::topic_already_exists, fmt::format("Topic '{}' already exists.", name));
                  return;
                }
                // AdminZkClient: the config first, then the assignment the
                // controller is watching for.
                zk_->create(zk_path(znodes::topic_config_path(name)), config_data,
                            zk::CreateMode::persistent,
                            [this, name, assignment_data, done](zk::Error, const std::string&) {
                              zk_->create(zk_path(znodes::topic_path(name)), assignment_data,
                                          zk::CreateMode::persistent,
                                          [this, name, done](zk::Error e, const std::string&) {
                                            if (e == zk::Error::node_exists) {
                                              done(ErrorCode::topic_already_exists,
                                                   fmt::format("Topic '{}' already exists.", name));
                                            } else if (e != zk::Error::ok) {
                                              done(ErrorCode::unknown_server_error, zk::to_string(e));
                                            } else {
                                              ctx().trace("topic_created", {{"topic", name}});
                                              done(ErrorCode::none, "");
                                            }
                                          });
                            });
              });
}

void Broker::handle_create_topics(const CreateTopicsRequest& r, Reply reply) {
  auto resp = std::make_shared<CreateTopicsResponse>();
  if (!is_controller()) {
    for (const NewTopic& t : r.topics) resp->topics.push_back({t.name, ErrorCode::not_controller, ""});
    reply(*resp);
    return;
  }
  resp->topics.resize(r.topics.size());
  auto left = std::make_shared<size_t>(r.topics.size());
  auto shared_reply = std::make_shared<Reply>(std::move(reply));
  if (r.topics.empty()) {
    (*shared_reply)(*resp);
    return;
  }
  for (size_t i = 0; i < r.topics.size(); ++i) {
    resp->topics[i].name = r.topics[i].name;
    create_topic(r.topics[i], [resp, left, shared_reply, i](ErrorCode e, std::string message) {
      resp->topics[i].error = e;
      resp->topics[i].message = std::move(message);
      if (--*left == 0) (*shared_reply)(*resp);
    });
  }
}

void Broker::handle_find_coordinator(const FindCoordinatorRequest& r, Reply reply) {
  const int32_t n = config_.offsets_topic_num_partitions;
  const TopicPartition tp{kOffsetsTopic, offsets_partition_for(r.key, n)};
  auto it = metadata_.partitions.find(tp);
  if (it == metadata_.partitions.end()) {
    bool any = false;
    for (const auto& [p, _] : metadata_.partitions) any = any || p.topic == kOffsetsTopic;
    if (!any) {
      // GroupCoordinator: the offsets topic is created on first use, compacted
      // (offsetsTopicConfigs), so that retention never takes a group's newest
      // records; compaction itself is not modelled, every record stays.
      NewTopic t{kOffsetsTopic, n, config_.offsets_topic_replication_factor, {},
                 {{"cleanup.policy", "compact"},
                  {"compression.type", "producer"},
                  {"segment.bytes", std::to_string(config_.offsets_topic_segment_bytes)}}};
      create_topic(t, [this](ErrorCode e, std::string message) {
        if (e != ErrorCode::none && e != ErrorCode::topic_already_exists) {
          ctx().trace("offsets_topic_creation_failed", {{"error", to_string(e)}, {"message", message}});
        }
      });
    }
    reply(FindCoordinatorResponse{ErrorCode::coordinator_not_available, kNoBroker, "", 0});
    return;
  }
  const BrokerId leader = it->second.leader;
  auto b = metadata_.brokers.find(leader);
  if (b == metadata_.brokers.end()) {
    reply(FindCoordinatorResponse{ErrorCode::coordinator_not_available, kNoBroker, "", 0});
    return;
  }
  reply(FindCoordinatorResponse{ErrorCode::none, leader, b->second.host, b->second.port});
}

void Broker::handle_init_producer_id(const InitProducerIdRequest&, Reply reply) {
  if (!config_.startup_rules.producer_id_block_at_startup) {
    // RPCProducerIdManager: blocks from the controller.
    if (!config_.startup_rules.producer_id_waits_for_block) {
      reply(producer_id_at_once());
      return;
    }
    producer_id_waiters_.push_back(std::move(reply));
    serve_producer_id_waiters();
    return;
  }
  // ZkProducerIdManager: the handler thread waits while the broker claims
  // the next block from ZooKeeper itself.
  if (next_producer_id_ <= producer_id_block_end_) {
    reply(InitProducerIdResponse{ErrorCode::none, next_producer_id_++, 0});
    return;
  }
  producer_id_waiters_.push_back(std::move(reply));
  claim_producer_id_block();
}

void Broker::claim_producer_id_block() {
  if (claiming_block_ || !zk_) return;
  claiming_block_ = true;
  kafka::claim_producer_id_block(
      *zk_, zk_path(znodes::kLatestProducerIdBlock), config_.broker_id,
      [this](zk::Error e, const znodes::ProducerIdBlock* block) {
        claiming_block_ = false;
        if (block == nullptr && (e == zk::Error::connection_loss || serve_after_block_)) {
          // KafkaZkClient retries a request until connected; at startup the
          // claim goes on until ZooKeeper answers, on a new session if need be.
          ctx().after(kZkRetryDelay, [this] { claim_producer_id_block(); });
          return;
        }
        std::deque<Reply> waiters = std::move(producer_id_waiters_);
        producer_id_waiters_.clear();
        if (block == nullptr) {
          // getNewProducerIdBlock threw (an expired session, unreadable
          // data): the handler answers UNKNOWN_SERVER_ERROR.
          for (Reply& w : waiters) w(InitProducerIdResponse{ErrorCode::unknown_server_error, kNoProducerId, -1});
          return;
        }
        next_producer_id_ = block->block_start;
        producer_id_block_end_ = block->block_end;
        if (serve_after_block_) {
          serve_after_block_ = false;
          start_serving_requests();
        }
        for (Reply& w : waiters) handle_init_producer_id(InitProducerIdRequest{}, std::move(w));
      });
}

// --- producer-id blocks from the controller (KIP-730) --------------------------------------

void Broker::serve_producer_id_waiters() {
  // RPCProducerIdManager.generateProducerId up to 3.5, for the waiter at the
  // head: the manager's lock lets one request at a time in, and a request
  // that finds the block spent waits on the queue of the next block for up
  // to request.timeout.ms.
  while (!producer_id_waiters_.empty() && !producer_id_waiting_) {
    if (rpc_next_producer_id_ == -1) {
      maybe_request_producer_id_block();
      rpc_next_producer_id_ = 0;
    } else {
      ++rpc_next_producer_id_;
      if (rpc_next_producer_id_ >= producer_id_block_.prefetch_at()) maybe_request_producer_id_block();
    }
    if (rpc_next_producer_id_ <= producer_id_block_.last()) {
      answer_producer_id_waiter(InitProducerIdResponse{ErrorCode::none, rpc_next_producer_id_, 0});
    } else if (next_producer_id_block_) {
      take_next_producer_id_block();
    } else {
      producer_id_waiting_ = true;
      producer_id_wait_timer_ = ctx().after(sim::Duration::millis(config_.request_timeout_ms), [this] {
        producer_id_waiting_ = false;
        answer_producer_id_waiter(InitProducerIdResponse{ErrorCode::request_timed_out, kNoProducerId, -1});
        serve_producer_id_waiters();
      });
    }
  }
}

void Broker::take_next_producer_id_block() {
  if (const ErrorCode error = next_producer_id_block_->error; error != ErrorCode::none) {
    next_producer_id_block_.reset();
    answer_producer_id_waiter(InitProducerIdResponse{error, kNoProducerId, -1});
    return;
  }
  adopt_next_producer_id_block();
  answer_producer_id_waiter(InitProducerIdResponse{ErrorCode::none, rpc_next_producer_id_, 0});
}

void Broker::adopt_next_producer_id_block() {
  producer_id_block_ = ProducerIdRange{next_producer_id_block_->producer_id_start,
                                       next_producer_id_block_->producer_id_len};
  rpc_next_producer_id_ = producer_id_block_.start;
  next_producer_id_block_.reset();
}

void Broker::answer_producer_id_waiter(const InitProducerIdResponse& r) {
  Reply reply = std::move(producer_id_waiters_.front());
  producer_id_waiters_.pop_front();
  reply(r);
}

InitProducerIdResponse Broker::producer_id_at_once() {
  // RPCProducerIdManager.generateProducerId from 3.6 (KAFKA-14694): an id
  // of the current block, else the next block if it has come, else
  // COORDINATOR_LOAD_IN_PROGRESS while it is asked for (at most three turns).
  const InitProducerIdResponse wait{ErrorCode::coordinator_load_in_progress, kNoProducerId, -1};
  // ProducerIdsBlock.EMPTY counts from 0 and has nothing to give.
  rpc_next_producer_id_ = std::max(rpc_next_producer_id_, producer_id_block_.start);
  for (int turn = 0; turn < 3; ++turn) {
    const int64_t id = rpc_next_producer_id_++;  // ProducerIdsBlock.claimNextId
    if (id <= producer_id_block_.last()) {
      if (id == producer_id_block_.prefetch_at()) maybe_request_producer_id_block();
      return InitProducerIdResponse{ErrorCode::none, id, 0};
    }
    if (!next_producer_id_block_) {
      maybe_request_producer_id_block();
      return wait;
    }
    adopt_next_producer_id_block();
    producer_id_request_in_flight_ = false;
  }
  return wait;
}

void Broker::maybe_request_producer_id_block() {
  // maybeRequestNextBlock: no block waiting, no request in flight, and (3.6+)
  // past the backoff after a refusal.
  if (next_producer_id_block_ || producer_id_request_in_flight_ || ctx().now() < producer_id_backoff_until_) return;
  producer_id_request_in_flight_ = true;
  ctx().trace("producer_id_block_requested", {{"broker_epoch", broker_epoch_}});
  send_to_controller(
      *forwarding_client_,
      std::make_shared<const Request>(AllocateProducerIdsRequest{config_.broker_id, broker_epoch_}),
      ctx().now() + sim::Duration::millis(config_.request_timeout_ms),
      [this](const Response& r) { on_producer_id_block(std::get<AllocateProducerIdsResponse>(r)); },
      [this] { on_producer_id_block_timeout(); });
}

void Broker::on_producer_id_block(const AllocateProducerIdsResponse& r) {
  // handleAllocateProducerIdsResponse (3.1.0, 3.9).
  const bool waits = config_.startup_rules.producer_id_waits_for_block;
  ctx().trace("producer_id_block", {{"error", to_string(r.error)},
                                    {"start", r.producer_id_start},
                                    {"size", r.producer_id_len}});
  const bool valid = r.error == ErrorCode::none && r.producer_id_start >= producer_id_block_.last() &&
                     r.producer_id_len >= 0;
  if (!waits) {
    if (valid) {
      next_producer_id_block_ = r;  // the request counts as in flight until the block is taken
    } else {
      producer_id_backoff_until_ = ctx().now() + kProducerIdRetryBackoff;
      producer_id_request_in_flight_ = false;
    }
    return;
  }
  producer_id_request_in_flight_ = false;
  if (r.error == ErrorCode::stale_broker_epoch || r.error == ErrorCode::broker_id_not_registered) {
    maybe_request_producer_id_block();  // asked again at once, with the epoch of now
    return;
  }
  next_producer_id_block_ = r;
  // A sanity check that fails is a KafkaException: UNKNOWN_SERVER_ERROR.
  if (r.error == ErrorCode::none && !valid) next_producer_id_block_->error = ErrorCode::unknown_server_error;
  wake_producer_id_waiter();
}

void Broker::on_producer_id_block_timeout() {
  ctx().trace("producer_id_block", {{"error", "timed out"}});
  producer_id_request_in_flight_ = false;
  if (!config_.startup_rules.producer_id_waits_for_block) return;
  // 3.1: the waiter learns of it; nothing is asked again until the next
  // InitProducerId.
  next_producer_id_block_ = AllocateProducerIdsResponse{ErrorCode::request_timed_out, kNoProducerId, 0};
  wake_producer_id_waiter();
}

void Broker::wake_producer_id_waiter() {
  if (!producer_id_waiting_) return;
  producer_id_waiting_ = false;
  ctx().cancel(producer_id_wait_timer_);
  take_next_producer_id_block();
  serve_producer_id_waiters();
}

// --- replica fetchers ------------------------------------------------------------------------

bool Broker::FetcherState::fetches(const TopicPartition& tp) const {
  return std::find(partitions.begin(), partitions.end(), tp) != partitions.end();
}

void Broker::FetcherState::remove(const TopicPartition& tp) {
  auto it = std::find(partitions.begin(), partitions.end(), tp);
  if (it != partitions.end()) partitions.erase(it);
}

void Broker::FetcherState::move_to_back(const TopicPartition& tp) {
  auto it = std::find(partitions.begin(), partitions.end(), tp);
  if (it != partitions.end()) std::rotate(it, it + 1, partitions.end());
}

void Broker::add_to_fetcher(const TopicPartition& tp, BrokerId leader, const Endpoint& endpoint) {
  fetching_from_[tp] = leader;
  FetcherState& f = fetchers_[leader];
  f.leader_endpoint = endpoint;
  f.remove(tp);
  f.partitions.push_back(tp);
  // addPartitions: a fresh fetch state, not delayed, and the thread woken.
  f.delayed_until.erase(tp);
  wake_fetcher(leader);
}

void Broker::stop_fetching(const TopicPartition& tp) {
  auto it = fetching_from_.find(tp);
  if (it == fetching_from_.end()) return;
  FetcherState& f = fetchers_[it->second];
  f.remove(tp);
  f.delayed_until.erase(tp);
  fetching_from_.erase(it);
}

void Broker::delay_partition(FetcherState& f, const TopicPartition& tp) {
  if (!f.fetches(tp)) return;
  const sim::Time until = ctx().now() + sim::Duration::millis(config_.replica_fetch_backoff_ms);
  auto [it, added] = f.delayed_until.emplace(tp, until);
  if (!added && it->second > ctx().now()) return;  // delayed already
  it->second = until;
  f.move_to_back(tp);
}

void Broker::on_partition_fetch_error(BrokerId leader, const TopicPartition& tp, ErrorCode error) {
  FetcherState& f = fetchers_[leader];
  if (error == ErrorCode::fenced_leader_epoch) {
    // onPartitionFenced: the leader is in a newer epoch than the one this
    // request carried, which is still the partition's (an answer asked in an
    // epoch the partition has left is dropped before it gets here). The
    // partition leaves the fetcher until the next LeaderAndIsr adds it back
    // (markPartitionFailed; in 2.2 partitionStates.remove).
    ctx().trace("replica_fetch_error", {{"partition", to_string(tp)},
                                        {"leader", leader},
                                        {"error", to_string(error)},
                                        {"then", "awaits_leader_and_isr"}});
    stop_fetching(tp);
    return;
  }
  if (auto d = f.delayed_until.find(tp); d != f.delayed_until.end() && d->second > ctx().now()) return;
  ctx().trace("replica_fetch_error",
              {{"partition", to_string(tp)}, {"leader", leader}, {"error", to_string(error)}, {"then", "delayed"}});
  delay_partition(f, tp);
}

void Broker::fetcher_sleep(BrokerId leader) {
  FetcherState& f = fetchers_[leader];
  f.sleeping = true;
  f.sleep_timer = ctx().after(sim::Duration::millis(config_.replica_fetch_backoff_ms),
                              [this, leader] { wake_fetcher(leader); });
}

void Broker::wake_fetcher(BrokerId leader) {
  FetcherState& f = fetchers_[leader];
  if (f.sleeping) {
    ctx().cancel(f.sleep_timer);
    f.sleeping = false;
    for (const TopicPartition& tp : f.delay_after_sleep) delay_partition(f, tp);
    f.delay_after_sleep.clear();
  }
  run_fetcher(leader);
}

void Broker::on_fetcher_request_failed(BrokerId leader) {
  FetcherState& f = fetchers_[leader];
  if (config_.replication_rules.failed_fetch_sleeps) {
    f.delay_after_sleep.assign(f.partitions.begin(), f.partitions.end());
    fetcher_sleep(leader);
    return;
  }
  // Each goes to the back as it is delayed: walked over a copy.
  const std::vector<TopicPartition> all = f.partitions;
  for (const TopicPartition& tp : all) delay_partition(f, tp);
  run_fetcher(leader);
}

void Broker::run_fetcher(BrokerId leader) {
  FetcherState& f = fetchers_[leader];
  // A broker shutting down goes on replicating through its controlled
  // shutdown: KafkaServer.shutdown stops the fetchers only afterwards
  // (replicaManager.shutdown), which finish_shutdown models.
  if (f.in_flight || f.flushing || f.sleeping || f.partitions.empty() || fetchers_stopped_) return;
  OffsetsForLeaderEpochRequest epochs{config_.broker_id, {}};
  FetchRequest fetch{config_.broker_id, config_.replica_fetch_wait_max_ms,
                     config_.replica_fetch_min_bytes, config_.replica_fetch_response_max_bytes, {}};
  fetch.partitions.reserve(f.partitions.size());
  const sim::Time now = ctx().now();
  for (const TopicPartition& tp : f.partitions) {
    if (auto d = f.delayed_until.find(tp); d != f.delayed_until.end()) {
      if (d->second > now) continue;  // PartitionFetchState.isDelayed
      f.delayed_until.erase(d);
    }
    Partition* p = find_partition(tp);
    if (p == nullptr) continue;
    if (p->needs_truncation) {
      if (p->log().epochs().empty()) {
        // No epoch history (an empty log): KIP-101 falls back to the high watermark.
        truncate_to_high_watermark(*p);
        p->needs_truncation = false;
      } else {
        epochs.partitions.push_back({tp, p->leader_epoch(), p->log().latest_epoch()});
        continue;
      }
    }
    const LeaderEpoch last_fetched =
        config_.replication_rules.truncation_on_fetch ? p->log().latest_epoch() : LeaderEpoch{-1};
    fetch.partitions.push_back({tp, p->log().log_end(), p->leader_epoch(), p->log().log_start(),
                                config_.replica_fetch_max_bytes, last_fetched});
  }
  const NodeAddress address{f.leader_endpoint.host, f.leader_endpoint.port};
  if (!epochs.partitions.empty()) {
    f.asked.resize(epochs.partitions.size());
    for (size_t i = 0; i < epochs.partitions.size(); ++i) {
      f.asked[i] = {epochs.partitions[i].tp, epochs.partitions[i].current_leader_epoch};
    }
    f.in_flight = true;
    fetch_client_->send(leader, address, std::move(epochs),
                        [this, leader](SendError e, const Response* r) {
                          FetcherState& fs = fetchers_[leader];
                          fs.in_flight = false;
                          const auto* resp = r == nullptr ? nullptr : std::get_if<OffsetsForLeaderEpochResponse>(r);
                          if (e != SendError::none || resp == nullptr) {
                            // ReplicaFetcherThread.fetchEpochEndOffsets: every
                            // partition asked about is in error.
                            ctx().trace("replica_fetch_failed", {{"leader", leader},
                                                                 {"request", "offsets_for_leader_epoch"},
                                                                 {"error", to_string(e)}});
                            for (const auto& [tp, epoch] : fs.asked) delay_partition(fs, tp);
                          } else {
                            on_epoch_response(leader, *resp);
                          }
                          run_fetcher(leader);
                        });
    return;
  }
  if (fetch.partitions.empty()) {
    // maybeFetch: nothing ready (every partition delayed) — the thread
    // waits replica.fetch.backoff.ms, or until a partition is added.
    bool any_delayed = false;
    for (const auto& [tp, until] : f.delayed_until) any_delayed |= until > now;
    if (any_delayed) fetcher_sleep(leader);
    return;
  }
  f.asked.resize(fetch.partitions.size());
  for (size_t i = 0; i < fetch.partitions.size(); ++i) {
    f.asked[i] = {fetch.partitions[i].tp, fetch.partitions[i].current_leader_epoch};
  }
  f.in_flight = true;
  fetch_client_->send(leader, address, std::move(fetch), [this, leader](SendError e, const Response* r) {
    fetchers_[leader].in_flight = false;
    const auto* resp = r == nullptr ? nullptr : std::get_if<FetchResponse>(r);
    if (e != SendError::none || resp == nullptr) {
      ctx().trace("replica_fetch_failed",
                  {{"leader", leader}, {"request", "fetch"}, {"error", to_string(e)}});
      on_fetcher_request_failed(leader);
      return;
    }
    const sim::Time flushed = on_fetch_response(leader, *resp);
    if (flushed > ctx().now()) {
      // The fetcher thread appended with a synchronous flush: it fetches
      // again only once the fsync returns.
      fetchers_[leader].flushing = true;
      ctx().at(flushed, [this, leader] {
        fetchers_[leader].flushing = false;
        run_fetcher(leader);
      });
      return;
    }
    run_fetcher(leader);
  });
}

std::optional<LeaderEpoch> Broker::fetch_in_flight_epoch(const TopicPartition& tp) const {
  const auto from = fetching_from_.find(tp);
  if (from == fetching_from_.end()) return std::nullopt;
  const auto f = fetchers_.find(from->second);
  if (f == fetchers_.end() || !f->second.in_flight) return std::nullopt;
  for (const auto& [asked, epoch] : f->second.asked) {
    if (asked == tp) return epoch;
  }
  return std::nullopt;
}

bool Broker::asked_in_current_epoch(const FetcherState& f, size_t i, const TopicPartition& tp,
                                    LeaderEpoch current) const {
  // The answer's partitions come in the request's order.
  if (i < f.asked.size() && f.asked[i].first == tp) return f.asked[i].second == current;
  for (const auto& [asked, epoch] : f.asked) {
    if (asked == tp) return epoch == current;
  }
  return false;
}

void Broker::on_epoch_response(BrokerId leader, const OffsetsForLeaderEpochResponse& r) {
  const FetcherState& f = fetchers_[leader];
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const EpochEndOffset& e = r.partitions[i];
    auto from = fetching_from_.find(e.tp);
    Partition* p = find_partition(e.tp);
    // An answer for an epoch the partition has left since is dropped
    // (truncateToEpochEndOffsets compares the request's epoch with the
    // partition's current one).
    if (from == fetching_from_.end() || from->second != leader || p == nullptr || !p->needs_truncation ||
        !asked_in_current_epoch(f, i, e.tp, p->leader_epoch())) {
      continue;
    }
    if (e.error != ErrorCode::none) {
      on_partition_fetch_error(leader, e.tp, e.error);
      continue;
    }
    // Not complete: ask again with what is left, or, with no epoch left,
    // cut at the high watermark.
    const bool complete = truncate_to_epoch_end(*p, e.leader_epoch, e.end_offset, "leader_epoch");
    p->needs_truncation = !complete && !p->log().epochs().empty();
    if (!complete && !p->needs_truncation) truncate_to_high_watermark(*p);
  }
}

void Broker::take_leader_offsets(Partition& p, const FetchPartitionResponse& pr) {
  // ReplicaFetcherThread.processPartitionData: the high watermark (capped
  // at the log end) and the log start the leader's answer names.
  PartitionLog& log = p.log();
  p.set_follower_high_watermark(pr.high_watermark);
  if (pr.log_start_offset > log.log_start() && pr.log_start_offset <= log.log_end()) {
    log.advance_log_start(pr.log_start_offset);
  }
}

bool Broker::truncate_to_epoch_end(Partition& p, LeaderEpoch epoch, Offset end, const char* why) {
  // AbstractFetcherThread.getOffsetTruncationState (KIP-101, KIP-279).
  PartitionLog& log = p.log();
  if (epoch.value < 0 || end.value < 0) {
    truncate_to_high_watermark(p);
    return true;
  }
  const auto ours = log.end_offset_for_epoch(epoch);
  if (!ours) {
    truncate_to_high_watermark(p);
    return true;
  }
  if (ours->first != epoch) {
    // We do not know the epoch the leader answered with: cut to the end of
    // our own epoch below it; the next question (or fetch) goes on from there.
    truncate(p, std::min(ours->second, log.log_end()), why);
    return false;
  }
  truncate(p, std::min({end, ours->second, log.log_end()}), why);
  return true;
}

sim::Time Broker::on_fetch_response(BrokerId leader, const FetchResponse& r) {
  const int64_t now_ms = ctx().now().us() / 1000;
  sim::Time flushed = ctx().now();
  FetcherState& f = fetchers_[leader];
  for (size_t i = 0; i < r.partitions.size(); ++i) {
    const FetchPartitionResponse& pr = r.partitions[i];
    auto from = fetching_from_.find(pr.tp);
    Partition* p = find_partition(pr.tp);
    // As processFetchRequest, an answer is used only while the partition is
    // in the fetch state it was asked in: a LeaderAndIsr since restarted it.
    if (from == fetching_from_.end() || from->second != leader || p == nullptr || p->needs_truncation ||
        !asked_in_current_epoch(f, i, pr.tp, p->leader_epoch())) {
      continue;
    }
    PartitionLog& log = p->log();
    switch (pr.error) {
      case ErrorCode::none:
        if (pr.diverging_epoch.value >= 0) {
          // truncateOnFetchResponse: cut as on an OffsetsForLeaderEpoch
          // answer, and fetch on (Fetching) from the new end with its epoch,
          // complete or not. Up to 3.4.0 the answer's high watermark and
          // log start are taken first (KAFKA-14704).
          if (!config_.replication_rules.diverging_epoch_skips_high_watermark) {
            take_leader_offsets(*p, pr);
          }
          truncate_to_epoch_end(*p, pr.diverging_epoch, pr.diverging_end_offset, "diverging_epoch");
          break;
        }
        if (!pr.records.empty() && pr.records.front().offset == log.log_end()) {
          log.append_as_follower(pr.records, now_ms);
          p->record_producers(pr.records);
          flushed = std::max(flushed, log.flush_done_at());
          f.move_to_back(pr.tp);
        }
        take_leader_offsets(*p, pr);
        break;
      case ErrorCode::offset_out_of_range:
        // AbstractFetcherThread.handleOutOfRangeError.
        f.move_to_back(pr.tp);
        if (pr.log_end_offset.value >= 0 && pr.log_end_offset < log.log_end()) {
          truncate(*p, pr.log_end_offset, "out_of_range");
        } else if (pr.log_start_offset > log.log_end()) {
          const Offset from_offset = log.log_end();
          log.truncate_fully_and_start_at(pr.log_start_offset);
          p->rebuild_producers();
          ctx().trace("log_truncated", {{"partition", to_string(pr.tp)},
                                        {"from", from_offset.value},
                                        {"to", pr.log_start_offset.value},
                                        {"why", "below_leader_log_start"}});
        }
        break;
      default:
        on_partition_fetch_error(leader, pr.tp, pr.error);
        break;
    }
  }
  return flushed;
}

// --- controlled shutdown ---------------------------------------------------------------------

void Broker::on_terminate() {
  if (shutting_down_) return;
  shutting_down_ = true;
  ctx().trace("broker_shutdown", {{"broker", config_.broker_id}});
  if (config_.controlled_shutdown_enable && registered_) {
    controlled_shutdown(1);
  } else {
    finish_shutdown();
  }
}

void Broker::controlled_shutdown(int32_t attempt) {
  if (attempt > config_.controlled_shutdown_max_retries) {
    ctx().trace("controlled_shutdown_failed", {{"attempts", attempt - 1}});
    finish_shutdown();
    return;
  }
  auto retry = [this, attempt] {
    ctx().after(sim::Duration::millis(config_.controlled_shutdown_retry_backoff_ms),
                [this, attempt] { controlled_shutdown(attempt + 1); });
  };
  auto on_response = [this, attempt, retry](const ControlledShutdownResponse& r) {
    if (r.error == ErrorCode::none && r.remaining.empty()) {
      ctx().trace("controlled_shutdown_succeeded", {{"attempt", attempt}});
      finish_shutdown();
      return;
    }
    ctx().trace("controlled_shutdown_retry", {{"attempt", attempt},
                                              {"error", to_string(r.error)},
                                              {"remaining", static_cast<int64_t>(r.remaining.size())}});
    retry();
  };
  auto ask = [this, attempt, on_response, retry](BrokerId controller, std::optional<Endpoint> at) {
    if (controller != kNoBroker && at) {
      shutdown_controller_ = std::make_pair(controller, *at);
    } else if (shutdown_controller_) {
      // KafkaServer.doControlledShutdown keeps prevController: with no
      // controller (or its registration) to be found, it asks the last one
      // it found again.
      controller = shutdown_controller_->first;
      at = shutdown_controller_->second;
    }
    if (controller == config_.broker_id && is_controller()) {
      controller_->controlled_shutdown(config_.broker_id, broker_epoch_, on_response);
      return;
    }
    if (controller == kNoBroker || !at) {
      ctx().trace("controlled_shutdown_no_controller", {{"attempt", attempt}});
      retry();
      return;
    }
    shutdown_client_->send(controller, NodeAddress{at->host, at->port},
                           ControlledShutdownRequest{config_.broker_id, broker_epoch_},
                           [on_response, retry](SendError e, const Response* r) {
                             const auto* resp = r == nullptr ? nullptr : std::get_if<ControlledShutdownResponse>(r);
                             if (e != SendError::none || resp == nullptr) {
                               retry();
                               return;
                             }
                             on_response(*resp);
                           });
  };
  if (config_.startup_rules.controlled_shutdown_reads_zookeeper && zk_) {
    find_controller_in_zookeeper(ask);
    return;
  }
  auto b = metadata_.brokers.find(metadata_.controller_id);
  ask(metadata_.controller_id,
      b == metadata_.brokers.end() ? std::nullopt : std::optional<Endpoint>(b->second));
}

void Broker::find_controller_in_zookeeper(std::function<void(BrokerId, std::optional<Endpoint>)> found) {
  // zkClient.getControllerId, then getBroker: each sent again once connected
  // when the connection is lost. No /controller, no registration, or the
  // session gone: no controller for this attempt.
  zk_->get_data(zk_path(znodes::kController), false,
                [this, found](zk::Error e, const std::string& data, const std::optional<zk::Stat>&) {
                  if (retry_after_connection_loss(e)) {
                    find_controller_in_zookeeper(found);
                    return;
                  }
                  const std::optional<BrokerId> id =
                      e == zk::Error::ok ? znodes::decode_controller(data) : std::nullopt;
                  if (!id) {
                    found(kNoBroker, std::nullopt);
                    return;
                  }
                  find_broker_in_zookeeper(*id, found);
                });
}

void Broker::find_broker_in_zookeeper(BrokerId id, std::function<void(BrokerId, std::optional<Endpoint>)> found) {
  zk_->get_data(zk_path(znodes::broker_path(id)), false,
                [this, id, found](zk::Error e, const std::string& data, const std::optional<zk::Stat>&) {
                  if (retry_after_connection_loss(e)) {
                    find_broker_in_zookeeper(id, found);
                    return;
                  }
                  std::optional<Endpoint> at;
                  if (e == zk::Error::ok) {
                    if (auto reg = znodes::decode_broker(id, data)) {
                      for (const Endpoint& ep : reg->endpoints) {
                        if (ep.listener == config_.inter_broker_listener) at = ep;
                      }
                    }
                  }
                  found(id, at);
                });
}

void Broker::finish_shutdown() {
  // KafkaServer.shutdown: fetchers stop, the controller resigns, every log
  // is flushed with a clean-shutdown marker, then the ZooKeeper session closes.
  fetchers_stopped_ = true;
  for (auto& [leader, f] : fetchers_) f.partitions.clear();
  fetching_from_.clear();
  fetch_client_->close_all();
  resign("shutting down", Controller::StopKind::queue_cleared);
  for (auto& [tp, p] : partitions_) p->log().flush();
  checkpoint_high_watermarks();
  auto left = std::make_shared<size_t>(config_.log_dirs.size());
  for (const std::string& dir : config_.log_dirs) {
    const std::string marker = dir + "/.kafka_cleanshutdown";
    ctx().disk().open(marker).rewrite({""}, ctx().now());
    ctx().fsync(marker, [this, left] {
      if (--*left != 0) return;
      if (zk_) zk_->close();
      ctx().trace("broker_stopped", {{"broker", config_.broker_id}});
      ctx().exit();
    });
  }
}

}  // namespace kafka
