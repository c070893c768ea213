// RAII over redisReply with typed, checked access.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

struct redisReply;

namespace locklab::redis {

class Reply {
 public:
  explicit Reply(redisReply* raw);  // takes ownership of a top-level reply

  bool is_nil() const;
  bool is_error() const;
  bool is_integer() const;
  bool is_string() const;  // bulk string
  bool is_status(std::string_view expected = {}) const;  // "+OK" etc.; empty = any status
  bool is_array() const;

  long long integer() const;           // 0 unless is_integer()
  std::string_view text() const;       // bulk, status or error text; empty otherwise
  std::optional<std::string> string() const;  // bulk string, nullopt when nil
  std::size_t size() const;            // array length
  Reply element(std::size_t index) const;  // borrowed view into an array element

  std::string describe() const;  // for error messages: "integer 1", "nil", "error ERR ..."

 private:
  struct Deleter {
    void operator()(redisReply* raw) const;
  };
  Reply(std::shared_ptr<redisReply> owner, const redisReply* view);

  std::shared_ptr<redisReply> owner_;  // shared so element views keep the tree alive
  const redisReply* view_;
};

}  // namespace locklab::redis
