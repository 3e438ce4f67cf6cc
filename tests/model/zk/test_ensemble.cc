// Scenario tests of the ZooKeeper ensemble and client, in the small DSL of
// ensemble.h. Timing bounds follow from tickTime / initLimit / syncLimit and
// the session timeout; each test says which.
#include <gtest/gtest.h>

#include <sstream>

#include <fmt/format.h>

#include "zk/ensemble.h"

#include <fstream>

namespace zk::testing {
namespace {

using sim::Duration;

Error create(Ensemble& e, ClientProcess* c, const std::string& path, const std::string& data = "",
             CreateMode mode = CreateMode::persistent) {
  auto r = await<Error>(e, [&](std::function<void(Error)> done) {
    c->client().create(path, data, mode, [done](Error err, const std::string&) { done(err); });
  });
  return r.value_or(Error::operation_timeout);
}

std::optional<std::string> get(Ensemble& e, ClientProcess* c, const std::string& path) {
  auto r = await<std::optional<std::string>>(e, [&](auto done) {
    c->client().get_data(path, false, [done](Error err, const std::string& data, const auto&) {
      done(err == Error::ok ? std::optional<std::string>(data) : std::nullopt);
    });
  });
  return r.value_or(std::nullopt);
}

TEST(ZkEnsemble, ThreeServersElectExactlyOneLeader) {
  Ensemble e;
  e.start();
  // An election needs a few notification rounds plus finalizeWait (200 ms);
  // syncing the followers needs a few round trips. Well under one tick.
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
  ASSERT_TRUE(e.leader().has_value());
  // With empty logs the highest server id wins.
  EXPECT_EQ(*e.leader(), 3);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(e.server(i)->current_epoch(), 1u) << i;
    EXPECT_EQ(e.server(i)->leader(), std::optional<ServerId>(3)) << i;
  }
}

TEST(ZkEnsemble, KillingTheLeaderElectsAnotherWithinABound) {
  Ensemble e;
  e.start();
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
  const int old_leader = *e.leader();
  const sim::Time killed_at = e.world().now();
  e.world().kill(e.process(old_leader));
  // The followers' connections are reset at once, so they start looking
  // immediately; the new leader must be established within initLimit ticks.
  ASSERT_TRUE(e.run_until(
      [&] { return e.leader().has_value() && e.serving_count() == 2; },
      Duration::millis(2000 * 10)));
  EXPECT_NE(*e.leader(), old_leader);
  EXPECT_LT(e.world().now() - killed_at, Duration::seconds(2));
  EXPECT_EQ(e.server(*e.leader())->current_epoch(), 2u);
}

TEST(ZkEnsemble, PoweringOffTheLeaderIsNoticedAfterSyncLimit) {
  Ensemble e;  // tick 2 s, syncLimit 5: followers give up on a silent leader after 10 s
  e.start();
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
  const int old_leader = *e.leader();
  const sim::Time off_at = e.world().now();
  e.world().power_off(e.host(old_leader));
  e.run_for(Duration::seconds(9));
  EXPECT_EQ(e.serving_count(), 2) << "followers must still trust the leader before syncLimit";
  ASSERT_TRUE(e.run_until([&] { return e.leader().has_value(); }, Duration::seconds(10)));
  EXPECT_GE(e.world().now() - off_at, Duration::seconds(10));
  EXPECT_LE(e.world().now() - off_at, Duration::seconds(14));
}

TEST(ZkEnsemble, WritesAndReadsThroughAnyServer) {
  Ensemble e;
  e.start();
  ClientProcess* c = e.add_client("app");
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(5)));
  EXPECT_EQ(create(e, c, "/brokers"), Error::ok);
  EXPECT_EQ(create(e, c, "/brokers/ids"), Error::ok);
  EXPECT_EQ(create(e, c, "/brokers/ids/1", "{\"host\":\"node1\"}", CreateMode::ephemeral), Error::ok);
  EXPECT_EQ(create(e, c, "/brokers"), Error::node_exists);
  EXPECT_EQ(get(e, c, "/brokers/ids/1"), std::optional<std::string>("{\"host\":\"node1\"}"));
  // Every server applied the same transactions.
  e.run_for(Duration::seconds(1));
  for (int i = 1; i <= 3; ++i) {
    EXPECT_EQ(e.server(i)->tree().digest(), e.server(1)->tree().digest()) << i;
    EXPECT_NE(e.server(i)->tree().find("/brokers/ids/1"), nullptr);
  }
}

