// sim::FlatMap: a map kept as one sorted vector of (key, value) pairs.
//
// For the small maps looked up on every message (a process's few sockets):
// a search touches one or two cache lines, where std::map follows a pointer
// to a separately allocated node at every level. Inserting or erasing moves
// the entries after it, so it suits maps of tens of entries, not thousands.
// Iteration is in key order, as std::map's.
//
// Unlike std::map, inserting or erasing invalidates every pointer and
// reference into the map: callers must not hold one across either.
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace sim {

template <typename K, typename V>
class FlatMap {
 public:
  using value_type = std::pair<K, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  V* find(const K& key) {
    const auto it = position(key);
    return it != entries_.end() && it->first == key ? &it->second : nullptr;
  }
  const V* find(const K& key) const {
    const auto it = position(key);
    return it != entries_.end() && it->first == key ? &it->second : nullptr;
  }
  size_t count(const K& key) const { return find(key) == nullptr ? 0 : 1; }
  // The value of `key`, which must be there (std::out_of_range if not).
  V& at(const K& key) {
    V* v = find(key);
    if (v == nullptr) throw std::out_of_range("sim::FlatMap::at: no such key");
    return *v;
  }
  const V& at(const K& key) const {
    const V* v = find(key);
    if (v == nullptr) throw std::out_of_range("sim::FlatMap::at: no such key");
    return *v;
  }
  // The value of `key`, inserted default-constructed if absent.
  V& operator[](const K& key) {
    const auto it = position(key);
    if (it != entries_.end() && it->first == key) return it->second;
    return entries_.insert(it, value_type(key, V{}))->second;
  }
  // Returns whether `key` was there.
  bool erase(const K& key) {
    const auto it = position(key);
    if (it == entries_.end() || !(it->first == key)) return false;
    entries_.erase(it);
    return true;
  }
  // The first entry whose key is not less than `key`.
  const_iterator lower_bound(const K& key) const { return position(key); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }
  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

 private:
  // Where `key` is, or would go.
  iterator position(const K& key) { return std::lower_bound(entries_.begin(), entries_.end(), key, before); }
  const_iterator position(const K& key) const {
    return std::lower_bound(entries_.begin(), entries_.end(), key, before);
  }
  static bool before(const value_type& e, const K& k) { return e.first < k; }

  std::vector<value_type> entries_;
};

}  // namespace sim
