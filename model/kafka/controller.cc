#include "model/kafka/controller.h"

#include <algorithm>
#include <utility>

#include "model/kafka/producer_ids.h"
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

// `reply`, run at most once: by the event or by its abort, whichever comes
// first (a reply may itself stop the controller: a broker whose own
// controlled shutdown succeeded resigns).
template <typename Answer>
std::function<void(Answer)> once(std::function<void(Answer)> reply) {
  auto answered = std::make_shared<bool>(false);
  return [answered, reply = std::move(reply)](Answer r) {
    if (*answered) return;
    *answered = true;
    reply(std::move(r));
  };
}

// Returns a function that runs `done` on its n-th call; runs `done` at once
// when n is 0 (then the returned function must not be called).
std::function<void()> join(size_t n, std::function<void()> done) {
  if (n == 0) {
    done();
    return [] {};
  }
  auto left = std::make_shared<size_t>(n);
  auto fn = std::make_shared<std::function<void()>>(std::move(done));
  return [left, fn] {
    SIM_ASSERT(*left > 0, "join completed too often");
    if (--*left == 0) (*fn)();
  };
}

// Runs step(0), step(1) ... step(n - 1) one after another (each may finish
// later, by calling the Done it is given), then `done`.
void in_sequence(size_t n, std::function<void(size_t, std::function<void()>)> step,
                 std::function<void()> done) {
  auto run = std::make_shared<std::function<void(size_t)>>();
  std::weak_ptr<std::function<void(size_t)>> weak = run;
  *run = [n, step = std::move(step), done = std::move(done), weak](size_t i) {
    if (i == n) {
      done();
      return;
    }
    auto self = weak.lock();
    step(i, [self, i] { (*self)(i + 1); });
  };
  (*run)(0);
}

const sim::Duration kZkRetryDelay = sim::Duration::millis(200);
// RequestSendThread backs off this long before resending to a broker.
const sim::Duration kResendDelay = sim::Duration::millis(100);
// onControllerFailover schedules the first rebalance check after 5 s.
const sim::Duration kFirstRebalanceDelay = sim::Duration::seconds(5);

}  // namespace

Controller::Controller(Environment env, ControllerEpoch epoch, int32_t epoch_zk_version)
    : env_(std::move(env)),
      epoch_(epoch),
      epoch_zk_version_(epoch_zk_version),
      channel_(*env_.ctx, NetworkClient::Options{env_.config->controller_socket_timeout_ms, 1}) {}

void Controller::start() {
  env_.ctx->trace("controller_failover", {{"epoch", epoch_.value}});
  enqueue("Startup", [this](Done done) { failover(std::move(done)); });
}

void Controller::stop(StopKind how) {
  if (!active_) return;
  active_ = false;
  held_.clear();
  std::vector<std::pair<Abort, AbortCase>> aborts;
  if (current_abort_) {
    aborts.emplace_back(std::move(current_abort_), how == StopKind::queue_cleared ? AbortCase::running_expired
                                                                                  : AbortCase::running_fenced);
  }
  current_abort_ = nullptr;
  const AbortCase queued = how == StopKind::queue_cleared ? AbortCase::preempted : AbortCase::queued;
  for (Event& e : queue_) {
    if (e.abort) aborts.emplace_back(std::move(e.abort), queued);
  }
  queue_.clear();
  env_.ctx->cancel(rebalance_timer_);
  channel_.close_all();
  // Answered in an event of their own, at this instant: an answer may act
  // on the broker that is stopping this controller (its own controlled
  // shutdown, answered, shuts it down), which must not happen inside stop.
  if (!aborts.empty()) {
    env_.ctx->after(sim::Duration::zero(), [aborts = std::move(aborts)] {
      for (const auto& [abort, why] : aborts) abort(why);
    });
  }
}

void Controller::moved(const std::string& why) {
  if (!active_) return;
  env_.ctx->trace("controller_moved", {{"epoch", epoch_.value}, {"why", why}});
  stop();
  env_.resign(why);
}

// --- the event queue --------------------------------------------------------------

void Controller::enqueue(std::string name, Step step, Abort abort) {
  if (!active_) {
    if (abort) abort(AbortCase::queued);
    return;
  }
  queue_.push_back(Event{std::move(name), std::move(step), std::move(abort)});
  if (!busy_) process_next();
}

void Controller::process_next() {
  if (!active_ || busy_ || queue_.empty()) return;
  Event event = std::move(queue_.front());
  queue_.pop_front();
  busy_ = true;
  current_abort_ = std::move(event.abort);
  event.step([this] {
    busy_ = false;
    current_abort_ = nullptr;
    process_next();
  });
}

// --- ZooKeeper with retries -----------------------------------------------------

void Controller::zk_get_data(const std::string& p, bool watch, zk::Client::DataDone done) {
  env_.zk->get_data(path(p), watch,
                    [this, p, watch, done](zk::Error e, const std::string& data,
                                           const std::optional<zk::Stat>& stat) {
                      if (!active_) return;
                      if (e == zk::Error::connection_loss) {
                        env_.ctx->after(kZkRetryDelay, [this, p, watch, done] {
                          if (active_) zk_get_data(p, watch, done);
                        });
                        return;
                      }
                      if (e == zk::Error::session_expired) return;
                      done(e, data, stat);
                    });
}

void Controller::zk_get_children(const std::string& p, bool watch, zk::Client::ChildrenDone done) {
  env_.zk->get_children(path(p), watch,
                        [this, p, watch, done](zk::Error e, const std::vector<std::string>& c) {
                          if (!active_) return;
                          if (e == zk::Error::connection_loss) {
                            env_.ctx->after(kZkRetryDelay, [this, p, watch, done] {
                              if (active_) zk_get_children(p, watch, done);
                            });
                            return;
                          }
                          if (e == zk::Error::session_expired) return;
                          done(e, c);
                        });
}

