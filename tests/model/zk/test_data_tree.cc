// ZooKeeper's data tree: prepare a request into a transaction, apply it, and
// check the stat, the result and the watches it triggers, as ZooKeeper's
// PrepRequestProcessor and DataTree do.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/zk/data_tree.h"
#include "sim/assert.h"

namespace zk {
namespace {

using Triggers = std::vector<WatchTrigger>;

WatchTrigger created(const std::string& p) { return {EventType::node_created, p}; }
WatchTrigger deleted(const std::string& p) { return {EventType::node_deleted, p}; }
WatchTrigger changed(const std::string& p) { return {EventType::node_data_changed, p}; }
WatchTrigger children(const std::string& p) { return {EventType::node_children_changed, p}; }

// Feeds a tree as a leader and its followers would: every request is
// prepared against the tree, then applied as the next committed zxid.
class DataTreeTest : public ::testing::Test {
 protected:
  Zxid next_zxid() const { return Zxid::make(epoch_, counter_ + 1); }

  ApplyResult apply(TxnBody body, SessionId session = SessionId{}) {
    ++counter_;
    const Txn txn{Zxid::make(epoch_, counter_), now_ms_, session, cxid_++, std::move(body)};
    now_ms_ += 10;
    return tree_.apply(txn);
  }
  ApplyResult create(const std::string& path, const std::string& data = "",
                     CreateMode mode = CreateMode::persistent, SessionId session = SessionId{}) {
    return apply(tree_.prepare(CreateOp{path, data, mode}, session), session);
  }
  ApplyResult remove(const std::string& path, int32_t version = -1) {
    return apply(tree_.prepare(DeleteOp{path, version}));
  }
  ApplyResult set_data(const std::string& path, const std::string& data, int32_t version = -1) {
    return apply(tree_.prepare(SetDataOp{path, data, version}));
  }
  ApplyResult check(const std::string& path, int32_t version = -1) {
    return apply(tree_.prepare(CheckOp{path, version}));
  }
  ApplyResult multi(std::vector<WriteOp> ops, SessionId session = SessionId{}) {
    return apply(tree_.prepare(MultiOp{std::move(ops)}, session), session);
  }
  ApplyResult open_session(SessionId session, int32_t timeout_ms) {
    return apply(CreateSessionTxn{timeout_ms}, session);
  }
  ApplyResult close_session(SessionId session) { return apply(CloseSessionTxn{}, session); }

  const Stat& stat(const std::string& path) const {
    const DataTree::Node* n = tree_.find(path);
    EXPECT_NE(n, nullptr) << path;
    static const Stat kNone;
    return n == nullptr ? kNone : n->stat;
  }
  std::vector<std::string> kids(const std::string& path) const {
    return tree_.children(path).value_or(std::vector<std::string>{"<no node>"});
  }

  DataTree tree_;
  uint32_t epoch_ = 1;
  uint32_t counter_ = 0;
  int64_t now_ms_ = 1000;
  int64_t cxid_ = 1;
};

const SessionId kBroker1{0x100000000000001};
const SessionId kBroker2{0x200000000000001};

TEST_F(DataTreeTest, StartsWithRootAndZookeeper) {
  EXPECT_EQ(tree_.paths(), (std::vector<std::string>{"/", "/zookeeper"}));
  EXPECT_EQ(tree_.node_count(), 2u);
  EXPECT_EQ(kids("/"), (std::vector<std::string>{"zookeeper"}));
  EXPECT_EQ(stat("/").num_children, 1);
  EXPECT_EQ(tree_.last_zxid(), Zxid{});
  EXPECT_TRUE(tree_.sessions().empty());
}

TEST_F(DataTreeTest, CreateSetsStatAndTriggers) {
  const Zxid z = next_zxid();
  const ApplyResult r = create("/brokers", "hello");
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.path, "/brokers");
  EXPECT_EQ(r.triggers, (Triggers{created("/brokers"), children("/")}));
  EXPECT_EQ(tree_.last_zxid(), z);