TEST(ZkEnsemble, StaleVersionSetDataFailsAndMultiIsAtomic) {
  Ensemble e;
  e.start();
  ClientProcess* c = e.add_client("app");
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(5)));
  ASSERT_EQ(create(e, c, "/controller_epoch", "1"), Error::ok);
  auto set = [&](const std::string& data, int32_t version) {
    return await<Error>(e, [&](auto done) {
             c->client().set_data("/controller_epoch", data, version,
                                  [done](Error err, const auto&) { done(err); });
           })
        .value_or(Error::operation_timeout);
  };
  EXPECT_EQ(set("2", 0), Error::ok);          // version 0 -> 1
  EXPECT_EQ(set("3", 0), Error::bad_version);  // a zombie controller's stale write
  EXPECT_EQ(get(e, c, "/controller_epoch"), std::optional<std::string>("2"));

  // A fenced write as Kafka's controller does it: check the epoch znode's
  // version, then write; with a stale version nothing at all happens.
  auto multi = [&](int32_t epoch_version) {
    return await<std::pair<Error, std::vector<Error>>>(e, [&](auto done) {
             c->client().multi({CheckOp{"/controller_epoch", epoch_version},
                                CreateOp{"/state", "leader=1", CreateMode::persistent}},
                               [done](Error err, const std::vector<Error>& each) { done({err, each}); });
           })
        .value();
  };
  const auto stale = multi(0);
  EXPECT_EQ(stale.first, Error::bad_version);
  EXPECT_EQ(stale.second, (std::vector<Error>{Error::bad_version, Error::runtime_inconsistency}));
  EXPECT_EQ(get(e, c, "/state"), std::nullopt);
  const auto fresh = multi(1);
  EXPECT_EQ(fresh.first, Error::ok);
  EXPECT_EQ(get(e, c, "/state"), std::optional<std::string>("leader=1"));
}

TEST(ZkEnsemble, TwoOfThreeDownMeansNoServiceUntilOneReturns) {
  Ensemble e;
  e.start();
  ClientProcess* c = e.add_client("app");
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(5)));
  ASSERT_EQ(create(e, c, "/a"), Error::ok);
  e.world().power_off(e.host(1));
  e.world().power_off(e.host(2));
  // The survivor loses its quorum within syncLimit and stops serving.
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 0; }, Duration::seconds(15)));
  EXPECT_FALSE(e.leader().has_value());
  // No write can succeed: the client is disconnected and its request waits.
  Error result = Error::operation_timeout;
  bool answered = false;
  c->client().create("/b", "", CreateMode::persistent, [&](Error err, const std::string&) {
    result = err;
    answered = true;
  });
  e.run_for(Duration::seconds(30));
  EXPECT_TRUE(!answered || result != Error::ok);
  EXPECT_NE(c->client().state(), SessionState::connected);
  EXPECT_EQ(e.server(3)->tree().find("/b"), nullptr);
  // One server back: a quorum again, a leader, service.
  e.world().power_on(e.host(2));
  ASSERT_TRUE(e.run_until([&] { return e.leader().has_value() && e.serving_count() == 2; },
                          Duration::seconds(30)));
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected ||
                                       c->client().state() == SessionState::expired; },
                          Duration::seconds(30)));
  // The request was either failed with CONNECTIONLOSS or sent after the reconnect.
  ClientProcess* fresh = e.add_client("app2");
  ASSERT_TRUE(e.run_until([&] { return fresh->client().state() == SessionState::connected; },
                          Duration::seconds(10)));
  EXPECT_EQ(create(e, fresh, "/c"), Error::ok);
  EXPECT_NE(e.server(2)->tree().find("/a"), nullptr) << "a committed write survives";
}