void Controller::zk_multi(std::vector<zk::WriteOp> ops, zk::Client::MultiDone done) {
  // Every write is fenced on the epoch znode we created.
  ops.insert(ops.begin(), zk::CheckOp{path(znodes::kControllerEpoch), epoch_zk_version_});
  auto retry_ops = ops;
  env_.zk->multi(std::move(ops), [this, retry_ops, done](zk::Error e,
                                                         const std::vector<zk::Error>& results) {
    if (!active_) return;
    if (e == zk::Error::connection_loss) {
      env_.ctx->after(kZkRetryDelay, [this, retry_ops, done] {
        if (!active_) return;
        // Strip the check we added; zk_multi adds it again.
        std::vector<zk::WriteOp> ops(retry_ops.begin() + 1, retry_ops.end());
        zk_multi(std::move(ops), done);
      });
      return;
    }
    if (e == zk::Error::session_expired) return;
    if (!results.empty() && results[0] != zk::Error::ok &&
        results[0] != zk::Error::runtime_inconsistency) {
      moved(fmt::format("controller epoch znode check failed: {}", zk::to_string(results[0])));
      return;
    }
    std::vector<zk::Error> rest(results.empty() ? results.begin() : results.begin() + 1,
                                results.end());
    done(e, rest);
  });
}

void Controller::zk_create(const std::string& p, const std::string& data,
                           zk::Client::CreateDone done) {
  env_.zk->create(path(p), data, zk::CreateMode::persistent,
                  [this, p, data, done](zk::Error e, const std::string& created) {
                    if (!active_) return;
                    if (e == zk::Error::connection_loss) {
                      env_.ctx->after(kZkRetryDelay, [this, p, data, done] {
                        if (active_) zk_create(p, data, done);
                      });
                      return;
                    }
                    if (e == zk::Error::session_expired) return;
                    done(e, created);
                  });
}

void Controller::zk_remove(const std::string& p, zk::Client::Done done) {
  env_.zk->remove(path(p), -1, [this, p, done](zk::Error e) {
    if (!active_) return;
    if (e == zk::Error::connection_loss) {
      env_.ctx->after(kZkRetryDelay, [this, p, done] {
        if (active_) zk_remove(p, done);
      });
      return;
    }
    if (e == zk::Error::session_expired) return;
    done(e);
  });
}

// --- watches ------------------------------------------------------------------------

bool Controller::on_watch(const zk::WatchEvent& event) {
  if (event.path == znodes::kBrokerIds) {
    enqueue("BrokerChange", [this](Done done) { on_broker_change(std::move(done)); });
    return true;
  }
  if (event.path == znodes::kBrokerTopics) {
    enqueue("TopicChange", [this](Done done) { on_topic_change(std::move(done)); });
    return true;
  }
  if (event.path == znodes::kIsrChangeNotification) {
    enqueue("IsrChangeNotification", [this](Done done) { on_isr_change(std::move(done)); });
    return true;
  }
  return false;
}

// --- loading -------------------------------------------------------------------------

void Controller::load_brokers(
    std::function<void(std::map<BrokerId, std::pair<Endpoint, int64_t>>)> then) {
  zk_get_children(znodes::kBrokerIds, true, [this, then](zk::Error e,
                                                         const std::vector<std::string>& children) {
    auto result = std::make_shared<std::map<BrokerId, std::pair<Endpoint, int64_t>>>();
    if (e != zk::Error::ok) {
      then(*result);
      return;
    }
    auto step = join(children.size(), [result, then] { then(*result); });
    for (const std::string& child : children) {
      BrokerId id = kNoBroker;
      try {
        id = static_cast<BrokerId>(std::stol(child));
      } catch (const std::exception&) {
        step();
        continue;
      }
      zk_get_data(znodes::broker_path(id), false,
                  [this, id, result, step](zk::Error e, const std::string& data,
                                           const std::optional<zk::Stat>& stat) {
                    if (e == zk::Error::ok && stat) {
                      auto reg = znodes::decode_broker(id, data);
                      const std::string& listener = env_.config->inter_broker_listener;
                      if (reg) {
                        for (const Endpoint& ep : reg->endpoints) {
                          if (ep.listener == listener) {
                            (*result)[id] = {ep, static_cast<int64_t>(stat->czxid.value)};
                          }
                        }
                      }
                    }
                    step();
                  });
    }
  });
}

void Controller::load_topics(const std::vector<std::string>& topics, Done done) {
  auto step = join(topics.size() * 2, std::move(done));
  for (const std::string& topic : topics) {
    topics_.insert(topic);
    zk_get_data(znodes::topic_path(topic), false,
                [this, topic, step](zk::Error e, const std::string& data,
                                    const std::optional<zk::Stat>&) {
                  if (e == zk::Error::ok) {
                    if (auto a = znodes::decode_assignment(data)) {
                      for (const auto& [p, replicas] : *a) {
                        change_partition({topic, p}).replicas = replicas;
                      }
                    }
                  }
                  step();
                });
    zk_get_data(znodes::topic_config_path(topic), false,
                [this, topic, step](zk::Error e, const std::string& data,
                                    const std::optional<zk::Stat>&) {
                  if (e == zk::Error::ok) {
                    if (auto c = znodes::decode_topic_config(data)) topic_configs_[topic] = *c;
                  }
                  step();
                });
  }
}

void Controller::load_states(std::vector<TopicPartition> tps, Done done) {
  auto step = join(tps.size(), std::move(done));
  for (const TopicPartition& tp : tps) {
    zk_get_data(znodes::partition_state_path(tp), false,
                [this, tp, step](zk::Error e, const std::string& data,
                                 const std::optional<zk::Stat>& stat) {
                  PartitionInfo& info = change_partition(tp);
                  if (e == zk::Error::ok && stat) {
                    info.state = znodes::decode_partition_state(data);
                    info.zk_version = stat->version;
                  }
                  step();
                });
  }
}

// --- failover -------------------------------------------------------------------------