  const DataTree::Node* n = tree_.find("/brokers");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->data, "hello");
  const Stat& s = n->stat;
  EXPECT_EQ(s.czxid, z);
  EXPECT_EQ(s.mzxid, z);
  EXPECT_EQ(s.pzxid, z);
  EXPECT_EQ(s.ctime_ms, 1000);
  EXPECT_EQ(s.mtime_ms, 1000);
  EXPECT_EQ(s.version, 0);
  EXPECT_EQ(s.cversion, 0);
  EXPECT_EQ(s.aversion, 0);
  EXPECT_EQ(s.num_children, 0);
  EXPECT_EQ(s.ephemeral_owner, 0u);
  EXPECT_EQ(s.data_length, 5);

  EXPECT_EQ(stat("/").pzxid, z);
  EXPECT_EQ(stat("/").num_children, 2);
  EXPECT_EQ(kids("/"), (std::vector<std::string>{"brokers", "zookeeper"}));
}

TEST_F(DataTreeTest, ChildCreationChangesParentChildFieldsOnly) {
  const Zxid parent_zxid = next_zxid();
  create("/brokers");
  const Zxid child_zxid = next_zxid();
  EXPECT_EQ(create("/brokers/ids").triggers,
            (Triggers{created("/brokers/ids"), children("/brokers")}));
  create("/brokers/topics");
  const Stat& p = stat("/brokers");
  EXPECT_EQ(p.czxid, parent_zxid);
  EXPECT_EQ(p.mzxid, parent_zxid);  // a child is not a change to the data
  EXPECT_EQ(p.version, 0);
  EXPECT_EQ(p.pzxid, Zxid::make(1, child_zxid.counter() + 1));
  EXPECT_EQ(p.cversion, 2);
  EXPECT_EQ(p.num_children, 2);
  EXPECT_EQ(kids("/brokers"), (std::vector<std::string>{"ids", "topics"}));
}

TEST_F(DataTreeTest, ExistsAndChildrenOfMissingNode) {
  EXPECT_EQ(tree_.find("/nope"), nullptr);
  EXPECT_EQ(tree_.children("/nope"), std::nullopt);
  create("/a");
  EXPECT_NE(tree_.find("/a"), nullptr);
  EXPECT_EQ(kids("/a"), std::vector<std::string>{});
}

TEST_F(DataTreeTest, ChildrenAreSorted) {
  create("/t");
  for (const char* name : {"m", "b", "z", "a"}) create(std::string("/t/") + name);
  EXPECT_EQ(kids("/t"), (std::vector<std::string>{"a", "b", "m", "z"}));
  EXPECT_EQ(tree_.paths(),
            (std::vector<std::string>{"/", "/t", "/t/a", "/t/b", "/t/m", "/t/z", "/zookeeper"}));
}

TEST_F(DataTreeTest, SequentialNamesCountTheParentsCreates) {
  // Kafka's /isr_change_notification/isr_change_ and /config/changes/config_change_.
  create("/config");
  create("/config/changes");
  EXPECT_EQ(create("/config/changes/config_change_", "{}", CreateMode::persistent_sequential).path,
            "/config/changes/config_change_0000000000");
  EXPECT_EQ(create("/config/changes/config_change_", "{}", CreateMode::persistent_sequential).path,
            "/config/changes/config_change_0000000001");
  create("/config/changes/plain");  // any child creation advances the counter
  EXPECT_EQ(create("/config/changes/config_change_", "{}", CreateMode::persistent_sequential).path,
            "/config/changes/config_change_0000000003");
  EXPECT_EQ(stat("/config/changes").cversion, 4);
}

