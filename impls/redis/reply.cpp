#include "redis/reply.h"

#include <hiredis/hiredis.h>

namespace locklab::redis {

void Reply::Deleter::operator()(redisReply* raw) const {
  if (raw != nullptr) freeReplyObject(raw);
}

Reply::Reply(redisReply* raw) : owner_(raw, Deleter{}), view_(raw) {}

Reply::Reply(std::shared_ptr<redisReply> owner, const redisReply* view)
    : owner_(std::move(owner)), view_(view) {}

bool Reply::is_nil() const { return view_ == nullptr || view_->type == REDIS_REPLY_NIL; }
bool Reply::is_error() const { return view_ != nullptr && view_->type == REDIS_REPLY_ERROR; }
bool Reply::is_integer() const { return view_ != nullptr && view_->type == REDIS_REPLY_INTEGER; }
bool Reply::is_string() const { return view_ != nullptr && view_->type == REDIS_REPLY_STRING; }
bool Reply::is_array() const { return view_ != nullptr && view_->type == REDIS_REPLY_ARRAY; }

bool Reply::is_status(std::string_view expected) const {
  if (view_ == nullptr || view_->type != REDIS_REPLY_STATUS) return false;
  return expected.empty() || text() == expected;
}

long long Reply::integer() const { return is_integer() ? view_->integer : 0; }

std::string_view Reply::text() const {
  if (view_ == nullptr || view_->str == nullptr) return {};
  return {view_->str, view_->len};
}

std::optional<std::string> Reply::string() const {
  if (!is_string() && !is_status()) return std::nullopt;
  return std::string(text());
}

std::size_t Reply::size() const { return is_array() ? view_->elements : 0; }

Reply Reply::element(std::size_t index) const {
  if (index >= size()) return Reply(owner_, nullptr);
  return Reply(owner_, view_->element[index]);
}

std::string Reply::describe() const {
  if (view_ == nullptr) return "nil";
  switch (view_->type) {
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_INTEGER: return "integer " + std::to_string(view_->integer);
    case REDIS_REPLY_STRING: return "string \"" + std::string(text()) + "\"";
    case REDIS_REPLY_STATUS: return "status " + std::string(text());
    case REDIS_REPLY_ERROR: return "error " + std::string(text());
    case REDIS_REPLY_ARRAY: return "array of " + std::to_string(view_->elements);
    default: return "reply type " + std::to_string(view_->type);
  }
}

}  // namespace locklab::redis
