// A host's disk, with the page cache in front of it.
//
// A file is a sequence of records (opaque byte strings). What a process
// writes lands in the page cache at once and survives the process being
// killed; only what reached the platter survives the host losing power. Data
// reaches the platter three ways, as on Linux:
//   - `fsync` — takes `fsync_latency` and completes through a callback; one
//     device, so concurrent fsyncs queue behind each other;
//   - background writeback — a dirty record older than `writeback_delay`
//     (Linux: vm.dirty_expire_centisecs = 30 s) has been written back;
//   - chance — at power-off some prefix of the younger dirty records may also
//     have been written, and the record after it may be torn (a partial write,
//     which a reader must detect: `Record::intact` is false), as in a real
//     crash where the kernel had started writing.
// Truncation and whole-file rewrite follow the same rule: the durable image
// changes only when the change is synced or written back.
//
// File metadata (create, remove) is treated as durable at once — a
// simplification noted in docs/fidelity.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/callback.h"
#include "sim/event_loop.h"
#include "sim/random.h"
#include "sim/time.h"

namespace sim {

struct Record {
  std::string data;
  bool intact = true;  // false: a torn write left behind by a power loss
  friend bool operator==(const Record&, const Record&) = default;
};

struct DiskOptions {
  Duration fsync_latency_min = Duration::micros(500);
  Duration fsync_latency_max = Duration::millis(5);
  // Dirty data older than this is written back by the kernel on its own.
  // Duration::max() turns background writeback off.
  Duration writeback_delay = Duration::seconds(30);
  // At power-off, the chance (out of 100) that the record after the surviving
  // dirty prefix was partly written.
  uint32_t torn_write_percent = 50;
};

class File {
 public:
  // The current contents, as a process on the running host sees them.
  const std::vector<Record>& records() const { return cached_; }
  size_t size() const { return cached_.size(); }
  // How many leading records are known to be on the platter.
  size_t durable_size() const { return durable_prefix_; }
  bool dirty() const { return durable_prefix_ != cached_.size() || !durable_tail_.empty(); }

  void append(std::string data, Time now);
  // Keeps the first `n` records.
  void truncate(size_t n, Time now);
  // Replaces the whole contents, like writing a temporary file and renaming it.
  void rewrite(std::vector<std::string> records, Time now);

 private:
  friend class Disk;
  // Makes the first `n` current records durable (an fsync or a writeback).
  void make_durable(size_t n);
  // What survives a power loss at `now`.
  void crash(Time now, const DiskOptions& options, Rng& rng);

  uint64_t id_ = 0;  // unique per disk: a file re-created at the same path is another file
  std::vector<Record> cached_;
  std::vector<Time> written_at_;  // parallel to cached_: when each record was written
  // The durable image is cached_[0, durable_prefix_) followed by durable_tail_
  // (records the cache has truncated away but the platter still holds).
  size_t durable_prefix_ = 0;
  std::vector<Record> durable_tail_;
  Time last_truncate_at_ = Time::zero();
};

class Disk {
 public:
  Disk(EventLoop& loop, DiskOptions options, Rng rng)
      : loop_(&loop), options_(options), rng_(std::move(rng)) {}

  // Opens `path`, creating an empty file if it does not exist.
  File& open(const std::string& path);
  File* find(const std::string& path);
  bool exists(const std::string& path) const { return files_.count(path) != 0; }
  void remove(const std::string& path) { files_.erase(path); }
  // Paths in lexicographic order, optionally only those starting with `prefix`.
  std::vector<std::string> list(const std::string& prefix = "") const;

  // Starts an fsync of `path` covering what it holds now and returns when it
  // will complete. At completion the data is durable (unless the host lost
  // power first) and `done` runs; the caller wraps `done` so that a process
  // killed meanwhile never hears back, while the kernel still finishes.
  Time fsync(const std::string& path, Callback done);
  // Makes everything durable at once: for setting up a scenario's initial state.
  void sync_all();

  // The host lost power at `now`: every file falls back to its durable image
  // (plus what writeback and chance saved); fsyncs in flight are lost.
  void power_loss(Time now);
  // A new boot: the fsync queue starts empty.
  uint64_t generation() const { return generation_; }

  const DiskOptions& options() const { return options_; }
  void set_options(const DiskOptions& o) { options_ = o; }

 private:
  EventLoop* loop_;
  DiskOptions options_;
  Rng rng_;
  std::map<std::string, File> files_;
  Time device_busy_until_ = Time::zero();
  uint64_t generation_ = 0;
  uint64_t next_file_id_ = 1;
};

}  // namespace sim