void Controller::failover(Done done) {
  load_brokers([this, done](std::map<BrokerId, std::pair<Endpoint, int64_t>> brokers) {
    live_ = std::move(brokers);
    env_.ctx->trace("controller_brokers", {{"live", [&] {
                                              std::vector<BrokerId> ids;
                                              for (const auto& [id, _] : live_) ids.push_back(id);
                                              return join_ids(ids);
                                            }()}});
    zk_get_children(znodes::kBrokerTopics, true, [this, done](zk::Error,
                                                              const std::vector<std::string>& ts) {
      load_topics(ts, [this, done] {
        std::vector<TopicPartition> all;
        for (const auto& [tp, _] : partitions_) all.push_back(tp);
        load_states(all, [this, done] {
          zk_get_children(znodes::kIsrChangeNotification, true,
                          [this, done](zk::Error, const std::vector<std::string>& children) {
                            for (const std::string& c : children) {
                              zk_remove(znodes::kIsrChangeNotification + "/" + c, [](zk::Error) {});
                            }
                            auto batch = std::make_shared<Batch>();
                            batch->metadata_to_all = true;
                            for (const auto& [tp, info] : partitions_) {
                              if (info.state) batch->metadata.insert(tp);
                            }
                            // ReplicaStateMachine.startup: online replicas get
                            // the current state; from 2.3 (KAFKA-3143)
                            // offline ones leave the ISR.
                            const bool offline_leave_isr =
                                env_.config->replication_rules.failover_takes_offline_replicas_out_of_isr;
                            std::vector<BrokerId> dead;
                            for (const auto& [tp, info] : partitions_) {
                              if (!info.state) continue;
                              add_leader_and_isr(batch, tp);
                              for (BrokerId r : info.replicas) {
                                if (offline_leave_isr && !alive(r) && !contains(dead, r)) dead.push_back(r);
                              }
                            }
                            std::sort(dead.begin(), dead.end());
                            in_sequence(
                                dead.size(),
                                [this, dead, batch](size_t i, Done next) {
                                  std::vector<TopicPartition> tps;
                                  for (const auto& [tp, info] : partitions_) {
                                    if (info.state && contains(info.replicas, dead[i])) tps.push_back(tp);
                                  }
                                  remove_from_isr(tps, dead[i], batch, std::move(next));
                                },
                                [this, batch, done] {
                                  // PartitionStateMachine.startup: elect where
                                  // there is no live leader; create what is new.
                                  // (initializePartitionState: a partition
                                  // whose leader is not online is
                                  // OfflinePartition.)
                                  std::vector<TopicPartition> offline;
                                  std::vector<TopicPartition> fresh;
                                  for (const auto& [tp, info] : partitions_) {
                                    if (!info.state) {
                                      fresh.push_back(tp);
                                    } else if (!alive(info.state->leader)) {
                                      offline.push_back(tp);
                                      offline_.insert(tp);
                                    }
                                  }
                                  elect(offline, ElectionKind::offline, batch, [this, fresh, batch, done] {
                                    create_partitions(fresh, batch, [this, batch, done] {
                                      send(*batch);
                                      schedule_rebalance(kFirstRebalanceDelay);
                                      done();
                                    });
                                  });
                                });
                          });
        });
      });
    });
  });
}

// --- broker membership --------------------------------------------------------------

void Controller::on_broker_change(Done done) {
  load_brokers([this, done](std::map<BrokerId, std::pair<Endpoint, int64_t>> current) {
    std::vector<BrokerId> added, dead, bounced;
    for (const auto& [id, reg] : current) {
      auto it = live_.find(id);
      if (it == live_.end()) {
        added.push_back(id);
      } else if (it->second.second != reg.second) {
        // KIP-380: the same id with a new broker epoch went and came back
        // between two looks.
        bounced.push_back(id);
      }
    }
    for (const auto& [id, _] : live_) {
      if (current.count(id) == 0) dead.push_back(id);
    }
    if (added.empty() && dead.empty() && bounced.empty()) {
      done();
      return;
    }
    env_.ctx->trace("controller_broker_change", {{"new", join_ids(added)},
                                                 {"dead", join_ids(dead)},
                                                 {"bounced", join_ids(bounced)}});
    // KafkaController.processBrokerChange, in its order: the new brokers
    // join first (so an election for a dead leader can pick one of them),
    // then each bounced broker fails and starts again, then the dead ones
    // fail. Each step sends its requests as it ends, as Kafka's do, so a
    // broker told by one step to follow a leader hears the next step's
    // change of it. The dead brokers' channels go first
    // (controllerChannelManager.removeBroker): nothing is sent to them.
    departed_ = std::set<BrokerId>(dead.begin(), dead.end());
    const auto step = [this](void (Controller::*handle)(const std::vector<BrokerId>&, const BatchPtr&, Done),
                             const std::vector<BrokerId>& brokers, Done next) {
      auto batch = std::make_shared<Batch>();
      (this->*handle)(brokers, batch, [this, batch, next = std::move(next)] {
        send(*batch);
        next();
      });
    };
    for (BrokerId id : added) live_[id] = current.at(id);
    step(&Controller::on_broker_startup, added, [this, step, current, bounced, dead, done] {
      step(&Controller::on_broker_failure, bounced, [this, step, current, bounced, dead, done] {
        for (BrokerId id : bounced) live_[id] = current.at(id);
        step(&Controller::on_broker_startup, bounced, [this, step, dead, done] {
          step(&Controller::on_broker_failure, dead, [this, done] {
            departed_.clear();
            done();
          });
        });
      });
    });
  });
}

void Controller::on_broker_failure(const std::vector<BrokerId>& brokers, const BatchPtr& batch,
                                   Done done) {
  if (brokers.empty()) {
    done();
    return;
  }
  for (BrokerId b : brokers) {
    live_.erase(b);
    held_.erase(b);  // removeBroker: its queue goes with it
    shutting_down_.erase(b);
  }
  batch->metadata_to_all = true;
  // KafkaController.onReplicasBecomeOffline: every partition without a
  // leader online — one of these brokers', or one a broker still shutting
  // down could not hand over.
  std::vector<TopicPartition> led;
  for (const auto& [tp, info] : partitions_) {
    if (!info.state) continue;
    if (!online(info.state->leader)) offline_.insert(tp);
    // triggerOnlinePartitionStateChange: every partition offline, these
    // and the ones no election could serve before.
    if (offline_.count(tp) != 0) led.push_back(tp);
  }
  elect(led, ElectionKind::offline, batch, [this, brokers, batch, done] {
    in_sequence(
        brokers.size(),
        [this, brokers, batch](size_t i, Done next) {
          // Every replica the broker holds goes offline (OfflineReplica);
          // whether it is still in an ISR is read from ZooKeeper, as a
          // leader may have added it back since the controller last heard.
          std::vector<TopicPartition> tps;
          for (const auto& [tp, info] : partitions_) {
            if (info.state && contains(info.replicas, brokers[i])) tps.push_back(tp);
          }
          remove_from_isr(tps, brokers[i], batch, std::move(next));
        },
        done);
  });
}

