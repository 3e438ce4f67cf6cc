// A first-in, first-out queue for queues that are mostly empty or hold a
// few items: a vector and a read position. It keeps its capacity, so a
// queue that fills and drains over and over allocates once, where a
// std::deque allocates and frees a block every few items (or every item,
// for items of a few hundred bytes).
#pragma once

#include <cstddef>
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
  void push_back(T item) { items_.push_back(std::move(item)); }
  // Removes the front item (the storage is reused once the queue drains).
  void pop_front() {
    if (head_ + 1 == items_.size()) {
      clear();  // the usual case: the last item goes, and with it the queue
      return;
    }
    items_[head_] = T();
    ++head_;
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }
  // Iteration from front to back.
  auto begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace sim