TEST(ZkEnsemble, ALearnerThatJoinsAcksTheProposalsItsSyncCarried) {
  // Found by `kafkasim fuzz` (docs/fuzzing.md): a proposal outstanding when
  // the leader's only other follower is cut off reaches a quorum once a
  // returning server has synced — the returning server acks what its DIFF
  // carried (Leader.startForwarding) — instead of blocking every later commit.
  Ensemble e;
  e.start();
  ASSERT_TRUE(e.run_until([&] { return e.leader().has_value() && e.serving_count() == 3; }, Duration::seconds(10)));
  const int l = *e.leader();
  const int a = l % 3 + 1;
  const int b = a % 3 + 1;
  ClientProcess* c = e.add_client("app", 30000, fmt::format("10.0.0.{}:2181", l));
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; }, Duration::seconds(5)));
  e.world().kill(e.process(b));
  e.world().network().block(e.host(a), e.host(l));
  e.world().network().block(e.host(l), e.host(a));
  bool answered = false;
  Error result = Error::operation_timeout;
  c->client().create("/x", "", CreateMode::persistent, [&](Error err, const std::string&) {
    result = err;
    answered = true;
  });
  e.run_for(Duration::seconds(1));
  ASSERT_FALSE(answered) << "no follower has acked the proposal yet";
  e.world().start(e.process(b));
  ASSERT_TRUE(e.run_until([&] { return answered; }, Duration::seconds(8)));
  EXPECT_EQ(result, Error::ok);
  ASSERT_TRUE(e.run_until([&] { return e.server(b) != nullptr && e.server(b)->tree().find("/x") != nullptr; },
                          Duration::seconds(2)));
  // And the ensemble goes on committing.
  EXPECT_EQ(create(e, c, "/y"), Error::ok);
}

TEST(ZkEnsemble, TwoServerEnsembleStopsWhenEitherIsDown) {
  for (int down = 1; down <= 2; ++down) {
    Ensemble e(EnsembleOptions{.servers = 2});
    e.start();
    ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 2; }, Duration::seconds(5)));
    e.world().kill(e.process(down));
    ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 0; }, Duration::seconds(15)))
        << "server " << down << " down";
    e.run_for(Duration::seconds(60));
    EXPECT_EQ(e.serving_count(), 0);
    e.world().start(e.process(down));
    ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 2; }, Duration::seconds(30)));
  }
}

TEST(ZkEnsemble, SessionSurvivesAShortFailoverAndExpiresAfterALongOne) {
  Ensemble e;
  e.start();
  ClientProcess* c = e.add_client("broker", /*timeout_ms=*/6000);
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(5)));
  ASSERT_EQ(create(e, c, "/brokers"), Error::ok);
  ASSERT_EQ(create(e, c, "/brokers/1", "", CreateMode::ephemeral), Error::ok);
  const SessionId session = c->client().session();

  // Short: cut the client off for 3 s (less than the 6 s timeout).
  const sim::HostId client_host = *e.world().find_host("broker");
  e.world().network().isolate(client_host);
  e.run_for(Duration::seconds(3));
  e.world().network().heal();
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(10)));
  EXPECT_EQ(c->client().session(), session);
  e.run_for(Duration::seconds(10));
  EXPECT_NE(e.server(1)->tree().find("/brokers/1"), nullptr);

  // Long: 20 s. The leader expires the session (6 s, rounded up to a tick) and
  // deletes the ephemeral; the client only learns on reconnecting.
  e.world().network().isolate(client_host);
  e.run_for(Duration::seconds(20));
  EXPECT_EQ(e.server(*e.leader())->tree().find("/brokers/1"), nullptr);
  EXPECT_NE(c->client().state(), SessionState::expired) << "expiry is learnt on reconnect";
  e.world().network().heal();
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::expired; },
                          Duration::seconds(10)));
  EXPECT_EQ(c->states.back(), SessionState::expired);
}

// ClientCnxn gives a connection whose handshake goes unanswered (a paused
// server's kernel still accepts it) connectTimeout without a word: the
// negotiated session timeout over the server count, counted again from the
// TCP connection's completion (ClientCnxnSocketNIO.doTransport), and not the
// read timeout, which applies only to an established session.
TEST(ZkEnsemble, AnUnansweredHandshakeTimesOutAfterTheNegotiatedConnectTimeout) {
  Ensemble e(EnsembleOptions{.servers = 1});
  e.start();
  // Asks for 2 s; a tickTime of 2 s makes the server grant 4 s (2 ticks).
  ClientProcess* c = e.add_client("broker", /*timeout_ms=*/2000);
  // 0.7 s each way: a TCP connection takes 1.4 s to complete.
  const sim::HostId client_host = *e.world().find_host("broker");
  e.world().network().set_link_latency(client_host, e.host(1),
                                       sim::LatencyModel::constant(Duration::millis(700)));
  e.world().network().set_link_latency(e.host(1), client_host,
                                       sim::LatencyModel::constant(Duration::millis(700)));
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(10)));
  ASSERT_EQ(c->client().negotiated_timeout_ms(), 4000);

  e.world().pause(e.process(1));
  const size_t before = c->tcp_connected_at.size();
  e.run_for(Duration::seconds(45));
  // The first connection after the pause follows the read timeout; each
  // later one follows an unanswered handshake: 4 s after the last TCP
  // connection completed, a random 0-1 s pause and a second for the round,
  // then 1.4 s to connect. (The requested 2 s, or a clock started with the
  // try rather than the connection, or the read timeout, would come sooner.)
  const std::vector<sim::Time>& at = c->tcp_connected_at;
  ASSERT_GE(at.size(), before + 4);
  for (size_t i = before + 1; i < at.size(); ++i) {
    const int64_t gap_ms = (at[i] - at[i - 1]).us() / 1000;
    EXPECT_GE(gap_ms, 6400) << "connection " << i;
    EXPECT_LE(gap_ms, 7450) << "connection " << i;
  }
  EXPECT_NE(c->client().state(), SessionState::connected);
}

