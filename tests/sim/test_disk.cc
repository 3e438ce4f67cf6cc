// Unit tests for the disk model: what survives a process kill (everything in
// the page cache), what survives a power loss (the durable image, plus what
// writeback and chance saved), and how fsync, truncate and rewrite move the
// durable image. Most tests use a `Disk` on a bare `EventLoop`; the ones about
// processes go through a `World`.
//
// A power loss draws from the disk's random stream, so the tests about it run
// over many seeds and check what must hold for every one, plus that the
// random part really varies.
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "sim/disk.h"
#include "sim/world.h"

namespace sim {

[[maybe_unused]] static void PrintTo(const Time& t, std::ostream* os) { *os << format_time(t); }

namespace {

Time at_ms(int64_t ms) { return Time::zero() + Duration::millis(ms); }

DiskOptions without_writeback(uint32_t torn_write_percent) {
  DiskOptions o;
  o.writeback_delay = Duration::max();
  o.torn_write_percent = torn_write_percent;
  return o;
}

DiskOptions fixed_fsync(Duration latency) {
  DiskOptions o = without_writeback(0);
  o.fsync_latency_min = latency;
  o.fsync_latency_max = latency;
  return o;
}

std::vector<std::string> data_of(const File& f) {
  std::vector<std::string> out;
  for (const Record& r : f.records()) out.emplace_back(r.data);
  return out;
}

bool all_intact(const File& f) {
  for (const Record& r : f.records()) {
    if (!r.intact) return false;
  }
  return true;
}

// True if `a` is a prefix of `b`.
bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

std::vector<std::string> numbered(const std::string& stem, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back(fmt::format("{}-{}", stem, i));
  return out;
}

void append_all(File& f, const std::vector<std::string>& records, Time now) {
  for (const std::string& r : records) f.append(r, now);
}

// --- the page cache -------------------------------------------------------------

TEST(Disk, AppendsAreVisibleAtOnceButNotDurable) {
  EventLoop loop;
  Disk disk(loop, without_writeback(0), Rng(1));
  File& f = disk.open("log");
  f.append("a", loop.now());
  f.append("b", loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.size(), 2u);
  EXPECT_EQ(f.durable_size(), 0u);
  EXPECT_TRUE(f.dirty());
  disk.sync_all();
  EXPECT_EQ(f.durable_size(), 2u);
  EXPECT_FALSE(f.dirty());
}

TEST(Disk, AppendWithWritesOneRecordInPlace) {
  EventLoop loop;
  Disk disk(loop, without_writeback(0), Rng(1));
  File& f = disk.open("log");
  f.append("a", loop.now());
  f.append_with(loop.now(), [](std::string& bytes) { bytes += "bc"; });
  f.append_with(loop.now(), [](std::string&) {});  // an empty record is a record
  f.append("d", loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"a", "bc", "", "d"}));
  for (const sim::Record& r : f.records()) EXPECT_TRUE(r.intact);
  EXPECT_EQ(f.durable_size(), 0u);
}

TEST(Disk, RemovalsCountEveryRemovedFile) {
  EventLoop loop;
  Disk disk(loop, without_writeback(0), Rng(1));
  disk.open("a");
  disk.open("b");
  EXPECT_EQ(disk.removals(), 0u);
  disk.remove("a");
  disk.remove("nothing");  // no file, nothing removed
  EXPECT_EQ(disk.removals(), 1u);
  disk.remove("b");
  EXPECT_EQ(disk.removals(), 2u);
}

TEST(Disk, OpenReturnsTheSameFileAndFindDoesNotCreate) {
  EventLoop loop;
  Disk disk(loop, DiskOptions{}, Rng(1));
  EXPECT_EQ(disk.find("x"), nullptr);
  EXPECT_FALSE(disk.exists("x"));
  File& f = disk.open("x");
  f.append("1", loop.now());
  EXPECT_TRUE(disk.exists("x"));
  EXPECT_EQ(disk.find("x"), &f);
  EXPECT_EQ(&disk.open("x"), &f);
  EXPECT_EQ(disk.open("x").size(), 1u);
}

// --- power loss -------------------------------------------------------------------

