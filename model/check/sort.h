// sort_runs: the checkers' sort for data that is mostly in order already.
//
// A history mostly comes in order (values rise with time, offsets with
// reads), so [first, last) is cut into its maximal non-descending runs and,
// when they are few (at most n/32 + 1), neighbouring runs are merged pairwise
// with std::inplace_merge: O(n log runs), and one pass when already sorted.
// Many short runs go to std::sort. Meant for orders under which equal
// elements are identical (all fields compared, or an index among them): then
// any correct sort gives the same bytes, so swapping std::sort for this one
// changes no verdict.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace check {

template <typename It, typename Less = std::less<>>
void sort_runs(It first, It last, Less less = {}) {
  const auto n = static_cast<size_t>(last - first);
  std::vector<size_t> bounds{0};
  for (size_t i = 1; i < n; ++i) {
    if (less(first[i], first[i - 1])) bounds.push_back(i);
  }
  bounds.push_back(n);
  if (bounds.size() <= 2) return;  // one run: sorted
  if (bounds.size() - 1 > n / 32 + 1) {
    std::sort(first, last, less);
    return;
  }
  const auto at = [first](size_t i) { return first + static_cast<std::ptrdiff_t>(i); };
  while (bounds.size() > 2) {
    std::vector<size_t> next{0};
    size_t k = 0;
    for (; k + 2 < bounds.size(); k += 2) {
      std::inplace_merge(at(bounds[k]), at(bounds[k + 1]), at(bounds[k + 2]), less);
      next.push_back(bounds[k + 2]);
    }
    // An odd run out is carried to the next round as it is.
    if (next.back() != bounds.back()) next.push_back(bounds.back());
    bounds = std::move(next);
  }
}

template <typename T>
void sort_runs(std::vector<T>& v) {
  sort_runs(v.begin(), v.end());
}

}  // namespace check
