// A queue over a vector and a read position: items go in at the back and
// leave from the front (or, for a log cut back, from the back), and can be
// read by index from the front.
//
// For queues that are mostly empty or hold a few items (network streams,
// request queues) it keeps its capacity, so a queue that fills and drains
// over and over allocates once, where a std::deque allocates and frees a
// block every few items (or every item, for items of a few hundred bytes).
// For a long sequence read by position (a partition's records) an index is
// one addition, where a std::deque of records a few dozen bytes each keeps
// five to a block and works out which block on every access.
//
// Items popped from the front are released at once; their slots are reused
// when the queue drains, or reclaimed (the items behind them moved down)
// when they make up half the storage, so a queue that never drains uses at
// most twice the slots it holds. Capacity is kept, as a vector keeps it.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace sim {

template <typename T>
class Fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& back() { return items_.back(); }
  const T& back() const { return items_.back(); }
  // The i-th item from the front.
  T& operator[](size_t i) { return items_[head_ + i]; }
  const T& operator[](size_t i) const { return items_[head_ + i]; }

  // Room for `n` items in all without another allocation.
  void reserve(size_t n) { items_.reserve(head_ + n); }
  void push_back(T item) { items_.push_back(std::move(item)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return items_.emplace_back(std::forward<Args>(args)...);
  }
  // Removes the front item.
  void pop_front() {
    if (head_ + 1 == items_.size()) {
      clear();  // the usual case: the last item goes, and with it the queue
      return;
    }
    items_[head_] = T();
    ++head_;
    if (head_ >= kCompactAfter && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  // Removes the back item (the queue must not be empty).
  void pop_back() {
    items_.pop_back();
    if (head_ == items_.size()) clear();
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }
  // Iteration from front to back (random access).
  auto begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

 private:
  // Popped slots are given back only in bulk: a short queue never moves its items.
  static constexpr size_t kCompactAfter = 64;
  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace sim