TEST(ZkEnsemble, WatchesFireOnceAndSurviveAReconnect) {
  Ensemble e;
  e.start();
  ClientProcess* watcher = e.add_client("watcher");
  ClientProcess* writer = e.add_client("writer");
  ASSERT_TRUE(e.run_until([&] {
    return watcher->client().state() == SessionState::connected &&
           writer->client().state() == SessionState::connected;
  }, Duration::seconds(5)));
  ASSERT_EQ(create(e, writer, "/brokers"), Error::ok);
  ASSERT_EQ(create(e, writer, "/brokers/ids"), Error::ok);
  auto watch_children = [&] {
    return await<Error>(e, [&](auto done) {
             watcher->client().get_children("/brokers/ids", true,
                                            [done](Error err, const auto&) { done(err); });
           })
        .value();
  };
  ASSERT_EQ(watch_children(), Error::ok);
  ASSERT_EQ(create(e, writer, "/brokers/ids/1", "", CreateMode::ephemeral), Error::ok);
  e.run_for(Duration::seconds(1));
  ASSERT_EQ(watcher->watches.size(), 1u);
  EXPECT_EQ(watcher->watches[0].type, EventType::node_children_changed);
  EXPECT_EQ(watcher->watches[0].path, "/brokers/ids");
  // One-shot: a second change without re-registering fires nothing.
  ASSERT_EQ(create(e, writer, "/brokers/ids/2", "", CreateMode::ephemeral), Error::ok);
  e.run_for(Duration::seconds(1));
  EXPECT_EQ(watcher->watches.size(), 1u);

  // Re-register, lose the connection, change the tree meanwhile: the watch
  // fires after the reconnect (SetWatches with the last zxid seen).
  ASSERT_EQ(watch_children(), Error::ok);
  const std::string server = *watcher->client().server();
  const sim::HostId watcher_host = *e.world().find_host("watcher");
  e.world().network().isolate(watcher_host);
  e.run_for(Duration::millis(500));
  ASSERT_EQ(create(e, writer, "/brokers/ids/3", "", CreateMode::ephemeral), Error::ok);
  e.run_for(Duration::seconds(2));
  e.world().network().heal();
  ASSERT_TRUE(e.run_until([&] { return watcher->watches.size() == 2; }, Duration::seconds(15)));
  EXPECT_EQ(watcher->watches[1].type, EventType::node_children_changed);
}

TEST(ZkEnsemble, ReplacedServerIsInvisibleToClientsWithTheOldConnectString) {
  // Seed 003: a ZooKeeper node dies and comes back as a new machine with a
  // new address; clients (and brokers) configured with the old addresses
  // never find it.
  Ensemble e;
  e.start();
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
  // The client only knows server 1.
  ClientProcess* c = e.add_client("broker", 6000, std::string("10.0.0.1:2181"));
  ASSERT_TRUE(e.run_until([&] { return c->client().state() == SessionState::connected; },
                          Duration::seconds(5)));
  e.world().power_off(e.host(1));
  e.world().replace_address(e.host(1), "10.0.0.11");
  e.world().power_on(e.host(1));
  // The ensemble itself is fine: server 1's peers still dial 10.0.0.1 and it
  // dials them, so at least the other two serve.
  ASSERT_TRUE(e.run_until([&] { return e.leader().has_value(); }, Duration::seconds(30)));
  e.run_for(Duration::seconds(60));
  EXPECT_NE(c->client().state(), SessionState::connected);
  // A client given the new address connects (server 1 serves only if it
  // rejoined; with 2 and 3 up, the new address reaches server 1's port).
  ClientProcess* updated = e.add_client("updated", 6000, std::string("10.0.0.2:2181"));
  EXPECT_TRUE(e.run_until([&] { return updated->client().state() == SessionState::connected; },
                          Duration::seconds(10)));
}