TEST(Disk, PowerLossKeepsEverythingSyncedAndARandomPrefixOfTheRest) {
  const std::vector<std::string> written = numbered("r", 0, 15);
  std::vector<int> survivors_seen(written.size() + 1, 0);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    EventLoop loop;
    Disk disk(loop, without_writeback(0), Rng(seed));
    File& f = disk.open("log");
    append_all(f, numbered("r", 0, 5), loop.now());
    bool synced = false;
    disk.fsync("log", [&] { synced = true; });
    loop.run_until_quiet();
    ASSERT_TRUE(synced);
    ASSERT_EQ(f.durable_size(), 5u);
    append_all(f, numbered("r", 5, 15), loop.now());
    loop.run_until(at_ms(100));
    disk.power_loss(loop.now());

    const std::vector<std::string> left = data_of(f);
    ASSERT_TRUE(is_prefix(left, written)) << "seed " << seed;
    ASSERT_GE(left.size(), 5u) << "seed " << seed;
    ASSERT_TRUE(all_intact(f)) << "seed " << seed;
    // What survived is now the durable image.
    EXPECT_EQ(f.durable_size(), f.size());
    EXPECT_FALSE(f.dirty());
    ++survivors_seen[left.size()];
  }
  // The prefix is really random: all lost, all kept, and something between.
  EXPECT_GT(survivors_seen[5], 0);
  EXPECT_GT(survivors_seen[15], 0);
  int between = 0;
  for (size_t n = 6; n < 15; ++n) between += survivors_seen[n];
  EXPECT_GT(between, 100);
}

TEST(Disk, PowerLossOfACleanFileChangesNothing) {
  EventLoop loop;
  Disk disk(loop, without_writeback(100), Rng(4));
  File& f = disk.open("log");
  append_all(f, numbered("r", 0, 3), loop.now());
  disk.sync_all();
  disk.power_loss(loop.now());
  EXPECT_EQ(data_of(f), numbered("r", 0, 3));
  EXPECT_TRUE(all_intact(f));
}

TEST(Disk, ATornWriteIsTheLastRecordAndAStrictPrefixOfWhatWasWritten) {
  const std::vector<std::string> written = {
      "first record, long enough to tear", "second record, long enough to tear",
      "third record, long enough to tear", "fourth record, long enough to tear"};
  int torn = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    EventLoop loop;
    Disk disk(loop, without_writeback(100), Rng(seed));
    File& f = disk.open("log");
    f.append(written[0], loop.now());
    disk.sync_all();
    append_all(f, {written.begin() + 1, written.end()}, loop.now());
    disk.power_loss(loop.now());

    const RecordRange left = f.records();
    ASSERT_GE(left.size(), 1u);
    ASSERT_LE(left.size(), written.size());
    for (size_t i = 0; i + 1 < left.size(); ++i) {
      ASSERT_TRUE(left[i].intact) << "seed " << seed << " record " << i;
      ASSERT_EQ(left[i].data, written[i]) << "seed " << seed;
    }
    const Record& last = left.back();
    const std::string& original = written[left.size() - 1];
    if (last.intact) {
      // Only when the kernel wrote every dirty record is there nothing to tear.
      ASSERT_EQ(left.size(), written.size()) << "seed " << seed;
      ASSERT_EQ(last.data, original);
    } else {
      ++torn;
      ASSERT_GE(left.size(), 2u) << "the synced record was torn, seed " << seed;
      ASSERT_LT(last.data.size(), original.size()) << "seed " << seed;
      ASSERT_EQ(original.compare(0, last.data.size(), last.data), 0) << "seed " << seed;
    }
  }
  EXPECT_GT(torn, 50);  // 100% torn writes: only "all kept" (1 in 4) escapes
}