TEST_F(DataTreeTest, SequenceIsNotAdvancedByDeletes) {
  // ZooKeeper keeps the count of creates and shows cversion as
  // creates + deletes (DataNode.copyStat: 2 x creates - children); the
  // sequence number is the count of creates.
  create("/n");
  create("/n/x-", "", CreateMode::persistent_sequential);  // x-0000000000
  create("/n/x-", "", CreateMode::persistent_sequential);  // x-0000000001
  remove("/n/x-0000000000");
  EXPECT_EQ(stat("/n").cversion, 3);  // two creates and a delete
  EXPECT_EQ(stat("/n").num_children, 1);
  EXPECT_EQ(create("/n/x-", "", CreateMode::persistent_sequential).path, "/n/x-0000000002");
  remove("/n/x-0000000001");
  remove("/n/x-0000000002");
  EXPECT_EQ(stat("/n").cversion, 6);
  EXPECT_EQ(create("/n/x-", "", CreateMode::persistent_sequential).path, "/n/x-0000000003");
}

TEST_F(DataTreeTest, SequentialUnderTheRoot) {
  // The root holds /zookeeper without having created it.
  EXPECT_EQ(create("/s-", "", CreateMode::persistent_sequential).path, "/s-0000000000");
  EXPECT_EQ(create("/s-", "", CreateMode::persistent_sequential).path, "/s-0000000001");
  remove("/s-0000000000");
  EXPECT_EQ(create("/s-", "", CreateMode::persistent_sequential).path, "/s-0000000002");
}

TEST_F(DataTreeTest, EphemeralSequential) {
  open_session(kBroker1, 6000);
  create("/locks");
  const ApplyResult r = create("/locks/lock-", "", CreateMode::ephemeral_sequential, kBroker1);
  EXPECT_EQ(r.path, "/locks/lock-0000000000");
  EXPECT_EQ(stat(r.path).ephemeral_owner, kBroker1.value);
  EXPECT_EQ(tree_.ephemerals(kBroker1), (std::vector<std::string>{"/locks/lock-0000000000"}));
}

TEST_F(DataTreeTest, CreateErrors) {
  create("/a");
  EXPECT_EQ(create("/a").error, Error::node_exists);
  EXPECT_EQ(create("/missing/child").error, Error::no_node);
  EXPECT_EQ(create("/").error, Error::bad_arguments);
  // An ephemeral needs a session.
  EXPECT_EQ(create("/e", "", CreateMode::ephemeral).error, Error::bad_arguments);
  // No children under an ephemeral.
  open_session(kBroker1, 6000);
  EXPECT_EQ(create("/e", "", CreateMode::ephemeral, kBroker1).error, Error::ok);
  EXPECT_EQ(create("/e/child").error, Error::no_children_for_ephemerals);
  EXPECT_EQ(create("/e/child", "", CreateMode::ephemeral, kBroker1).error,
            Error::no_children_for_ephemerals);
}

TEST_F(DataTreeTest, FailedRequestsChangeNothingButTheZxid) {
  create("/a", "x");
  const uint64_t before = tree_.digest();
  const Zxid z = next_zxid();
  const ApplyResult r = create("/a");
  EXPECT_EQ(r.error, Error::node_exists);
  EXPECT_TRUE(r.triggers.empty());
  EXPECT_EQ(tree_.digest(), before);
  EXPECT_EQ(tree_.last_zxid(), z);  // an ErrorTxn is still a committed transaction
}

TEST_F(DataTreeTest, InvalidPathsAreBadArguments) {
  create("/a");
  create("/a/b");
  const std::vector<std::string> bad_paths = {
      "",        "a",  "a/b", "/a/",  "/a//b",  "//a",    "/a/./b",
      "/a/../b", "/.", "/..", "/a/.", "/a\x01", "/a\x7f", std::string("/a\0b", 4)};
  for (const std::string& bad : bad_paths) {
    EXPECT_FALSE(DataTree::valid_path(bad)) << bad;
    EXPECT_EQ(create(bad).error, Error::bad_arguments) << bad;
    EXPECT_EQ(remove(bad).error, Error::bad_arguments) << bad;
    EXPECT_EQ(set_data(bad, "x").error, Error::bad_arguments) << bad;
    EXPECT_EQ(check(bad).error, Error::bad_arguments) << bad;
  }
  for (const char* good :
       {"/", "/a", "/a/b", "/a.b", "/..a", "/a/.b", "/brokers/topics/t-1", "/a b", "/\xc3\xa9"}) {
    EXPECT_TRUE(DataTree::valid_path(good)) << good;
  }
}

