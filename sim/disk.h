// A host's disk, with the page cache in front of it.
//
// A file is a sequence of records (opaque byte strings). What a process
// writes lands in the page cache at once and survives the process being
// killed; only what reached the platter survives the host losing power. Data
// reaches the platter three ways, as on Linux:
//   - `fsync` — takes `fsync_latency` and completes through a callback; one
//     device, so concurrent fsyncs queue behind each other. An fsync of a
//     file with nothing dirty writes nothing and completes at once, and one
//     whose records an fsync in flight already covers completes with that
//     one, as Linux waits for the pages under writeback rather than writing
//     them again;
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

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/callback.h"
#include "sim/event_loop.h"
#include "sim/random.h"
#include "sim/time.h"

namespace sim {

// One record of a file as a reader sees it: a view into the file, valid
// until the file next changes.
struct Record {
  std::string_view data;
  bool intact = true;  // false: a torn write left behind by a power loss
  friend bool operator==(const Record&, const Record&) = default;
};

class File;

// The records of a file, in order: an indexable, iterable view.
class RecordRange {
 public:
  class iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Record;
    using difference_type = std::ptrdiff_t;
    using reference = Record;
    using pointer = void;
    iterator() = default;
    iterator(const File* f, size_t i) : file_(f), i_(i) {}
    Record operator*() const;
    Record operator[](difference_type n) const { return *(*this + n); }
    iterator& operator++() { ++i_; return *this; }
    iterator operator++(int) { iterator t = *this; ++i_; return t; }
    iterator& operator--() { --i_; return *this; }
    iterator operator--(int) { iterator t = *this; --i_; return t; }
    iterator& operator+=(difference_type n) { i_ = static_cast<size_t>(static_cast<difference_type>(i_) + n); return *this; }
    iterator& operator-=(difference_type n) { return *this += -n; }
    friend iterator operator+(iterator a, difference_type n) { return a += n; }
    friend iterator operator+(difference_type n, iterator a) { return a += n; }
    friend iterator operator-(iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const iterator& a, const iterator& b) {
      return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
    }
    friend bool operator==(const iterator& a, const iterator& b) { return a.i_ == b.i_; }
    friend auto operator<=>(const iterator& a, const iterator& b) { return a.i_ <=> b.i_; }

   private:
    const File* file_ = nullptr;
    size_t i_ = 0;
  };
  using reverse_iterator = std::reverse_iterator<iterator>;

  explicit RecordRange(const File& f) : file_(&f) {}
  size_t size() const;
  bool empty() const { return size() == 0; }
  Record operator[](size_t i) const;
  Record front() const { return (*this)[0]; }
  Record back() const { return (*this)[size() - 1]; }
  iterator begin() const { return {file_, 0}; }
  iterator end() const { return {file_, size()}; }
  reverse_iterator rbegin() const { return reverse_iterator(end()); }
  reverse_iterator rend() const { return reverse_iterator(begin()); }

 private:
  const File* file_;
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
  RecordRange records() const { return RecordRange(*this); }
  Record record(size_t i) const {
    const size_t begin = i == 0 ? 0 : ends_[i - 1];
    return Record{std::string_view(bytes_).substr(begin, ends_[i] - begin), intact_[i]};
  }
  size_t size() const { return ends_.size(); }
  // How many leading records are known to be on the platter.
  size_t durable_size() const { return durable_prefix_; }
  bool dirty() const { return durable_prefix_ != size() || !durable_tail_.empty(); }

  void append(std::string_view data, Time now) { append(data, true, now); }
  // Appends one record that `write(std::string& bytes)` appends to the
  // file's buffer itself (no temporary string per record).
  template <typename Write>
  void append_with(Time now, Write&& write) {
    write(bytes_);
    end_record(true, now);
  }
  // Keeps the first `n` records.
  void truncate(size_t n, Time now);
  // Replaces the whole contents, like writing a temporary file and renaming it.
  void rewrite(std::vector<std::string> records, Time now);

 private:
  friend class Disk;
  void append(std::string_view data, bool intact, Time now);
  // Closes the record whose bytes were just appended to bytes_.
  void end_record(bool intact, Time now) {
    ends_.push_back(bytes_.size());
    intact_.push_back(intact);
    written_at_.push_back(now);
  }
  // Drops every record from `n` on (no bookkeeping of what the platter holds).
  void cut(size_t n);
  // Makes the first `n` current records durable (an fsync or a writeback).
  void make_durable(size_t n);
  // What survives a power loss at `now`.
  void crash(Time now, const DiskOptions& options, Rng& rng);

  uint64_t id_ = 0;  // unique per disk: a file re-created at the same path is another file
  // The records back to back in one buffer (a file holds tens of thousands of
  // small records: one allocation each would dominate a run), the end of
  // each, whether each is intact, and when each was written.
  std::string bytes_;
  std::vector<size_t> ends_;
  std::vector<bool> intact_;
  std::vector<Time> written_at_;
  // The durable image is the first durable_prefix_ records followed by
  // durable_tail_ (records the cache has truncated away but the platter
  // still holds).
  size_t durable_prefix_ = 0;
  std::vector<std::pair<std::string, bool>> durable_tail_;
  Time last_truncate_at_ = Time::zero();
  // The last fsync that took device time: how many records it covers, when
  // it completes, and in which power generation of the disk.
  size_t fsync_covered_ = 0;
  Time fsync_finish_ = Time::zero();
  uint64_t fsync_generation_ = UINT64_MAX;
};

inline size_t RecordRange::size() const { return file_->size(); }
inline Record RecordRange::operator[](size_t i) const { return file_->record(i); }
inline Record RecordRange::iterator::operator*() const { return file_->record(i_); }

class Disk {
 public:
  Disk(EventLoop& loop, DiskOptions options, Rng rng)
      : loop_(&loop), options_(options), rng_(std::move(rng)) {}

  // Opens `path`, creating an empty file if it does not exist.
  File& open(const std::string& path);
  File* find(const std::string& path);
  bool exists(const std::string& path) const { return files_.count(path) != 0; }
  void remove(const std::string& path) {
    if (files_.erase(path) != 0) ++removals_;
  }
  // How many files were removed so far: a File& taken from open() stays
  // valid while this does not change (files live in map nodes).
  uint64_t removals() const { return removals_; }
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
  uint64_t removals_ = 0;
};

}  // namespace sim