void Controller::on_broker_startup(const std::vector<BrokerId>& brokers, const BatchPtr& batch,
                                   Done done) {
  if (brokers.empty()) {
    done();
    return;
  }
  // KafkaController.onBrokerStartup begins with UpdateMetadata, sent at
  // once: the brokers already up learn of the new ones (no partition
  // states), the new ones get every partition's state, so a new broker's
  // cache is filled before its LeaderAndIsr arrives on the same connection.
  // The new replicas' LeaderAndIsr and the elections (which may take
  // ZooKeeper round trips first) go out as the step ends.
  std::vector<BrokerId> existing;
  for (const auto& [b, _] : live_) {
    if (!contains(brokers, b)) existing.push_back(b);
  }
  std::vector<PartitionState> all_states;
  for (const auto& [tp, info] : partitions_) {
    if (info.state) all_states.push_back(state_of(tp));
  }
  send_update_metadata(existing, {});
  send_update_metadata(brokers, all_states);
  batch->metadata_to_all = true;
  for (const auto& [tp, info] : partitions_) {
    if (!info.state) continue;
    batch->metadata.insert(tp);
    for (BrokerId b : brokers) {
      if (contains(info.replicas, b)) batch->leader_and_isr[b].push_back(state_of(tp));
    }
  }
  // The new brokers may make offline or new partitions electable; one
  // whose stored leader is a broker that came back is elected again.
  std::vector<TopicPartition> offline, fresh;
  for (const auto& [tp, info] : partitions_) {
    if (!info.state) {
      fresh.push_back(tp);
    } else if (!alive(info.state->leader) || offline_.count(tp) != 0) {
      offline.push_back(tp);
    }
  }
  elect(offline, ElectionKind::offline, batch, [this, fresh, batch, done] {
    create_partitions(fresh, batch, done);
  });
}

// --- topics ---------------------------------------------------------------------------

void Controller::on_topic_change(Done done) {
  zk_get_children(znodes::kBrokerTopics, true, [this, done](zk::Error e,
                                                            const std::vector<std::string>& ts) {
    if (e != zk::Error::ok) {
      done();
      return;
    }
    std::vector<std::string> added;
    for (const std::string& t : ts) {
      if (topics_.count(t) == 0) added.push_back(t);
    }
    if (added.empty()) {
      done();
      return;
    }
    env_.ctx->trace("controller_new_topics", {{"topics", [&] {
                                                 std::string s;
                                                 for (const auto& t : added) s += (s.empty() ? "" : ",") + t;
                                                 return s;
                                               }()}});
    load_topics(added, [this, added, done] {
      std::vector<TopicPartition> fresh;
      for (const auto& [tp, info] : partitions_) {
        if (!info.state && std::find(added.begin(), added.end(), tp.topic) != added.end()) {
          fresh.push_back(tp);
        }
      }
      auto batch = std::make_shared<Batch>();
      create_partitions(fresh, batch, [this, batch, done] {
        send(*batch);
        done();
      });
    });
  });
}

void Controller::create_partitions(std::vector<TopicPartition> tps, const BatchPtr& batch,
                                   Done done) {
  // NewPartition -> OnlinePartition: the first live replica leads, every
  // live replica is in the ISR, leader epoch 0.
  std::vector<TopicPartition> creatable;
  for (const TopicPartition& tp : tps) {
    const PartitionInfo& info = change_partition(tp);
    bool any_live = false;
    for (BrokerId r : info.replicas) any_live = any_live || alive(r);
    if (any_live) {
      creatable.push_back(tp);
    } else {
      env_.ctx->trace("controller_partition_unassignable", {{"partition", to_string(tp)}});
    }
  }
  auto step = join(creatable.size(), std::move(done));
  for (const TopicPartition& tp : creatable) {
    // Parents first (ignoring NODEEXISTS), then the state under the fence.
    zk_create(znodes::partitions_path(tp.topic), "", [this, tp, batch, step](zk::Error, const std::string&) {
      zk_create(znodes::partition_path(tp), "", [this, tp, batch, step](zk::Error, const std::string&) {
        const PartitionInfo& info = change_partition(tp);
        znodes::LeaderAndIsr s;
        for (BrokerId r : info.replicas) {
          if (!alive(r)) continue;
          if (s.leader == kNoBroker) s.leader = r;
          s.isr.push_back(r);
        }
        s.leader_epoch = LeaderEpoch{0};
        s.controller_epoch = epoch_;
        zk_multi({zk::CreateOp{path(znodes::partition_state_path(tp)),
                               znodes::encode_partition_state(s), zk::CreateMode::persistent}},
                 [this, tp, s, batch, step](zk::Error e, const std::vector<zk::Error>&) {
                   if (e == zk::Error::ok) {
                     PartitionInfo& info = change_partition(tp);
                     info.state = s;
                     info.zk_version = 0;
                     trace_state(tp, "new");
                     add_leader_and_isr(batch, tp, /*is_new=*/true);
                     step();
                     return;
                   }
                   // Someone (an earlier controller) created it: adopt it.
                   load_states({tp}, [this, tp, batch, step] {
                     if (change_partition(tp).state) add_leader_and_isr(batch, tp);
                     step();
                   });
                 });
      });
    });
  }
}

// --- ISR change notifications -------------------------------------------------------

void Controller::on_isr_change(Done done) {
  zk_get_children(znodes::kIsrChangeNotification, true,
                  [this, done](zk::Error e, const std::vector<std::string>& children) {
                    if (e != zk::Error::ok || children.empty()) {
                      done();
                      return;
                    }
                    auto changed = std::make_shared<std::set<TopicPartition>>();
                    auto step = join(children.size(), [this, changed, done] {
                      std::vector<TopicPartition> tps(changed->begin(), changed->end());
                      load_states(tps, [this, tps, done] {
                        auto batch = std::make_shared<Batch>();
                        for (const TopicPartition& tp : tps) {
                          if (change_partition(tp).state) batch->metadata.insert(tp);
                        }
                        send(*batch);
                        done();
                      });
                    });
                    for (const std::string& c : children) {
                      const std::string p = znodes::kIsrChangeNotification + "/" + c;
                      zk_get_data(p, false, [this, p, changed, step](zk::Error e, const std::string& data,
                                                                     const std::optional<zk::Stat>&) {
                        if (e == zk::Error::ok) {
                          if (auto tps = znodes::decode_isr_change(data)) {
                            for (const TopicPartition& tp : *tps) {
                              if (partitions_.count(tp) != 0) changed->insert(tp);
                            }
                          }
                        }
                        zk_remove(p, [step](zk::Error) { step(); });
                      });
                    }
                  });
}

// --- elections and ISR changes -------------------------------------------------------

bool Controller::unclean_allowed(const std::string& topic) const {
  bool allowed = env_.config->log.unclean_leader_election;
  auto it = topic_configs_.find(topic);
  if (it != topic_configs_.end()) {
    auto v = it->second.find("unclean.leader.election.enable");
    if (v != it->second.end()) allowed = v->second == "true";
  }
  return allowed;
}