TEST_F(DataTreeTest, ParentOf) {
  EXPECT_EQ(DataTree::parent_of("/a"), "/");
  EXPECT_EQ(DataTree::parent_of("/a/b"), "/a");
  EXPECT_EQ(DataTree::parent_of("/a/b/c"), "/a/b");
}

TEST_F(DataTreeTest, SetDataBumpsVersionAndTriggers) {
  const Zxid created_at = next_zxid();
  create("/controller_epoch", "1");
  const int64_t t = now_ms_;
  const Zxid z1 = next_zxid();
  const ApplyResult r = set_data("/controller_epoch", "22", 0);
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.triggers, (Triggers{changed("/controller_epoch")}));
  const Stat& s = stat("/controller_epoch");
  EXPECT_EQ(r.stat, s);
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.mzxid, z1);
  EXPECT_EQ(s.czxid, created_at);
  EXPECT_EQ(s.pzxid, created_at);  // no change to the children
  EXPECT_EQ(s.mtime_ms, t);
  EXPECT_EQ(s.ctime_ms, 1000);
  EXPECT_EQ(s.data_length, 2);
  EXPECT_EQ(tree_.find("/controller_epoch")->data, "22");

  EXPECT_EQ(set_data("/controller_epoch", "3").stat.version, 2);  // -1: any version
  EXPECT_EQ(set_data("/controller_epoch", "4", 1).error, Error::bad_version);
  EXPECT_EQ(stat("/controller_epoch").version, 2);
  EXPECT_EQ(tree_.find("/controller_epoch")->data, "3");
  EXPECT_EQ(set_data("/nope", "x").error, Error::no_node);
}

TEST_F(DataTreeTest, SetDataLeavesTheParentAlone) {
  create("/p");
  create("/p/c");
  const Stat before = stat("/p");
  set_data("/p/c", "x");
  EXPECT_EQ(stat("/p"), before);
}

TEST_F(DataTreeTest, SetDataOnRoot) {
  EXPECT_EQ(set_data("/", "root").error, Error::ok);
  EXPECT_EQ(stat("/").version, 1);
}

TEST_F(DataTreeTest, DeleteTriggersAndParentStat) {
  create("/brokers");
  create("/brokers/ids");
  create("/brokers/ids/1", "{}");
  const Zxid z = next_zxid();
  const ApplyResult r = remove("/brokers/ids/1", 0);
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.triggers, (Triggers{deleted("/brokers/ids/1"), children("/brokers/ids")}));
  EXPECT_EQ(tree_.find("/brokers/ids/1"), nullptr);
  const Stat& p = stat("/brokers/ids");
  EXPECT_EQ(p.pzxid, z);
  EXPECT_EQ(p.cversion, 2);
  EXPECT_EQ(p.num_children, 0);
  EXPECT_EQ(kids("/brokers/ids"), std::vector<std::string>{});
}

TEST_F(DataTreeTest, DeleteErrors) {
  create("/a");
  create("/a/b");
  set_data("/a/b", "x");
  EXPECT_EQ(remove("/nope").error, Error::no_node);
  EXPECT_EQ(remove("/a").error, Error::not_empty);
  EXPECT_EQ(remove("/a/b", 0).error, Error::bad_version);
  EXPECT_EQ(remove("/").error, Error::bad_arguments);
  EXPECT_EQ(remove("/zookeeper").error, Error::bad_arguments);
  EXPECT_NE(tree_.find("/a/b"), nullptr);
  EXPECT_EQ(remove("/a/b", 1).error, Error::ok);
  EXPECT_EQ(remove("/a").error, Error::ok);
}

