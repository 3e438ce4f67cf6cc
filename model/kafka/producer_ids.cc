#include "model/kafka/producer_ids.h"

#include <optional>
#include <utility>

namespace kafka {

void claim_producer_id_block(zk::Client& zk, const std::string& path, BrokerId broker,
                             ProducerIdBlockClaimed done) {
  zk.get_data(path, false, [&zk, path, broker, done = std::move(done)](
                               zk::Error e, const std::string& data, const std::optional<zk::Stat>& stat) {
    if (e != zk::Error::ok || !stat) {
      done(e == zk::Error::ok ? zk::Error::no_node : e, nullptr);
      return;
    }
    // An empty znode: no block claimed yet, the first starts at 0.
    int64_t start = 0;
    if (!data.empty()) {
      const auto last = znodes::decode_producer_id_block(data);
      if (!last) {
        done(zk::Error::ok, nullptr);
        return;
      }
      start = last->block_end + 1;
    }
    const znodes::ProducerIdBlock block{broker, start, start + kProducerIdBlockSize - 1};
    zk.set_data(path, znodes::encode_producer_id_block(block), stat->version,
                [&zk, path, broker, block, done](zk::Error e, const std::optional<zk::Stat>&) {
                  if (e == zk::Error::bad_version) {
                    // Another claimer wrote first: read again.
                    claim_producer_id_block(zk, path, broker, done);
                    return;
                  }
                  done(e, e == zk::Error::ok ? &block : nullptr);
                });
  });
}

}  // namespace kafka