void Controller::elect(std::vector<TopicPartition> tps, ElectionKind kind, const BatchPtr& batch,
                       Done done) {
  Decide decide = [this, kind](const TopicPartition& tp,
                               const PartitionInfo& info) -> std::optional<znodes::LeaderAndIsr> {
    if (!info.state) return std::nullopt;
    const znodes::LeaderAndIsr& cur = *info.state;
    znodes::LeaderAndIsr next = cur;
    next.leader = kNoBroker;
    switch (kind) {
      case ElectionKind::offline: {
        // PartitionStateMachine.leaderForOffline: the replicas online are
        // the live brokers that are not shutting down
        // (ControllerContext.isReplicaOnline without includeShuttingDownBrokers).
        // Settled meanwhile — unless it is still OfflinePartition, whose
        // leader came back: it is elected again all the same.
        if (online(cur.leader) && offline_.count(tp) == 0) return std::nullopt;
        std::vector<BrokerId> live_isr;
        for (BrokerId r : cur.isr) {
          if (online(r)) live_isr.push_back(r);
        }
        for (BrokerId r : info.replicas) {
          if (contains(live_isr, r)) {
            next.leader = r;
            break;
          }
        }
        if (next.leader != kNoBroker) {
          next.isr = live_isr;
        } else if (unclean_allowed(tp.topic)) {
          for (BrokerId r : info.replicas) {
            if (online(r)) {
              next.leader = r;
              break;
            }
          }
          if (next.leader == kNoBroker) return std::nullopt;
          next.isr = {next.leader};
          env_.ctx->trace("unclean_leader_election",
                          {{"partition", to_string(tp)}, {"leader", next.leader}});
        } else {
          env_.ctx->trace("partition_offline", {{"partition", to_string(tp)},
                                                {"isr", join_ids(cur.isr)}});
          return std::nullopt;
        }
        break;
      }
      case ElectionKind::controlled_shutdown: {
        if (!shutting_down_.count(cur.leader)) return std::nullopt;
        for (BrokerId r : info.replicas) {
          if (alive(r) && contains(cur.isr, r) && shutting_down_.count(r) == 0) {
            next.leader = r;
            break;
          }
        }
        if (next.leader == kNoBroker) return std::nullopt;
        next.isr.clear();
        for (BrokerId r : cur.isr) {
          if (shutting_down_.count(r) == 0) next.isr.push_back(r);
        }
        break;
      }
      case ElectionKind::preferred: {
        if (info.replicas.empty()) return std::nullopt;
        const BrokerId preferred = info.replicas.front();
        if (cur.leader == preferred || !alive(preferred) || !contains(cur.isr, preferred) ||
            shutting_down_.count(preferred) != 0) {
          return std::nullopt;
        }
        next.leader = preferred;
        break;
      }
    }
    next.leader_epoch = LeaderEpoch{cur.leader_epoch.value + 1};
    next.controller_epoch = epoch_;
    return next;
  };
  // A partition whose election is written leaves OfflinePartition.
  auto decided = std::make_shared<std::map<TopicPartition, znodes::LeaderAndIsr>>();
  Decide record = [decide = std::move(decide), decided](const TopicPartition& tp,
                                                        const PartitionInfo& info) {
    std::optional<znodes::LeaderAndIsr> next = decide(tp, info);
    if (next) (*decided)[tp] = *next;
    return next;
  };
  update_states(std::move(tps), std::move(record), batch, [this, decided, done = std::move(done)] {
    for (const auto& [tp, next] : *decided) {
      const PartitionInfo& info = partitions_.at(tp);
      if (info.state && *info.state == next) offline_.erase(tp);
    }
    done();
  });
}

void Controller::remove_from_isr(std::vector<TopicPartition> tps, BrokerId replica,
                                 const BatchPtr& batch, Done done) {
  Decide decide = [this, replica](const TopicPartition&,
                                  const PartitionInfo& info) -> std::optional<znodes::LeaderAndIsr> {
    if (!info.state || !contains(info.state->isr, replica)) return std::nullopt;
    znodes::LeaderAndIsr next = *info.state;
    if (next.leader == replica) next.leader = kNoBroker;
    // The last ISR member stays: it is the one that has all the data.
    if (next.isr.size() > 1) {
      next.isr.erase(std::remove(next.isr.begin(), next.isr.end(), replica), next.isr.end());
    }
    next.leader_epoch = LeaderEpoch{next.leader_epoch.value + 1};
    next.controller_epoch = epoch_;
    return next;
  };
  update_states(std::move(tps), std::move(decide), batch, std::move(done));
}

void Controller::update_states(std::vector<TopicPartition> tps, Decide decide,
                               const BatchPtr& batch, Done done) {
  if (tps.empty()) {
    done();
    return;
  }
  load_states(tps, [this, tps, decide = std::move(decide), batch, done = std::move(done)]() mutable {
    write_states(std::move(tps), std::move(decide), batch, std::move(done), 0);
  });
}

void Controller::write_states(std::vector<TopicPartition> tps, Decide decide,
                              const BatchPtr& batch, Done done, int attempt) {
  std::vector<std::pair<TopicPartition, znodes::LeaderAndIsr>> writes;
  for (const TopicPartition& tp : tps) {
    auto it = partitions_.find(tp);
    if (it == partitions_.end()) continue;
    if (auto next = decide(tp, it->second)) writes.emplace_back(tp, *next);
  }
  // A write whose answer was lost (CONNECTIONLOSS after it was applied)
  // comes back as BADVERSION on the resend; reading the state back then
  // shows our own write, which counts as done (Kafka re-elects in that case
  // and sends the result; either way the replicas hear of it).
  auto retry = std::make_shared<std::map<TopicPartition, znodes::LeaderAndIsr>>();
  auto step = join(writes.size(), [this, retry, decide, batch, done, attempt] {
    if (retry->empty() || attempt >= 5) {
      done();
      return;
    }
    std::vector<TopicPartition> again;
    for (const auto& [tp, _] : *retry) again.push_back(tp);
    load_states(again, [this, retry, again, decide, batch, done, attempt] {
      std::vector<TopicPartition> redo;
      for (const TopicPartition& tp : again) {
        const PartitionInfo& info = change_partition(tp);
        if (info.state && *info.state == retry->at(tp)) {
          trace_state(tp, "controller");
          add_leader_and_isr(batch, tp);
        } else {
          redo.push_back(tp);
        }
      }
      write_states(redo, decide, batch, done, attempt + 1);
    });
  });
  for (auto& [tp, next] : writes) {
    const int32_t version = change_partition(tp).zk_version;
    zk_multi({zk::SetDataOp{path(znodes::partition_state_path(tp)),
                            znodes::encode_partition_state(next), version}},
             [this, tp = tp, next = next, batch, retry, step](zk::Error e,
                                                              const std::vector<zk::Error>&) {
               if (e == zk::Error::ok) {
                 PartitionInfo& info = change_partition(tp);
                 info.state = next;
                 info.zk_version += 1;
                 trace_state(tp, "controller");
                 add_leader_and_isr(batch, tp);
               } else {
                 (*retry)[tp] = next;
               }
               step();
             });
  }
}