TEST_F(DataTreeTest, CheckOp) {
  create("/c");
  EXPECT_EQ(check("/c", 0).error, Error::ok);
  EXPECT_EQ(check("/c").error, Error::ok);
  EXPECT_TRUE(check("/c").triggers.empty());
  EXPECT_EQ(check("/c", 5).error, Error::bad_version);
  EXPECT_EQ(check("/nope").error, Error::no_node);
}

TEST_F(DataTreeTest, MultiAppliesAllInOrder) {
  create("/brokers");
  create("/brokers/topics");
  create("/brokers/topics/t", "v0");
  const Zxid z = next_zxid();
  const ApplyResult r = multi({
      CreateOp{"/brokers/topics/t/partitions", ""},
      CreateOp{"/brokers/topics/t/partitions/p-", "", CreateMode::persistent_sequential},
      SetDataOp{"/brokers/topics/t", "v1", 0},
      CheckOp{"/brokers/topics/t", 1},  // sees the setData just before it
      DeleteOp{"/brokers/topics/t/partitions/p-0000000000", 0},
  });
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.multi_errors, (std::vector<Error>(5, Error::ok)));
  EXPECT_EQ(r.multi_paths,
            (std::vector<std::string>{"/brokers/topics/t/partitions",
                                      "/brokers/topics/t/partitions/p-0000000000", "", "", ""}));
  EXPECT_EQ(r.triggers, (Triggers{
                            created("/brokers/topics/t/partitions"),
                            children("/brokers/topics/t"),
                            created("/brokers/topics/t/partitions/p-0000000000"),
                            children("/brokers/topics/t/partitions"),
                            changed("/brokers/topics/t"),
                            deleted("/brokers/topics/t/partitions/p-0000000000"),
                            children("/brokers/topics/t/partitions"),
                        }));
  // One transaction: every change carries the multi's zxid.
  EXPECT_EQ(tree_.last_zxid(), z);
  EXPECT_EQ(stat("/brokers/topics/t/partitions").czxid, z);
  EXPECT_EQ(stat("/brokers/topics/t/partitions").pzxid, z);
  EXPECT_EQ(stat("/brokers/topics/t").mzxid, z);
  EXPECT_EQ(stat("/brokers/topics/t").version, 1);
  EXPECT_EQ(tree_.find("/brokers/topics/t")->data, "v1");
  EXPECT_EQ(kids("/brokers/topics/t/partitions"), std::vector<std::string>{});
}

TEST_F(DataTreeTest, MultiSeesEarlierOpsCreateParentThenChild) {
  const ApplyResult r =
      multi({CreateOp{"/a", "1"}, CreateOp{"/a/b", "2"}, CreateOp{"/a/b/c", "3"}});
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.multi_paths, (std::vector<std::string>{"/a", "/a/b", "/a/b/c"}));
  EXPECT_EQ(tree_.find("/a/b/c")->data, "3");
  // Two sequential creates in one multi get consecutive numbers.
  const ApplyResult s = multi({CreateOp{"/a/s-", "", CreateMode::persistent_sequential},
                               CreateOp{"/a/s-", "", CreateMode::persistent_sequential}});
  EXPECT_EQ(s.multi_paths, (std::vector<std::string>{"/a/s-0000000001", "/a/s-0000000002"}));
  // Delete then re-create in one multi.
  const ApplyResult d = multi({DeleteOp{"/a/b/c"}, CreateOp{"/a/b/c", "again"}});
  EXPECT_EQ(d.error, Error::ok);
  EXPECT_EQ(tree_.find("/a/b/c")->data, "again");
}

TEST_F(DataTreeTest, MultiDoesNotSeeItsOwnLaterOps) {
  // A child created before its parent in the same multi fails.
  const ApplyResult r = multi({CreateOp{"/x/y", ""}, CreateOp{"/x", ""}});
  EXPECT_EQ(r.error, Error::no_node);
  EXPECT_EQ(r.multi_errors, (std::vector<Error>{Error::no_node, Error::runtime_inconsistency}));
  EXPECT_EQ(tree_.find("/x"), nullptr);
}

