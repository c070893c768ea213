// Errors as values, project-wide: every Redis call, file write and command-line
// check returns Result<T> (or Status); nothing throws across these seams.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace locklab {

enum class ErrorKind {
  io,        // socket error, connection refused
  timeout,   // no reply within the command timeout (the request may have been applied!)
  closed,    // the server closed the connection
  protocol,  // malformed reply
  reply,     // the server answered with an error reply (-ERR ..., -NOSCRIPT ...)
  auth,      // AUTH refused
  usage,     // bad argument on our side (empty key, ttl <= 0, ...)
};

const char* to_string(ErrorKind kind);

struct Error {
  ErrorKind kind;
  std::string message;
  // Set by redis::Connection when the failure came after (part of) the request
  // had been written: a timeout, a close or a reset then means "maybe applied".
  // Failures to connect, and failures before a byte was written, leave it false.
  bool request_sent = false;

  // The one answer to "was the request applied?" for every generation: a
  // request that was sent but whose reply never came may have been applied.
  bool outcome_unknown() const { return request_sent && kind != ErrorKind::reply && kind != ErrorKind::usage; }
};

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

struct Done {};  // the value of a Result that carries nothing but success
using Status = Result<Done>;

}  // namespace locklab