// --- requests to brokers ---------------------------------------------------------------

PartitionState Controller::state_of(const TopicPartition& tp, bool is_new) const {
  const PartitionInfo& info = partitions_.at(tp);
  PartitionState s;
  s.tp = tp;
  s.replicas = info.replicas;
  s.zk_version = info.zk_version;
  s.is_new = is_new;
  if (info.state) {
    s.controller_epoch = info.state->controller_epoch;
    s.leader = info.state->leader;
    s.leader_epoch = info.state->leader_epoch;
    s.isr = info.state->isr;
  } else {
    s.leader_epoch = LeaderEpoch{-1};
  }
  return s;
}

void Controller::add_leader_and_isr(const BatchPtr& batch, const TopicPartition& tp, bool is_new,
                                    BrokerId except) {
  const PartitionInfo& info = partitions_.at(tp);
  for (BrokerId r : info.replicas) {
    if (!alive(r) || r == except) continue;
    auto& list = batch->leader_and_isr[r];
    // A later decision in the same batch replaces an earlier one.
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const PartitionState& s) { return s.tp == tp; }),
               list.end());
    list.push_back(state_of(tp, is_new));
  }
  batch->metadata.insert(tp);
}

std::vector<LiveBroker> Controller::live_list() const {
  std::vector<LiveBroker> out;
  for (const auto& [id, reg] : live_) out.push_back({id, reg.first});
  return out;
}

void Controller::send(const Batch& batch) {
  if (!active_) return;
  const BrokerId me = env_.config->broker_id;
  for (const auto& [broker, states] : batch.leader_and_isr) {
    if (!alive(broker) || states.empty()) continue;
    LeaderAndIsrRequest r{me, epoch_, states, {}};
    std::set<BrokerId> leaders;
    for (const PartitionState& s : states) {
      if (alive(s.leader)) leaders.insert(s.leader);
    }
    for (BrokerId l : leaders) r.live_leaders.push_back({l, live_.at(l).first});
    send_request(broker, std::move(r));
  }
  if (batch.metadata_to_all || !batch.metadata.empty()) {
    std::vector<PartitionState> states;
    for (const TopicPartition& tp : batch.metadata) {
      if (partitions_.at(tp).state) states.push_back(state_of(tp));
    }
    std::vector<BrokerId> all;
    for (const auto& [broker, _] : live_) all.push_back(broker);
    send_update_metadata(all, states);
  }
  for (const auto& [broker, tps] : batch.stop_replica) {
    if (alive(broker)) send_request(broker, StopReplicaRequest{me, epoch_, false, tps});
  }
}

void Controller::send_update_metadata(const std::vector<BrokerId>& to,
                                      const std::vector<PartitionState>& states) {
  for (BrokerId broker : to) {
    send_request(broker, UpdateMetadataRequest{env_.config->broker_id, epoch_, states, live_list()});
  }
}

void Controller::send_request(BrokerId to, Request request) {
  if (!alive(to) || !active_ || departed_.count(to) != 0) return;
  if (auto held = held_.find(to); held != held_.end()) {
    held->second.push_back(std::move(request));  // behind the one being retried
    return;
  }
  transmit(to, std::move(request));
}

void Controller::transmit(BrokerId to, Request request) {
  const Endpoint& ep = live_.at(to).first;
  auto copy = std::make_shared<Request>(request);
  channel_.send(to, NodeAddress{ep.host, ep.port}, std::move(request),
                [this, to, copy](SendError error, const Response*) {
                  if (error == SendError::none || !active_ || !alive(to)) return;
                  // RequestSendThread keeps resending to a live broker. The
                  // requests queued behind this one fail with it, in order,
                  // and join it.
                  auto [held, first] = held_.try_emplace(to);
                  held->second.push_back(std::move(*copy));
                  if (first) env_.ctx->after(kResendDelay, [this, to] { release_held(to); });
                });
}

void Controller::release_held(BrokerId to) {
  auto held = held_.find(to);
  if (held == held_.end()) return;
  std::vector<Request> requests = std::move(held->second);
  held_.erase(held);
  for (Request& r : requests) send_request(to, std::move(r));
}

// --- AlterIsr ----------------------------------------------------------------------------

void Controller::alter_isr(AlterIsrRequest request, std::function<void(AlterIsrResponse)> reply) {
  reply = once(std::move(reply));
  std::vector<TopicPartition> tps;
  for (const AlterIsrPartition& p : request.partitions) tps.push_back(p.tp);
  enqueue(
      "AlterIsr",
      [this, request = std::move(request), reply](Done done) { do_alter_isr(request, reply, std::move(done)); },
      [reply, tps = std::move(tps)](AbortCase why) {
        // processAlterIsr (2.8.2; tryProcessAlterPartition in 3.9): an
        // inactive controller says NOT_CONTROLLER. The running event's
        // fenced write fails the whole request (updateLeaderAndIsr rethrows
        // ControllerMovedException, caught as UNKNOWN_SERVER_ERROR); an
        // expired session fails each partition's write
        // (UNKNOWN_SERVER_ERROR per partition). AlterIsrReceived.preempt()
        // answers nothing: the leader waits for its request timeout.
        switch (why) {
          case AbortCase::queued:
            reply(AlterIsrResponse{ErrorCode::not_controller, {}});
            return;
          case AbortCase::running_fenced:
            reply(AlterIsrResponse{ErrorCode::unknown_server_error, {}});
            return;
          case AbortCase::running_expired: {
            AlterIsrResponse r;
            for (const TopicPartition& tp : tps) {
              AlterIsrPartitionResponse p;
              p.tp = tp;
              p.error = ErrorCode::unknown_server_error;
              r.partitions.push_back(std::move(p));
            }
            reply(std::move(r));
            return;
          }
          case AbortCase::preempted:
            return;
        }
      });
}