TEST_F(DataTreeTest, ControllerEpochFencedWriteSucceeds) {
  // Kafka 2.x's controller writes as multi(check /controller_epoch version,
  // setData ...) so that a deposed controller's writes fail (KAFKA-6082).
  create("/controller_epoch", "1");
  create("/brokers");
  create("/brokers/topics");
  create("/brokers/topics/t", "{\"partitions\":{}}");
  set_data("/controller_epoch", "2", 0);  // the new controller's epoch: version 1
  const ApplyResult r =
      multi({CheckOp{"/controller_epoch", 1}, SetDataOp{"/brokers/topics/t", "{\"leader\":2}", 0}});
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.multi_errors, (std::vector<Error>{Error::ok, Error::ok}));
  EXPECT_EQ(r.triggers, (Triggers{changed("/brokers/topics/t")}));
  EXPECT_EQ(tree_.find("/brokers/topics/t")->data, "{\"leader\":2}");
}

TEST_F(DataTreeTest, ControllerEpochFencedWriteFromAStaleControllerFails) {
  create("/controller_epoch", "1");
  create("/state", "old");
  set_data("/controller_epoch", "2", 0);
  const uint64_t before = tree_.digest();
  const Zxid z = next_zxid();
  const ApplyResult r =
      multi({CheckOp{"/controller_epoch", 0}, SetDataOp{"/state", "stale write", 0}});
  EXPECT_EQ(r.error, Error::bad_version);
  EXPECT_EQ(r.multi_errors, (std::vector<Error>{Error::bad_version, Error::runtime_inconsistency}));
  EXPECT_EQ(r.multi_paths, (std::vector<std::string>{"", ""}));
  EXPECT_TRUE(r.triggers.empty());
  EXPECT_EQ(tree_.find("/state")->data, "old");
  EXPECT_EQ(stat("/state").version, 0);
  EXPECT_EQ(tree_.digest(), before);
  EXPECT_EQ(tree_.last_zxid(), z);
}

TEST_F(DataTreeTest, FailedMultiReportsOkBeforeErrorAtAndInconsistencyAfter) {
  create("/a");
  const uint64_t before = tree_.digest();
  const ApplyResult r = multi({
      CreateOp{"/a/new", ""},
      SetDataOp{"/a", "x", 0},
      CreateOp{"/a", ""},  // fails: NODEEXISTS
      SetDataOp{"/a", "y"},
      DeleteOp{"/a/new"},
  });
  EXPECT_EQ(r.error, Error::node_exists);
  EXPECT_EQ(r.multi_errors,
            (std::vector<Error>{Error::ok, Error::ok, Error::node_exists,
                                Error::runtime_inconsistency, Error::runtime_inconsistency}));
  EXPECT_EQ(r.multi_paths.size(), 5u);
  EXPECT_TRUE(r.triggers.empty());
  // Nothing applied, not even the ops before the failure.
  EXPECT_EQ(tree_.find("/a/new"), nullptr);
  EXPECT_EQ(stat("/a").version, 0);
  EXPECT_EQ(tree_.digest(), before);
}

TEST_F(DataTreeTest, FailedMultiTransactionIsAllErrorTxns) {
  create("/a");
  const TxnBody body = tree_.prepare(MultiOp{{CheckOp{"/a", 0}, CheckOp{"/a", 3}}}, SessionId{});
  const MultiTxn* m = std::get_if<MultiTxn>(&body);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->txns.size(), 2u);
  EXPECT_EQ(std::get<ErrorTxn>(m->txns[0]).error, Error::ok);
  EXPECT_EQ(std::get<ErrorTxn>(m->txns[1]).error, Error::bad_version);
}

TEST_F(DataTreeTest, PrepareDoesNotChangeTheTree) {
  create("/a");
  const uint64_t before = tree_.digest();
  (void)tree_.prepare(CreateOp{"/a/b", "", CreateMode::persistent}, SessionId{});
  (void)tree_.prepare(DeleteOp{"/a", -1});
  (void)tree_.prepare(SetDataOp{"/a", "x", -1});
  (void)tree_.prepare(MultiOp{{CreateOp{"/a/c", ""}, DeleteOp{"/a/c"}}}, SessionId{});
  EXPECT_EQ(tree_.digest(), before);
  EXPECT_EQ(tree_.node_count(), 3u);
}