TEST(Disk, WritebackSavesRecordsOlderThanTheDelay) {
  int lost_young = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    EventLoop loop;
    DiskOptions options = without_writeback(0);
    options.writeback_delay = Duration::seconds(10);
    Disk disk(loop, options, Rng(seed));
    File& f = disk.open("log");
    f.append("old-0", loop.now());
    loop.run_until(at_ms(4'000));
    f.append("old-1", loop.now());
    loop.run_until(at_ms(12'000));
    f.append("young", loop.now());
    loop.run_until(at_ms(15'000));
    EXPECT_EQ(f.durable_size(), 0u);  // writeback is not an fsync
    disk.power_loss(loop.now());
    const std::vector<std::string> left = data_of(f);
    ASSERT_GE(left.size(), 2u) << "seed " << seed;
    ASSERT_TRUE(is_prefix(left, {"old-0", "old-1", "young"})) << "seed " << seed;
    if (left.size() == 2) ++lost_young;
  }
  // The young record was not written back: it survives only by chance.
  EXPECT_GT(lost_young, 0);
  EXPECT_LT(lost_young, 50);
}

// --- fsync ---------------------------------------------------------------------

TEST(Disk, FsyncCompletesAfterItsLatencyAndCoversWhatTheFileHeldWhenCalled) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(2)), Rng(1));
  File& f = disk.open("log");
  f.append("a", loop.now());
  Time done_at = Time::max();
  EXPECT_EQ(disk.fsync("log", [&] { done_at = loop.now(); }), at_ms(2));
  loop.run_until(at_ms(1));
  f.append("b", loop.now());
  loop.run_until(Time::zero() + Duration::micros(1'999));
  EXPECT_EQ(done_at, Time::max());
  EXPECT_EQ(f.durable_size(), 0u);
  loop.run_until(at_ms(10));
  EXPECT_EQ(done_at, at_ms(2));
  EXPECT_EQ(f.durable_size(), 1u);  // "b" came after the call
  EXPECT_TRUE(f.dirty());
}

TEST(Disk, ConcurrentFsyncsQueueOnTheDevice) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(2)), Rng(1));
  disk.open("a").append("x", loop.now());
  disk.open("b").append("y", loop.now());
  std::vector<std::pair<std::string, Time>> done;
  EXPECT_EQ(disk.fsync("a", [&] { done.emplace_back("a", loop.now()); }), at_ms(2));
  loop.run_until(at_ms(1));
  // Another file, same device: waits for the first fsync, then takes 2 ms.
  EXPECT_EQ(disk.fsync("b", [&] { done.emplace_back("b", loop.now()); }), at_ms(4));
  disk.open("a").append("x2", loop.now());  // more to write than the first covers
  EXPECT_EQ(disk.fsync("a", [&] { done.emplace_back("a2", loop.now()); }), at_ms(6));
  loop.run_until_quiet();
  EXPECT_EQ(done, (std::vector<std::pair<std::string, Time>>{
                      {"a", at_ms(2)}, {"b", at_ms(4)}, {"a2", at_ms(6)}}));
  // An idle device starts at once.
  loop.run_until(at_ms(100));
  disk.open("a").append("x3", loop.now());
  EXPECT_EQ(disk.fsync("a", [] {}), at_ms(102));
}

// An fsync that finds nothing to write completes at once, without the
// device; one whose records an fsync in flight covers completes with it (the
// kernel waits for the pages under writeback instead of writing them again).
// Neither holds up the fsyncs queued after it.
TEST(Disk, AnFsyncWithNothingNewToWriteTakesNoDeviceTime) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(2)), Rng(1));
  File& a = disk.open("a");
  a.append("x", loop.now());
  EXPECT_EQ(disk.fsync("a", [] {}), at_ms(2));
  loop.run_until(at_ms(1));
  bool covered_done = false;
  EXPECT_EQ(disk.fsync("a", [&] { covered_done = true; }), at_ms(2)) << "covered by the one in flight";
  disk.open("b").append("y", loop.now());
  EXPECT_EQ(disk.fsync("b", [] {}), at_ms(4)) << "behind the first only";
  loop.run_until(at_ms(3));
  EXPECT_TRUE(covered_done);
  EXPECT_FALSE(a.dirty());
  bool clean_done = false;
  EXPECT_EQ(disk.fsync("a", [&] { clean_done = true; }), at_ms(3)) << "nothing dirty";
  loop.run_until(at_ms(3));
  EXPECT_TRUE(clean_done);
  EXPECT_EQ(disk.fsync("b", [] {}), at_ms(4)) << "b's own fsync, still in flight, covers it";
}

