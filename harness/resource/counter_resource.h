// The protected resource of every run: the seeds' counter demo, a deliberate
// read-modify-write (GET, hold, SET value+1) that loses updates without mutual
// exclusion.
//
// Fenced mode (generation 7, Kleppmann 2016): both the read and the write
// carry the holder's fencing token and go through Lua. The read raises the
// highest token the resource has seen; a write whose token is lower than that
// is refused. Checking only writes is not enough for a read-modify-write: a
// stale holder that writes before the new holder writes would be accepted, and
// the new holder's write would then silently overwrite it (a lost update).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "redis/link.h"
#include "redis/script.h"

namespace locklab::harness {

class CounterResource {
 public:
  CounterResource(redis::ConnectionOptions server, std::string key = "locklab:counter");

  struct Read {
    bool refused = false;  // fenced only: the token is older than one already seen
    long long value = 0;   // a missing counter reads as 0
  };
  // token = nullopt: plain GET; otherwise the fenced read script.
  Result<Read> read(std::optional<std::uint64_t> token);
  // Returns false when a fenced write was refused (stale token).
  Result<bool> write(long long value, std::optional<std::uint64_t> token);

  Result<long long> value();  // the counter now (missing = 0)
  Status reset();             // counter and highest-token-seen deleted

  const std::string& key() const { return key_; }
  const std::string& fence_key() const { return fence_key_; }

 private:
  redis::Link link_;
  std::string key_;
  std::string fence_key_;
  redis::Script fenced_read_;
  redis::Script fenced_write_;
};

}  // namespace locklab::harness