TEST_F(DataTreeTest, MultiEphemeralNeedsSession) {
  const ApplyResult r = multi({CreateOp{"/p", ""}, CreateOp{"/p/e", "", CreateMode::ephemeral}});
  EXPECT_EQ(r.multi_errors, (std::vector<Error>{Error::ok, Error::bad_arguments}));
  open_session(kBroker1, 6000);
  const ApplyResult ok =
      multi({CreateOp{"/p", ""}, CreateOp{"/p/e", "", CreateMode::ephemeral}}, kBroker1);
  EXPECT_EQ(ok.error, Error::ok);
  EXPECT_EQ(stat("/p/e").ephemeral_owner, kBroker1.value);
  EXPECT_EQ(tree_.ephemerals(kBroker1), std::vector<std::string>{"/p/e"});
}

TEST_F(DataTreeTest, SessionsAndEphemerals) {
  open_session(kBroker1, 6000);
  open_session(kBroker2, 18000);
  EXPECT_EQ(tree_.sessions(), (std::map<SessionId, int32_t>{{kBroker1, 6000}, {kBroker2, 18000}}));
  create("/brokers");
  create("/brokers/ids");
  EXPECT_EQ(create("/controller", "{\"brokerid\":1}", CreateMode::ephemeral, kBroker1).error,
            Error::ok);
  create("/brokers/ids/1", "{}", CreateMode::ephemeral, kBroker1);
  create("/brokers/ids/2", "{}", CreateMode::ephemeral, kBroker2);
  EXPECT_EQ(stat("/controller").ephemeral_owner, kBroker1.value);
  EXPECT_EQ(tree_.ephemerals(kBroker1),
            (std::vector<std::string>{"/brokers/ids/1", "/controller"}));
  EXPECT_EQ(tree_.ephemerals(kBroker2), std::vector<std::string>{"/brokers/ids/2"});

  // Deleting an ephemeral by hand takes it out of its session's list.
  create("/tmp-node", "", CreateMode::ephemeral, kBroker2);
  remove("/tmp-node");
  EXPECT_EQ(tree_.ephemerals(kBroker2), std::vector<std::string>{"/brokers/ids/2"});

  // Closing (or expiring) broker 1's session deletes its ephemerals in path
  // order, each with its watches, and forgets the session.
  const Zxid z = next_zxid();
  const ApplyResult r = close_session(kBroker1);
  EXPECT_EQ(r.error, Error::ok);
  EXPECT_EQ(r.triggers, (Triggers{deleted("/brokers/ids/1"), children("/brokers/ids"),
                                  deleted("/controller"), children("/")}));
  EXPECT_EQ(tree_.find("/controller"), nullptr);
  EXPECT_EQ(tree_.find("/brokers/ids/1"), nullptr);
  EXPECT_NE(tree_.find("/brokers/ids/2"), nullptr);
  EXPECT_EQ(stat("/brokers/ids").pzxid, z);
  EXPECT_TRUE(tree_.ephemerals(kBroker1).empty());
  EXPECT_EQ(tree_.sessions(), (std::map<SessionId, int32_t>{{kBroker2, 18000}}));
  EXPECT_EQ(tree_.last_zxid(), z);
}

TEST_F(DataTreeTest, ClosingASessionWithoutEphemerals) {
  open_session(kBroker1, 6000);
  const uint64_t with_session = tree_.digest();
  const ApplyResult r = close_session(kBroker1);
  EXPECT_TRUE(r.triggers.empty());
  EXPECT_TRUE(tree_.sessions().empty());
  EXPECT_NE(tree_.digest(), with_session);  // sessions are part of the state
}