TEST(Disk, FsyncLatencyIsDrawnFromTheConfiguredRange) {
  EventLoop loop;
  DiskOptions options;  // 500 us .. 5 ms
  Disk disk(loop, options, Rng(8));
  Duration lo = Duration::max(), hi = Duration::zero();
  for (int i = 0; i < 200; ++i) {
    disk.open("log").append("r", loop.now());  // something to write each time
    const Time start = loop.now();
    const Time finish = disk.fsync("log", [] {});
    loop.run_until_quiet();
    lo = std::min(lo, finish - start);
    hi = std::max(hi, finish - start);
    loop.run_until(loop.now() + Duration::millis(10));  // let the device idle
  }
  EXPECT_GE(lo, Duration::micros(500));
  EXPECT_LE(hi, Duration::millis(5));
  EXPECT_LT(lo, Duration::millis(1));
  EXPECT_GT(hi, Duration::millis(4));
}

TEST(Disk, APowerLossBeforeTheFsyncCompletesMeansItNeverDid) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    EventLoop loop;
    Disk disk(loop, fixed_fsync(Duration::millis(2)), Rng(seed));
    File& f = disk.open("log");
    append_all(f, numbered("r", 0, 10), loop.now());
    bool done = false;
    disk.fsync("log", [&] { done = true; });
    loop.run_until(at_ms(1));
    const uint64_t generation = disk.generation();
    disk.power_loss(loop.now());
    EXPECT_EQ(disk.generation(), generation + 1);
    ASSERT_TRUE(is_prefix(data_of(f), numbered("r", 0, 10)));
    const size_t survived = f.size();
    // New writes after the reboot must not be made durable by the lost fsync.
    f.append("after-1", loop.now());
    f.append("after-2", loop.now());
    loop.run_until(at_ms(50));
    EXPECT_FALSE(done) << "seed " << seed;
    EXPECT_EQ(f.durable_size(), survived) << "seed " << seed;
  }
}

TEST(Disk, TheFsyncQueueStartsEmptyAfterAPowerLoss) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(2)), Rng(1));
  File& f = disk.open("log");
  f.append("a", loop.now());
  disk.fsync("log", [] {});  // until 2 ms
  f.append("b", loop.now());
  disk.fsync("log", [] {});  // until 4 ms
  loop.run_until(at_ms(1));
  disk.power_loss(loop.now());
  f.append("c", loop.now());
  EXPECT_EQ(disk.fsync("log", [] {}), at_ms(3));
}

// --- truncate and rewrite -------------------------------------------------------

TEST(Disk, ATruncationBelowTheDurablePointIsUndoneByAPowerLoss) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    EventLoop loop;
    Disk disk(loop, without_writeback(100), Rng(seed));
    File& f = disk.open("log");
    append_all(f, {"a", "b", "c", "d"}, loop.now());
    disk.sync_all();
    f.truncate(2, loop.now());
    EXPECT_EQ(data_of(f), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(f.durable_size(), 2u);
    EXPECT_TRUE(f.dirty());
    f.append("e", loop.now());  // written after the cut, never synced
    disk.power_loss(loop.now());
    EXPECT_EQ(data_of(f), (std::vector<std::string>{"a", "b", "c", "d"})) << "seed " << seed;
    EXPECT_TRUE(all_intact(f));
  }
}

TEST(Disk, ASyncedTruncationSurvivesAPowerLoss) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(1)), Rng(3));
  File& f = disk.open("log");
  append_all(f, {"a", "b", "c", "d"}, loop.now());
  disk.sync_all();
  f.truncate(2, loop.now());
  f.append("e", loop.now());
  disk.fsync("log", [] {});
  loop.run_until_quiet();
  EXPECT_FALSE(f.dirty());
  disk.power_loss(loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"a", "b", "e"}));
}

TEST(Disk, AnOldTruncationIsWrittenBack) {
  EventLoop loop;
  DiskOptions options = without_writeback(0);
  options.writeback_delay = Duration::seconds(30);
  Disk disk(loop, options, Rng(3));
  File& f = disk.open("log");
  append_all(f, {"a", "b", "c", "d"}, loop.now());
  disk.sync_all();
  loop.run_until(at_ms(1'000));
  f.truncate(2, loop.now());
  loop.run_until(at_ms(40'000));
  disk.power_loss(loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"a", "b"}));
}

TEST(Disk, TruncatingDirtyRecordsNeverBringsThemBack) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    EventLoop loop;
    Disk disk(loop, without_writeback(0), Rng(seed));
    File& f = disk.open("log");
    append_all(f, {"a", "b"}, loop.now());
    disk.sync_all();
    append_all(f, {"c", "d"}, loop.now());
    f.truncate(3, loop.now());
    disk.power_loss(loop.now());
    const std::vector<std::string> left = data_of(f);
    ASSERT_TRUE(is_prefix(left, {"a", "b", "c"})) << "seed " << seed;
    ASSERT_GE(left.size(), 2u);
  }
}