// QuorumCnxManager keeps one election connection per pair of servers, the
// one the larger id dialled: a dial from the smaller id is dropped once it
// has said who it is, and the larger id dials back (startConnection,
// handleConnection).
TEST(ZkEnsemble, EachPairKeepsOneElectionConnectionTheLargerIdDialled) {
  Ensemble e;
  e.start();
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
  const auto check_pairs = [&](const char* when) {
    for (int small = 1; small <= 3; ++small) {
      for (int large = small + 1; large <= 3; ++large) {
        EXPECT_EQ(e.server(large)->election_connection(static_cast<ServerId>(small)),
                  (Server::ElectionConnection{.up = true, .dialled = true}))
            << when << ": " << large << " to " << small;
        EXPECT_EQ(e.server(small)->election_connection(static_cast<ServerId>(large)),
                  (Server::ElectionConnection{.up = true, .dialled = false}))
            << when << ": " << small << " to " << large;
      }
    }
  };
  check_pairs("at the start");
  // A restarted server has no connections; its notifications to the larger
  // ids come back to it as their dials, and it dials the smaller ones.
  e.world().kill(e.process(2));
  e.world().start(e.process(2));
  ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(10)));
  check_pairs("after server 2 restarted");
}

// A server that comes back under an address its peers' and its own
// configurations do not give: it can keep only the connections it dials
// itself, those to smaller ids. The larger ids dial back to the address its
// hello names, the old one, in vain. So server 3 (the largest id) rejoins,
// and server 1 (the smallest) never hears a vote again.
TEST(ZkEnsemble, AServerUnderANewAddressRejoinsOnlyIfItHasTheLargerIds) {
  {
    Ensemble e;
    e.start();
    ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
    // Server 3 leads; 1 and 2 elect 2 without it, in a newer epoch, so that
    // it does not win again (its peers would dial its old address to follow).
    e.world().power_off(e.host(3));
    ASSERT_TRUE(e.run_until([&] { return e.leader() == std::optional<int>(2) && e.serving_count() == 2; },
                            Duration::seconds(30)));
    e.world().replace_address(e.host(3), "10.0.0.13");
    e.world().power_on(e.host(3));
    EXPECT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(30)))
        << "server 3 dials 1 and 2 itself, and follows 2 at its unchanged address";
    EXPECT_EQ(e.server(1)->election_connection(3), (Server::ElectionConnection{.up = true, .dialled = false}));
  }
  {
    Ensemble e;
    e.start();
    ASSERT_TRUE(e.run_until([&] { return e.serving_count() == 3; }, Duration::seconds(2)));
    e.world().power_off(e.host(1));
    e.world().replace_address(e.host(1), "10.0.0.11");
    e.world().power_on(e.host(1));
    e.run_for(Duration::seconds(60));
    EXPECT_EQ(e.serving_count(), 2);
    EXPECT_EQ(e.server(1)->state(), PeerState::looking);
    EXPECT_FALSE(e.server(2)->election_connection(1).up);
    EXPECT_FALSE(e.server(3)->election_connection(1).up);
  }
}

// The whole text trace of one election, pinned: any change in how elections
// run shows up as a diff. Regenerate with KAFKASIM_UPDATE_GOLDEN=1.
TEST(ZkEnsemble, GoldenElectionTrace) {
  Ensemble e(EnsembleOptions{.servers = 3, .seed = 7});
  std::ostringstream text;
  e.world().trace().set_text_sink(&text);
  e.start();
  e.run_for(Duration::seconds(2));
  e.world().kill(e.process(*e.leader()));
  e.run_for(Duration::seconds(3));
  const std::string path =
      std::string(KAFKASIM_SOURCE_DIR) + "/tests/model/zk/golden/election_seed7.txt";
  if (std::getenv("KAFKASIM_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << text.str();
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path;
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(text.str(), golden.str());
}

}  // namespace
}  // namespace zk::testing
