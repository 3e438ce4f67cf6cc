#include "model/client/connection_errors.h"

#include <algorithm>

namespace client {

bool ConnectionErrors::first(const std::string& error, int32_t node, int64_t now_us) {
  if (now_us != at_us_) {
    at_us_ = now_us;
    seen_.clear();
  }
  const std::pair<std::string, int32_t> key{error, node};
  if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) return false;
  seen_.push_back(key);
  return true;
}

}  // namespace client