TEST(Disk, RewriteReplacesTheContentsButIsDurableOnlyOnceSynced) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(1)), Rng(5));
  File& f = disk.open("meta");
  append_all(f, {"v1-a", "v1-b"}, loop.now());
  disk.sync_all();
  f.rewrite({"v2-a", "v2-b", "v2-c"}, loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"v2-a", "v2-b", "v2-c"}));
  EXPECT_TRUE(f.dirty());
  disk.power_loss(loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"v1-a", "v1-b"}));

  f.rewrite({"v3"}, loop.now());
  disk.fsync("meta", [] {});
  loop.run_until_quiet();
  disk.power_loss(loop.now());
  EXPECT_EQ(data_of(f), (std::vector<std::string>{"v3"}));
}

// Known bug, disabled until fixed: an fsync names a path, and completes on
// whatever file holds that path by then. A file removed and recreated (as
// Kafka does when it truncates a log fully and starts a new segment at the
// same base offset) gets its unsynced records made durable by the old
// file's fsync. The fix needs a file identity (a per-Disk counter stored in
// File at creation, checked by the fsync's completion).
TEST(Disk, AnFsyncOfARemovedFileDoesNotSyncItsSuccessor) {
  EventLoop loop;
  Disk disk(loop, fixed_fsync(Duration::millis(2)), Rng(1));
  append_all(disk.open("seg"), numbered("old", 0, 5), loop.now());
  disk.fsync("seg", [] {});
  disk.remove("seg");
  append_all(disk.open("seg"), numbered("new", 0, 3), loop.now());
  loop.run_until(at_ms(10));
  EXPECT_EQ(disk.open("seg").durable_size(), 0u);
}

// --- the directory ------------------------------------------------------------

TEST(Disk, ListGivesPathsInLexicographicOrderFilteredByPrefix) {
  EventLoop loop;
  Disk disk(loop, DiskOptions{}, Rng(1));
  for (const char* path : {"b/2", "a/1", "b/10", "c", "b", "ba"}) disk.open(path);
  EXPECT_EQ(disk.list(), (std::vector<std::string>{"a/1", "b", "b/10", "b/2", "ba", "c"}));
  EXPECT_EQ(disk.list("b/"), (std::vector<std::string>{"b/10", "b/2"}));
  EXPECT_EQ(disk.list("b"), (std::vector<std::string>{"b", "b/10", "b/2", "ba"}));
  EXPECT_EQ(disk.list("a/1"), (std::vector<std::string>{"a/1"}));
  EXPECT_TRUE(disk.list("zzz").empty());
  EXPECT_TRUE(disk.list("0").empty());
}

TEST(Disk, RemoveForgetsTheFileAndCreateAndRemoveAreDurableAtOnce) {
  EventLoop loop;
  Disk disk(loop, without_writeback(0), Rng(1));
  disk.open("keep").append("k", loop.now());
  disk.open("gone").append("g", loop.now());
  disk.sync_all();
  disk.open("new");  // created, never synced
  disk.remove("gone");
  EXPECT_FALSE(disk.exists("gone"));
  EXPECT_EQ(disk.find("gone"), nullptr);
  disk.power_loss(loop.now());
  EXPECT_EQ(disk.list(), (std::vector<std::string>{"keep", "new"}));
  EXPECT_EQ(disk.open("keep").size(), 1u);
  EXPECT_EQ(disk.open("new").size(), 0u);
}

// --- through the world: processes and hosts --------------------------------------