void Controller::allocate_producer_ids(AllocateProducerIdsRequest request,
                                       std::function<void(AllocateProducerIdsResponse)> reply) {
  reply = once(std::move(reply));
  enqueue(
      "AllocateProducerIds",
      [this, request, reply](Done done) {
        // KafkaController.processAllocateProducerIds (3.1.0, 3.9).
        auto registered = live_.find(request.broker_id);
        if (registered == live_.end()) {
          reply(AllocateProducerIdsResponse{ErrorCode::broker_id_not_registered, kNoProducerId, 0});
          done();
          return;
        }
        if (registered->second.second != request.broker_epoch) {
          reply(AllocateProducerIdsResponse{ErrorCode::stale_broker_epoch, kNoProducerId, 0});
          done();
          return;
        }
        claim_producer_ids(request.broker_id, reply, std::move(done));
      },
      [reply](AbortCase why) {
        // An inactive controller says NOT_CONTROLLER; a claim cut short by
        // the controller's end fails as its ZooKeeper call did (an
        // exception, UNKNOWN_SERVER_ERROR); a preempted event answers nothing.
        switch (why) {
          case AbortCase::queued:
            reply(AllocateProducerIdsResponse{ErrorCode::not_controller, kNoProducerId, 0});
            return;
          case AbortCase::running_fenced:
          case AbortCase::running_expired:
            reply(AllocateProducerIdsResponse{ErrorCode::unknown_server_error, kNoProducerId, 0});
            return;
          case AbortCase::preempted:
            return;
        }
      });
}

void Controller::claim_producer_ids(BrokerId broker, std::function<void(AllocateProducerIdsResponse)> reply,
                                    Done done) {
  // ZkProducerIdManager.getNewProducerIdBlock on the controller's thread: a
  // plain conditional write, not fenced by the controller epoch; a lost
  // connection is waited out as KafkaZkClient does.
  claim_producer_id_block(
      *env_.zk, path(znodes::kLatestProducerIdBlock), broker,
      [this, broker, reply, done](zk::Error e, const znodes::ProducerIdBlock* block) {
        if (!active_) return;  // answered by the abort
        if (e == zk::Error::connection_loss) {
          env_.ctx->after(kZkRetryDelay, [this, broker, reply, done] {
            if (active_) claim_producer_ids(broker, reply, done);
          });
          return;
        }
        if (block == nullptr) {
          reply(AllocateProducerIdsResponse{ErrorCode::unknown_server_error, kNoProducerId, 0});
        } else {
          env_.ctx->trace("producer_ids_allocated",
                          {{"broker", broker}, {"start", block->block_start}, {"end", block->block_end}});
          reply(AllocateProducerIdsResponse{ErrorCode::none, block->block_start,
                                            static_cast<int32_t>(block->block_end - block->block_start + 1)});
        }
        done();
      });
}