TEST_F(DataTreeTest, DigestEqualForSameTransactions) {
  DataTree other;
  uint32_t counter = 0;
  auto both = [&](TxnBody body, SessionId session = SessionId{}) {
    const Txn txn{Zxid::make(3, ++counter), 5000 + counter, session, counter, std::move(body)};
    tree_.apply(txn);
    other.apply(txn);
  };
  EXPECT_EQ(tree_.digest(), other.digest());
  both(CreateSessionTxn{6000}, kBroker1);
  both(tree_.prepare(CreateOp{"/brokers", "", CreateMode::persistent}, SessionId{}));
  both(tree_.prepare(CreateOp{"/brokers/ids", "", CreateMode::persistent}, SessionId{}));
  both(tree_.prepare(CreateOp{"/brokers/ids/1", "{}", CreateMode::ephemeral}, kBroker1), kBroker1);
  both(tree_.prepare(SetDataOp{"/brokers", "x", 0}));
  both(tree_.prepare(MultiOp{{CheckOp{"/brokers", 1}, CreateOp{"/brokers/seqid", ""}}},
                     SessionId{}));
  EXPECT_EQ(tree_.digest(), other.digest());
  EXPECT_EQ(tree_.paths(), other.paths());
  EXPECT_EQ(tree_.last_zxid(), other.last_zxid());

  // One more transaction on one replica only.
  const uint64_t same = other.digest();
  tree_.apply(Txn{Zxid::make(3, ++counter), 9000, SessionId{}, 99,
                  tree_.prepare(SetDataOp{"/brokers/seqid", "", -1})});
  EXPECT_NE(tree_.digest(), same);
  EXPECT_EQ(other.digest(), same);
}

TEST_F(DataTreeTest, DigestSeesDataAndStat) {
  DataTree a;
  DataTree b;
  a.apply(Txn{Zxid::make(1, 1), 0, SessionId{}, 1, CreateTxn{"/x", "one", 0}});
  b.apply(Txn{Zxid::make(1, 1), 0, SessionId{}, 1, CreateTxn{"/x", "two", 0}});
  EXPECT_NE(a.digest(), b.digest());
  DataTree c;
  c.apply(Txn{Zxid::make(1, 1), 7, SessionId{}, 1, CreateTxn{"/x", "one", 0}});  // other ctime
  EXPECT_NE(a.digest(), c.digest());
}

TEST_F(DataTreeTest, ZxidsMustIncrease) {
  create("/a");
  const Zxid last = tree_.last_zxid();
  EXPECT_THROW(tree_.apply(Txn{last, 0, SessionId{}, 1, CheckTxn{"/a"}}), sim::InvariantViolation);
  EXPECT_THROW(tree_.apply(Txn{Zxid{last.value - 1}, 0, SessionId{}, 1, CheckTxn{"/a"}}),
               sim::InvariantViolation);
  EXPECT_EQ(tree_.last_zxid(), last);
  // A new epoch starts its counter again, and is still larger.
  EXPECT_NO_THROW(tree_.apply(Txn{Zxid::make(2, 1), 0, SessionId{}, 1, CheckTxn{"/a"}}));
  EXPECT_THROW(tree_.apply(Txn{Zxid::make(1, 1000), 0, SessionId{}, 1, CheckTxn{"/a"}}),
               sim::InvariantViolation);
  // A fresh tree has seen zxid 0.
  DataTree fresh;
  EXPECT_THROW(fresh.apply(Txn{Zxid{}, 0, SessionId{}, 1, CreateSessionTxn{6000}}),
               sim::InvariantViolation);
}

TEST_F(DataTreeTest, ZxidFormatting) {
  EXPECT_EQ(to_string(Zxid::make(2, 3)), "0x200000003");
  EXPECT_EQ(Zxid::make(2, 3).epoch(), 2u);
  EXPECT_EQ(Zxid::make(2, 3).counter(), 3u);
  EXPECT_STREQ(to_string(Error::no_children_for_ephemerals), "NOCHILDRENFOREPHEMERALS");
  EXPECT_STREQ(to_string(EventType::node_children_changed), "NodeChildrenChanged");
}

}  // namespace
}  // namespace zk