// Appends "<incarnation>-<i>" records on start and remembers what it found.
class Writer final : public Process {
 public:
  Writer(int appends, bool sync_first, std::vector<std::vector<std::string>>* found,
         std::vector<std::string>* events)
      : appends_(appends), sync_first_(sync_first), found_(found), events_(events) {}
  void on_start() override {
    File& f = ctx().disk().open("data/log");
    found_->push_back(data_of(f));
    if (ctx().incarnation() > 1) return;
    for (int i = 0; i < appends_; ++i) {
      f.append(fmt::format("{}-{}", ctx().incarnation(), i), ctx().now());
      if (i == 0 && sync_first_) {
        ctx().fsync("data/log",
                    [this] { events_->push_back(fmt::format("synced@{}", ctx().now().us())); });
      }
    }
  }

 private:
  int appends_;
  bool sync_first_;
  std::vector<std::vector<std::string>>* found_;
  std::vector<std::string>* events_;
};

TEST(Disk, WritesSurviveAProcessKillInThePageCache) {
  WorldOptions options;
  options.disk = without_writeback(100);
  World world(11, options);
  std::vector<std::vector<std::string>> found;
  std::vector<std::string> events;
  const HostId h = world.add_host("node1", "10.0.0.1");
  const ProcessId p = world.add_process(
      h, "writer", [&] { return std::make_unique<Writer>(3, false, &found, &events); });
  world.boot();
  world.run_for(Duration::seconds(1));
  world.kill(p);
  world.start(p);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(found[0].empty());
  EXPECT_EQ(found[1], (std::vector<std::string>{"1-0", "1-1", "1-2"}));
  EXPECT_EQ(world.disk(h).open("data/log").durable_size(), 0u);
}

TEST(Disk, AKilledProcessNeverHearsOfItsFsyncButTheKernelFinishesIt) {
  WorldOptions options;
  options.disk = fixed_fsync(Duration::millis(3));
  World world(11, options);
  std::vector<std::vector<std::string>> found;
  std::vector<std::string> events;
  const HostId h = world.add_host("node1", "10.0.0.1");
  const ProcessId p = world.add_process(
      h, "writer", [&] { return std::make_unique<Writer>(1, true, &found, &events); });
  world.boot();
  world.kill(p);
  world.start(p);  // the new incarnation must not get the old callback either
  world.run_for(Duration::seconds(1));
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(world.disk(h).open("data/log").durable_size(), 1u);
}

TEST(Disk, AFsyncCallbackRunsInTheLiveProcessAtCompletion) {
  WorldOptions options;
  options.disk = fixed_fsync(Duration::millis(3));
  World world(11, options);
  std::vector<std::vector<std::string>> found;
  std::vector<std::string> events;
  const HostId h = world.add_host("node1", "10.0.0.1");
  world.add_process(h, "writer",
                    [&] { return std::make_unique<Writer>(1, true, &found, &events); });
  world.boot();
  world.run_for(Duration::seconds(1));
  EXPECT_EQ(events, std::vector<std::string>{"synced@3000"});
}

TEST(Disk, PowerOffLosesUnsyncedWritesButKeepsSyncedOnes) {
  int lossy_runs = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    WorldOptions options;
    options.disk = fixed_fsync(Duration::millis(3));
    World world(seed, options);
    std::vector<std::vector<std::string>> found;
    std::vector<std::string> events;
    const HostId h = world.add_host("node1", "10.0.0.1");
    const ProcessId p = world.add_process(
        h, "writer", [&] { return std::make_unique<Writer>(20, true, &found, &events); });
    world.boot();
    world.run_for(Duration::seconds(1));  // the first record is synced
    ASSERT_EQ(events.size(), 1u);
    world.power_off(h);
    EXPECT_FALSE(world.is_running(p));
    world.power_on(h);
    world.run_for(Duration::seconds(1));
    ASSERT_EQ(found.size(), 2u) << "seed " << seed;
    std::vector<std::string> all;
    for (int i = 0; i < 20; ++i) all.push_back(fmt::format("1-{}", i));
    ASSERT_TRUE(is_prefix(found[1], all)) << "seed " << seed;
    ASSERT_GE(found[1].size(), 1u) << "seed " << seed;
    if (found[1].size() < all.size()) ++lossy_runs;
  }
  EXPECT_GT(lossy_runs, 10);
}

}  // namespace
}  // namespace sim