void Controller::do_alter_isr(const AlterIsrRequest& request,
                              std::function<void(AlterIsrResponse)> reply, Done done) {
  // KafkaController.processAlterIsr (2.8) / tryProcessAlterPartition (3.9).
  auto registered = live_.find(request.broker_id);
  if (registered == live_.end() || registered->second.second != request.broker_epoch) {
    reply(AlterIsrResponse{ErrorCode::stale_broker_epoch, {}});
    done();
    return;
  }
  const bool checks = env_.config->replication_rules.alter_partition_checks;
  auto response = std::make_shared<AlterIsrResponse>();
  auto refuse = [&](const TopicPartition& tp, ErrorCode e) {
    AlterIsrPartitionResponse p;
    p.tp = tp;
    p.error = e;
    response->partitions.push_back(std::move(p));
  };
  auto accept = [](const TopicPartition& tp, const znodes::LeaderAndIsr& s, int32_t version) {
    return AlterIsrPartitionResponse{tp, ErrorCode::none, s.leader, s.leader_epoch, s.isr, version};
  };
  auto sorted = [](std::vector<BrokerId> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  std::vector<std::pair<AlterIsrPartition, znodes::LeaderAndIsr>> writes;
  for (const AlterIsrPartition& change : request.partitions) {
    auto it = partitions_.find(change.tp);
    if (it == partitions_.end() || !it->second.state) {
      refuse(change.tp, ErrorCode::unknown_topic_or_partition);
      continue;
    }
    const znodes::LeaderAndIsr& current = *it->second.state;
    const int32_t version = it->second.zk_version;
    const znodes::LeaderAndIsr next{request.broker_id, change.leader_epoch, change.new_isr, epoch_};
    const bool unchanged = current.leader == next.leader && current.leader_epoch == next.leader_epoch &&
                           sorted(current.isr) == sorted(next.isr);
    if (checks && (change.zk_version > version || change.leader_epoch > current.leader_epoch)) {
      // The leader knows a newer state than this controller: likely no
      // longer the controller; the leader looks for the new one.
      refuse(change.tp, ErrorCode::not_controller);
    } else if (change.leader_epoch < current.leader_epoch) {
      refuse(change.tp, ErrorCode::fenced_leader_epoch);
    } else if (unchanged) {
      // Already so (an answer lost, the request sent again): the state as it is.
      response->partitions.push_back(accept(change.tp, current, version));
    } else if (checks && change.zk_version < version) {
      refuse(change.tp, ErrorCode::invalid_update_version);
    } else if (checks && std::any_of(change.new_isr.begin(), change.new_isr.end(),
                                     [this](BrokerId b) { return !online(b); })) {
      // KIP-841: every member alive and not shutting down
      // (ControllerContext.liveBrokerIds); a request before version 2 gets
      // the older error.
      refuse(change.tp, request.by_topic_id ? ErrorCode::ineligible_replica
                                            : ErrorCode::operation_not_attempted);
    } else {
      writes.emplace_back(change, next);
    }
  }
  // Each write is conditional on the version the leader knows
  // (KafkaZkClient.updateLeaderAndIsr with the request's currentIsrVersion);
  // then UpdateMetadata for every partition asked about goes to the live
  // brokers, and the answer to the leader.
  auto finish = join(writes.size(), [this, request, response, reply, done] {
    auto batch = std::make_shared<Batch>();
    for (const AlterIsrPartition& change : request.partitions) {
      auto it = partitions_.find(change.tp);
      if (it != partitions_.end() && it->second.state) batch->metadata.insert(change.tp);
    }
    send(*batch);
    reply(std::move(*response));
    done();
  });
  for (auto& [change, next] : writes) {
    zk_multi({zk::SetDataOp{path(znodes::partition_state_path(change.tp)),
                            znodes::encode_partition_state(next), change.zk_version}},
             [this, tp = change.tp, next = next, version = change.zk_version, response, accept, finish](
                 zk::Error e, const std::vector<zk::Error>&) {
               if (e == zk::Error::ok) {
                 PartitionInfo& info = change_partition(tp);
                 info.state = next;
                 info.zk_version = version + 1;
                 trace_state(tp, "alter_isr");
                 response->partitions.push_back(accept(tp, next, version + 1));
               } else {
                 AlterIsrPartitionResponse p;
                 p.tp = tp;
                 p.error = e == zk::Error::bad_version ? ErrorCode::invalid_update_version
                                                       : ErrorCode::unknown_server_error;
                 response->partitions.push_back(std::move(p));
               }
               finish();
             });
  }
}

// --- controlled shutdown ---------------------------------------------------------------

std::vector<TopicPartition> Controller::still_led_by(BrokerId id) const {
  std::vector<TopicPartition> led;
  for (const auto& [tp, info] : partitions_) {
    if (info.state && info.state->leader == id && info.replicas.size() > 1) led.push_back(tp);
  }
  return led;
}

void Controller::controlled_shutdown(BrokerId id, int64_t broker_epoch,
                                     std::function<void(ControlledShutdownResponse)> reply) {
  (void)broker_epoch;
  reply = once(std::move(reply));
  enqueue(
      "ControlledShutdown",
      [this, id, reply](Done done) { do_controlled_shutdown(id, reply, std::move(done)); },
      // doControlledShutdown fails with ControllerMovedException, and
      // ControlledShutdown.preempt answers with it too. With the session
      // expired, the state changes swallow their failed writes
      // (handleStateChanges catches them) and the answer lists the
      // partitions the broker still leads.
      [this, id, reply](AbortCase why) {
        if (why != AbortCase::running_expired) {
          reply(ControlledShutdownResponse{ErrorCode::not_controller, {}});
          return;
        }
        reply(ControlledShutdownResponse{ErrorCode::none, still_led_by(id)});
      });
}

void Controller::do_controlled_shutdown(BrokerId id,
                                        std::function<void(ControlledShutdownResponse)> reply,
                                        Done done) {
  if (!alive(id)) {
    reply(ControlledShutdownResponse{ErrorCode::broker_not_available, {}});
    done();
    return;
  }
  shutting_down_.insert(id);
  env_.ctx->trace("controlled_shutdown", {{"broker", id}});
  std::vector<TopicPartition> led, followed;
  for (const auto& [tp, info] : partitions_) {
    if (!info.state || info.replicas.size() <= 1 || !contains(info.replicas, id)) continue;
    (info.state->leader == id ? led : followed).push_back(tp);
  }
  auto batch = std::make_shared<Batch>();
  elect(led, ElectionKind::controlled_shutdown, batch, [this, id, led, followed, batch, reply, done] {
    for (const TopicPartition& tp : followed) batch->stop_replica[id].push_back(tp);
    remove_from_isr(followed, id, batch, [this, id, led, batch, reply, done] {
      // The broker going down hears of the partitions it led: their
      // elections send LeaderAndIsr to the live or shutting-down replicas
      // (leaderForControlledShutdown, PartitionStateMachine in 2.2,
      // Election.scala from 2.4), so it becomes their follower at once and a
      // coordinator of an offsets partition among them resigns. Of those it
      // followed it hears only StopReplica: taking it out of their ISR
      // (ReplicaStateMachine, OfflineReplica) sends LeaderAndIsr to the
      // other replicas only.
      for (auto& [b, states] : batch->leader_and_isr) {
        if (b == id) {
          std::vector<PartitionState> keep;
          for (const PartitionState& s : states) {
            if (std::find(led.begin(), led.end(), s.tp) != led.end()) keep.push_back(s);
          }
          states = keep;
        }
      }
      send(*batch);
      reply(ControlledShutdownResponse{ErrorCode::none, still_led_by(id)});
      done();
    });
  });
}

// --- preferred leader rebalance ----------------------------------------------------------

void Controller::schedule_rebalance(sim::Duration delay) {
  if (!env_.config->auto_leader_rebalance_enable || !active_) return;
  env_.ctx->cancel(rebalance_timer_);
  rebalance_timer_ = env_.ctx->after(delay, [this] {
    if (!active_) return;
    enqueue("AutoPreferredReplicaLeaderElection",
            [this](Done done) { auto_rebalance(std::move(done)); });
  });
}

void Controller::auto_rebalance(Done done) {
  std::vector<TopicPartition> elect_these;
  for (const auto& [broker, _] : live_) {
    int64_t total = 0, not_led = 0;
    std::vector<TopicPartition> candidates;
    for (const auto& [tp, info] : partitions_) {
      if (!info.state || info.replicas.empty() || info.replicas.front() != broker) continue;
      ++total;
      if (info.state->leader != broker) {
        ++not_led;
        if (contains(info.state->isr, broker) && shutting_down_.count(broker) == 0) {
          candidates.push_back(tp);
        }
      }
    }
    if (total == 0) continue;
    if (not_led * 100 > static_cast<int64_t>(env_.config->leader_imbalance_per_broker_percentage) * total) {
      elect_these.insert(elect_these.end(), candidates.begin(), candidates.end());
    }
  }
  const sim::Duration interval =
      sim::Duration::seconds(env_.config->leader_imbalance_check_interval_seconds);
  if (elect_these.empty()) {
    schedule_rebalance(interval);
    done();
    return;
  }
  env_.ctx->trace("preferred_replica_election", {{"partitions", static_cast<int64_t>(elect_these.size())}});
  auto batch = std::make_shared<Batch>();
  elect(elect_these, ElectionKind::preferred, batch, [this, batch, interval, done] {
    send(*batch);
    schedule_rebalance(interval);
    done();
  });
}

void Controller::trace_state(const TopicPartition& tp, const char* why) {
  const PartitionInfo& info = partitions_.at(tp);
  if (!info.state) return;
  env_.ctx->trace("partition_state", {{"partition", to_string(tp)},
                                      {"leader", info.state->leader},
                                      {"leader_epoch", info.state->leader_epoch.value},
                                      {"isr", join_ids(info.state->isr)},
                                      {"controller_epoch", info.state->controller_epoch.value},
                                      {"by", why}});
}

}  // namespace kafka
