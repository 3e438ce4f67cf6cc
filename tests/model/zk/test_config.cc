// zoo.cfg as ZooKeeper reads it: the keys the model uses, the keys it
// accepts without effect, and an error naming the key for everything else.
#include <string>

#include <gtest/gtest.h>

#include "model/zk/config.h"

namespace zk {
namespace {

using model::ConfigError;
using model::parse_properties;

ServerConfig parse(const std::string& text, const std::string& extra = "") {
  return parse_server_config(parse_properties(text + extra, "zoo.cfg"));
}

// The error parsing `text` gives; fails the test when there is none.
ConfigError error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no ConfigError for:\n" << text;
  return ConfigError("", "", "");
}

// Kafka 3.1's config/zookeeper.properties with the lines the lab notebook in
// seeds/004 adds at its end, plus the myid file's content.
const std::string kSeedZooCfg =
    "# the directory where the snapshot is stored.\n"
    "dataDir=/tmp/zookeeper\n"
    "# the port at which the clients will connect\n"
    "clientPort=2181\n"
    "# disable the per-ip limit on the number of connections since this is a non-production "
    "config\n"
    "maxClientCnxns=0\n"
    "# Disable the adminserver by default to avoid port conflicts.\n"
    "# Set the port to something non-conflicting if choosing to enable this\n"
    "admin.enableServer=false\n"
    "# admin.serverPort=8080\n"
    "# zookeeper heartbeat in milliseconds\n"
    "tickTime=2000\n"
    "# Initial synchronization time\n"
    "initLimit=10\n"
    "# Ticks before timeout\n"
    "syncLimit=5\n"
    "# Next, define all the servers line by line as: server.<id>=IP:2888:3888\n"
    "server.1=46.183.113.89:2888:3888\n"
    "server.2=217.71.207.242:2888:3888\n"
    "myid=2\n";

const std::string kEnsemble =
    "tickTime=2000\n"
    "initLimit=5\n"
    "syncLimit=2\n"
    "server.1=10.0.0.1:2888:3888\n"
    "server.2=10.0.0.2:2888:3888\n"
    "server.3=10.0.0.3:2888:3888\n";

TEST(ZkConfig, SeedNotebookZooCfg) {
  const ServerConfig c = parse(kSeedZooCfg);
  EXPECT_EQ(c.tick_time_ms, 2000);
  EXPECT_EQ(c.init_limit, 10);
  EXPECT_EQ(c.sync_limit, 5);
  EXPECT_EQ(c.client_port, 2181);
  EXPECT_EQ(c.data_dir, "/tmp/zookeeper");
  EXPECT_EQ(c.myid, 2u);
  const std::map<ServerId, PeerAddress> servers = {
      {1, PeerAddress{"46.183.113.89", 2888, 3888}},
      {2, PeerAddress{"217.71.207.242", 2888, 3888}},
  };
  EXPECT_EQ(c.servers, servers);
  EXPECT_EQ(c.quorum_size(), 2u);
  EXPECT_TRUE(c.force_sync);
  EXPECT_EQ(c.commit_log_count, 500);
  EXPECT_EQ(c.min_session_timeout(), 4000);
  EXPECT_EQ(c.max_session_timeout(), 40000);
}

TEST(ZkConfig, ThreeServerLabConfig) {
  // seeds/000's zookeeper.properties.
  const ServerConfig c = parse(
      "dataDir=/data/zookeeper\n"
      "clientPort=2181\n"
      "initLimit=5\n"
      "syncLimit=2\n"
      "tickTime=2000\n"
      "maxClientCnxns=60\n"
      "server.1=192.168.99.11:2888:3888\n"
      "server.2=192.168.99.12:2888:3888\n"
      "server.3=192.168.99.13:2888:3888\n"
      "myid=3\n");
  EXPECT_EQ(c.init_limit, 5);
  EXPECT_EQ(c.sync_limit, 2);
  EXPECT_EQ(c.servers.size(), 3u);
  EXPECT_EQ(c.quorum_size(), 2u);
  EXPECT_EQ(c.servers.at(3).host, "192.168.99.13");
  EXPECT_EQ(c.myid, 3u);
}

TEST(ZkConfig, StandaloneDefaults) {
  const ServerConfig c = parse("");
  EXPECT_EQ(c.tick_time_ms, 2000);
  EXPECT_EQ(c.init_limit, 10);
  EXPECT_EQ(c.sync_limit, 5);
  EXPECT_EQ(c.client_port, 2181);
  EXPECT_EQ(c.myid, 1u);
  const std::map<ServerId, PeerAddress> servers = {{1, PeerAddress{"127.0.0.1", 2888, 3888}}};
  EXPECT_EQ(c.servers, servers);
  EXPECT_EQ(c.quorum_size(), 1u);
}

TEST(ZkConfig, StandaloneWithMyid) {
  const ServerConfig c = parse("myid=7\nclientPort=2182\n");
  EXPECT_EQ(c.myid, 7u);
  EXPECT_EQ(c.servers.count(7), 1u);
  EXPECT_EQ(c.client_port, 2182);
}

TEST(ZkConfig, SingleServerLineNeedsNoLimits) {
  const ServerConfig c = parse("server.1=zk1:2888:3888\nmyid=1\n");
  EXPECT_EQ(c.init_limit, 10);
  EXPECT_EQ(c.sync_limit, 5);
  EXPECT_EQ(c.servers.at(1).host, "zk1");
}

TEST(ZkConfig, EveryKeyWithAnEffect) {
  const ServerConfig c = parse(
      "tickTime=500\n"
      "initLimit=20\n"
      "syncLimit=4\n"
      "clientPort=12181\n"
      "dataDir=/var/zk\n"
      "dataLogDir=/var/zk-log\n"
      "server.1=a:2888:3888:participant\n"
      "server.2=b:2889:3889\n"
      "myid=1\n"
      "minSessionTimeout=3000\n"
      "maxSessionTimeout=60000\n"
      "forceSync=no\n"
      "zookeeper.commitLogCount=1000\n");
  EXPECT_EQ(c.tick_time_ms, 500);
  EXPECT_EQ(c.init_limit, 20);
  EXPECT_EQ(c.sync_limit, 4);
  EXPECT_EQ(c.client_port, 12181);
  EXPECT_EQ(c.data_dir, "/var/zk");
  EXPECT_EQ(c.servers.at(2), (PeerAddress{"b", 2889, 3889}));
  EXPECT_EQ(c.min_session_timeout_ms, 3000);
  EXPECT_EQ(c.max_session_timeout_ms, 60000);
  EXPECT_FALSE(c.force_sync);
  EXPECT_EQ(c.commit_log_count, 1000);
}

TEST(ZkConfig, DataLogDirAloneIsTheDataDirectory) {
  EXPECT_EQ(parse("dataLogDir=/logs\n").data_dir, "/logs");
}

TEST(ZkConfig, CommitLogCountAsZooCfgSpellsIt) {
  // ZooKeeper turns the zoo.cfg key commitLogCount into the system property
  // zookeeper.commitLogCount; both spellings work, not both at once.
  EXPECT_EQ(parse("commitLogCount=42\n").commit_log_count, 42);
  const ConfigError e = error_of("commitLogCount=42\nzookeeper.commitLogCount=43\n");
  EXPECT_EQ(e.key(), "zookeeper.commitLogCount");
}

TEST(ZkConfig, ForceSyncYesNoTrueFalse) {
  EXPECT_TRUE(parse("forceSync=yes\n").force_sync);
  EXPECT_FALSE(parse("forceSync=no\n").force_sync);
  EXPECT_FALSE(parse("forceSync=false\n").force_sync);
  EXPECT_EQ(error_of("forceSync=sometimes\n").key(), "forceSync");
}

TEST(ZkConfig, DynamicClientPortForm) {
  // ZooKeeper 3.5+: server.N=host:peer:election[:role];[clientHost:]clientPort
  const ServerConfig a = parse(kEnsemble,
                               "server.4=10.0.0.4:2888:3888;2191\n"
                               "server.5=10.0.0.5:2888:3888:participant;0.0.0.0:2192\n"
                               "myid=4\n");
  EXPECT_EQ(a.client_port, 2191);
  EXPECT_EQ(a.servers.size(), 5u);
  EXPECT_EQ(a.servers.at(5), (PeerAddress{"10.0.0.5", 2888, 3888}));
  const ServerConfig b =
      parse(kEnsemble, "server.4=10.0.0.4:2888:3888:participant;0.0.0.0:2192\nmyid=4\n");
  EXPECT_EQ(b.client_port, 2192);
  // Given in both places, the two must agree.
  EXPECT_EQ(
      parse(kEnsemble, "server.4=10.0.0.4:2888:3888;2181\nclientPort=2181\nmyid=4\n").client_port,
      2181);
  const ConfigError e = error_of(kEnsemble +
                                 "server.4=10.0.0.4:2888:3888;2182\n"
                                 "clientPort=2181\nmyid=4\n");
  EXPECT_EQ(e.key(), "server.4");
  EXPECT_EQ(e.message(), "client port 2182 differs from clientPort=2181");
}

TEST(ZkConfig, Ipv6Hosts) {
  const ServerConfig c = parse(
      "initLimit=5\nsyncLimit=2\n"
      "server.1=[2001:db8::1]:2888:3888\n"
      "server.2=[2001:db8::2]:2888:3888;[::]:2181\n"
      "myid=2\n");
  EXPECT_EQ(c.servers.at(1).host, "2001:db8::1");
  EXPECT_EQ(c.servers.at(2).election_port, 3888);
}

TEST(ZkConfig, KeysWithoutEffectAreAccepted) {
  const ServerConfig c = parse(
      "autopurge.snapRetainCount=3\n"
      "autopurge.purgeInterval=24\n"
      "maxClientCnxns=60\n"
      "admin.enableServer=true\n"
      "admin.serverPort=8080\n"
      "4lw.commands.whitelist=stat, ruok, conf, isro\n"
      "standaloneEnabled=true\n"
      "reconfigEnabled=false\n"
      "snapCount=100000\n"
      "preAllocSize=65536\n"
      "globalOutstandingLimit=1000\n"
      "electionAlg=3\n"
      "quorumListenOnAllIPs=true\n"
      "clientPortAddress=0.0.0.0\n"
      "metricsProvider.className=org.apache.zookeeper.metrics.prometheus."
      "PrometheusMetricsProvider\n"
      "metricsProvider.httpPort=7000\n"
      "jute.maxbuffer=4194304\n"
      "syncEnabled=true\n"
      "peerType=participant\n");
  EXPECT_EQ(c.tick_time_ms, 2000);
  // Every listed key is known to the parser.
  for (const std::string& key : kServerKeysWithoutEffect) {
    std::string value = "1";
    if (key == "electionAlg") value = "3";
    if (key == "peerType") value = "participant";
    if (key == "admin.enableServer" || key == "standaloneEnabled" || key == "reconfigEnabled" ||
        key == "quorumListenOnAllIPs" || key == "syncEnabled" ||
        key == "metricsProvider.exportJvmInfo") {
      value = "true";
    }
    EXPECT_NO_THROW(parse(key + "=" + value + "\n")) << key;
  }
}

TEST(ZkConfig, KeysWithoutEffectStillNeedWellFormedValues) {
  EXPECT_EQ(error_of("maxClientCnxns=many\n").key(), "maxClientCnxns");
  EXPECT_EQ(error_of("admin.serverPort=70000\n").key(), "admin.serverPort");
  EXPECT_EQ(error_of("standaloneEnabled=perhaps\n").key(), "standaloneEnabled");
}

TEST(ZkConfig, OnlyFastLeaderElection) {
  const ConfigError e = error_of("electionAlg=0\n");
  EXPECT_EQ(e.key(), "electionAlg");
  EXPECT_NE(e.message().find("only fast leader election (3) is modelled"), std::string::npos)
      << e.what();
}

TEST(ZkConfig, ObserversAreNotModelled) {
  const ConfigError e = error_of(kEnsemble + "server.4=10.0.0.4:2888:3888:observer\nmyid=1\n");
  EXPECT_EQ(e.key(), "server.4");
  EXPECT_NE(e.message().find("observers are not modelled"), std::string::npos) << e.what();
  EXPECT_EQ(error_of("peerType=observer\n").key(), "peerType");
}

TEST(ZkConfig, UnknownKeyWithSuggestion) {
  const ConfigError e = error_of("tickTmie=2000\n");
  EXPECT_EQ(e.source(), "zoo.cfg");
  EXPECT_EQ(e.key(), "tickTmie");
  EXPECT_STREQ(e.what(), "zoo.cfg: key 'tickTmie': unknown key; did you mean 'tickTime'?");
  EXPECT_EQ(error_of("initlimit=5\n").message(), "unknown key; did you mean 'initLimit'?");
  EXPECT_EQ(error_of("no.such.thing=1\n").message(), "unknown key");
}

TEST(ZkConfig, HierarchicalQuorumsAndDynamicFilesAreNotModelled) {
  EXPECT_EQ(error_of("group.1=1:2:3\n").key(), "group.1");
  EXPECT_EQ(error_of("weight.1=1\n").key(), "weight.1");
  EXPECT_EQ(error_of("dynamicConfigFile=/etc/zoo.cfg.dynamic\n").key(), "dynamicConfigFile");
}

TEST(ZkConfig, MalformedValuesNameTheirKey) {
  struct Case {
    std::string text;
    std::string key;
  };
  const std::vector<Case> cases = {
      {"tickTime=abc\n", "tickTime"},
      {"tickTime=0\n", "tickTime"},
      {"tickTime=600001\n", "tickTime"},
      {"initLimit=0\n", "initLimit"},
      {"syncLimit=1001\n", "syncLimit"},
      {"clientPort=0\n", "clientPort"},
      {"clientPort=65536\n", "clientPort"},
      {"myid=0\n", "myid"},
      {"myid=256\n", "myid"},
      {"minSessionTimeout=-5\n", "minSessionTimeout"},
      {"maxSessionTimeout=x\n", "maxSessionTimeout"},
      {"commitLogCount=0\n", "commitLogCount"},
      {"zookeeper.commitLogCount=1000001\n", "zookeeper.commitLogCount"},
      {"dataDir=\n", "dataDir"},
      {"server.0=a:1:2\n", "server.0"},
      {"server.256=a:1:2\n", "server.256"},
      {"server.x=a:1:2\n", "server.x"},
      {"server.=a:1:2\n", "server."},
      {"server.1=a\nmyid=1\n", "server.1"},
      {"server.1=a:2888\nmyid=1\n", "server.1"},
      {"server.1=:2888:3888\nmyid=1\n", "server.1"},
      {"server.1=a:2888:3888:leader\nmyid=1\n", "server.1"},
      {"server.1=a:2888:3888:participant:extra\nmyid=1\n", "server.1"},
      {"server.1=a:0:3888\nmyid=1\n", "server.1"},
      {"server.1=a:2888:99999\nmyid=1\n", "server.1"},
      {"server.1=a:2888:3888;\nmyid=1\n", "server.1"},
      {"server.1=a:2888:3888;host:\nmyid=1\n", "server.1"},
      {"server.1=[::1:2888:3888\nmyid=1\n", "server.1"},
  };
  for (const Case& c : cases) {
    const ConfigError e = error_of(c.text);
    EXPECT_EQ(e.key(), c.key) << c.text << " -> " << e.what();
    EXPECT_EQ(e.source(), "zoo.cfg");
    EXPECT_NE(std::string(e.what()).find("'" + c.key + "'"), std::string::npos) << e.what();
  }
}

TEST(ZkConfig, TickTimeMessage) {
  EXPECT_STREQ(error_of("tickTime=abc\n").what(),
               "zoo.cfg: key 'tickTime': expected a positive integer (milliseconds, at most "
               "600000), got 'abc'");
}

TEST(ZkConfig, MalformedServerLineMessage) {
  EXPECT_EQ(error_of("server.1=zk1\nmyid=1\n").message(),
            "expected host:peerPort:electionPort[:participant][;[clientHost:]clientPort], got "
            "'zk1'");
  EXPECT_EQ(error_of("server.1=zk1:2888:0\nmyid=1\n").message(),
            "election port must be from 1 to 65535, got '0' in 'zk1:2888:0'");
}

TEST(ZkConfig, EnsembleRequiresInitAndSyncLimits) {
  const std::string servers = "server.1=a:2888:3888\nserver.2=b:2888:3888\nmyid=1\n";
  const ConfigError init = error_of(servers + "syncLimit=2\n");
  EXPECT_EQ(init.key(), "initLimit");
  EXPECT_NE(init.message().find("required"), std::string::npos) << init.what();
  EXPECT_EQ(error_of(servers + "initLimit=5\n").key(), "syncLimit");
  EXPECT_NO_THROW(parse(servers + "initLimit=5\nsyncLimit=2\n"));
}

TEST(ZkConfig, MyidMustBeGivenAndListed) {
  const ConfigError missing = error_of(kEnsemble);
  EXPECT_EQ(missing.key(), "myid");
  EXPECT_NE(missing.message().find("required"), std::string::npos) << missing.what();
  const ConfigError unlisted = error_of(kEnsemble + "myid=4\n");
  EXPECT_EQ(unlisted.key(), "myid");
  EXPECT_EQ(unlisted.message(), "4 is not among the servers (1, 2, 3)");
}

TEST(ZkConfig, DuplicateServerIds) {
  const ConfigError e =
      error_of("initLimit=5\nsyncLimit=2\nserver.1=a:2888:3888\nserver.01=b:2888:3888\nmyid=1\n");
  EXPECT_EQ(e.key(), "server.1");  // the keys come in sorted order: "server.01" first
  EXPECT_EQ(e.message(), "server id 1 is already given by 'server.01'");
}

TEST(ZkConfig, DuplicatePortsOnOneHost) {
  // Three servers on one machine must use distinct ports.
  const std::string base = "initLimit=5\nsyncLimit=2\nmyid=1\n";
  EXPECT_NO_THROW(parse(base + "server.1=127.0.0.1:2888:3888\n"
                               "server.2=127.0.0.1:2889:3889\n"
                               "server.3=127.0.0.1:2890:3890\n"));
  const ConfigError peer = error_of(base +
                                    "server.1=127.0.0.1:2888:3888\n"
                                    "server.2=127.0.0.1:2888:3889\n");
  EXPECT_EQ(peer.key(), "server.2");
  EXPECT_EQ(peer.message(), "peer port 127.0.0.1:2888 is already the peer port of server.1");
  const ConfigError cross = error_of(base +
                                     "server.1=127.0.0.1:2888:3888\n"
                                     "server.2=127.0.0.1:3888:3889\n");
  EXPECT_EQ(cross.key(), "server.2");
  EXPECT_EQ(error_of(base + "server.1=h:2888:2888\n").key(), "server.1");
  // The same ports on different hosts are fine (the usual layout).
  EXPECT_NO_THROW(parse(base + "server.1=h1:2888:3888\nserver.2=h2:2888:3888\n"));
  // This server's client port may not be one of its quorum ports.
  const ConfigError client = error_of(base + "clientPort=3888\nserver.1=h1:2888:3888\n");
  EXPECT_EQ(client.key(), "clientPort");
  EXPECT_EQ(error_of("clientPort=2888\n").key(), "clientPort");
}

TEST(ZkConfig, SessionTimeoutDefaultsAreTwoAndTwentyTicks) {
  const ServerConfig c = parse("tickTime=3000\n");
  EXPECT_EQ(c.min_session_timeout(), 6000);
  EXPECT_EQ(c.max_session_timeout(), 60000);
  EXPECT_EQ(c.negotiate_session_timeout(1000), 6000);
  EXPECT_EQ(c.negotiate_session_timeout(6000), 6000);
  EXPECT_EQ(c.negotiate_session_timeout(18000), 18000);
  EXPECT_EQ(c.negotiate_session_timeout(60000), 60000);
  EXPECT_EQ(c.negotiate_session_timeout(600000), 60000);
  EXPECT_EQ(c.negotiate_session_timeout(0), 6000);
}

TEST(ZkConfig, KafkaSessionTimeoutsAgainstDefaultTick) {
  // Kafka 2.x asks for 6 s and 3.x for 18 s; with tickTime=2000 both fit in
  // [4 s, 40 s] and are granted as asked.
  const ServerConfig c = parse(kSeedZooCfg);
  EXPECT_EQ(c.negotiate_session_timeout(6000), 6000);
  EXPECT_EQ(c.negotiate_session_timeout(18000), 18000);
  EXPECT_EQ(c.negotiate_session_timeout(45000), 40000);
}

TEST(ZkConfig, ExplicitSessionTimeoutBounds) {
  const ServerConfig c =
      parse("tickTime=2000\nminSessionTimeout=10000\nmaxSessionTimeout=100000\n");
  EXPECT_EQ(c.min_session_timeout(), 10000);
  EXPECT_EQ(c.max_session_timeout(), 100000);
  EXPECT_EQ(c.negotiate_session_timeout(6000), 10000);
  EXPECT_EQ(c.negotiate_session_timeout(50000), 50000);
  EXPECT_EQ(c.negotiate_session_timeout(200000), 100000);
  // Only one bound given: the other keeps its tick-based default.
  const ServerConfig only_max = parse("maxSessionTimeout=8000\n");
  EXPECT_EQ(only_max.min_session_timeout(), 4000);
  EXPECT_EQ(only_max.negotiate_session_timeout(18000), 8000);
  const ServerConfig only_min = parse("minSessionTimeout=1000\n");
  EXPECT_EQ(only_min.negotiate_session_timeout(1500), 1500);
  EXPECT_EQ(only_min.max_session_timeout(), 40000);
}

TEST(ZkConfig, MinSessionTimeoutAboveMaxIsAnError) {
  const ConfigError both = error_of("minSessionTimeout=30000\nmaxSessionTimeout=20000\n");
  EXPECT_EQ(both.key(), "minSessionTimeout");
  EXPECT_EQ(both.message(),
            "minSessionTimeout (30000 ms) must not be larger than maxSessionTimeout (20000 ms)");
  // Against the default maximum, 20 x tickTime = 40000.
  EXPECT_EQ(error_of("minSessionTimeout=50000\n").key(), "minSessionTimeout");
  // Against the default minimum, 2 x tickTime = 4000.
  EXPECT_EQ(error_of("maxSessionTimeout=3000\n").key(), "maxSessionTimeout");
}

TEST(ZkConfig, InlineConfigNamesItsJsonPath) {
  const model::Properties p =
      model::from_map({{"tickTime", "fast"}}, "scenario.json:$.zookeeper.config");
  try {
    parse_server_config(p);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.source(), "scenario.json:$.zookeeper.config");
    EXPECT_EQ(e.key(), "tickTime");
  }
}

}  // namespace
}  // namespace zk
