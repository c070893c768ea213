// Protocol step points: the fault proxy (servers/tcp_proxy.h) reads a client's
// request stream and parks the next command that matches a pattern, so a race
// inside a lock algorithm -- check-then-DEL, the SETNX/EXPIRE gap -- can be
// replayed in a library whose code we do not own (docs/faults.md, "Protocol
// step points"). This file is the reading and the matching; the proxy holds
// and lets go of the bytes.
//
// The pattern grammar (`holder-pause:at=resp:PATTERN`):
//
//   PATTERN := STEP ( '>' STEP )*      at most 8 steps
//   STEP    := ALT ( '|' ALT )*        any one of the alternatives
//   ALT     := NAME [ '~' TEXT ]       a command name, optionally with an argument test
//
//   DEL             the next DEL
//   DEL|UNLINK      the next DEL or UNLINK
//   GET>DEL         the next DEL after a GET, on the same connection (commands in
//                   between are allowed: a step waits for the next command it names)
//   SETNX>EXPIRE    the EXPIRE that follows the SETNX
//   EVALSHA|EVAL    the next script call
//   EVAL~del        the next EVAL one of whose arguments contains "del"
//
// Names compare case-insensitively with the command's first word. TEXT is a
// case-insensitive substring any argument after the name must contain; it
// cannot hold '=', '>', '|', '~' or spaces (the fault grammar and this one
// need those). A ':' is kept: the fault spec rejoins the fields of
// at=resp:... (nemesis/fault_spec.cpp), so `EVAL~redis:call` works. Why the argument test exists at all: a library that renews
// its lease runs its extend and its release as scripts alike (EVALSHA), and a
// name alone would park whichever came first; the release script's SHA (or its
// source in an EVAL) tells them apart: `EVALSHA~<sha prefix>|EVAL~del`.
// Only the last step parks; the earlier ones are only seen. Sequences are per
// connection: a pooled client whose GET and DEL go out on two connections does
// not match GET>DEL.
//
// The reader is incremental and never trusts the stream: commands split across
// reads, several in one read, RESP arrays of bulk strings and inline commands.
// A malformed stream stops the reader for that connection for good (it says
// why); its bytes then pass unread. A command is kept in memory only as far as
// matching needs it: its first 16 words, each cut at 4 KiB.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "redis/result.h"

namespace locklab::harness {

// One complete command as the client sent it.
struct RespCommand {
  std::uint64_t begin = 0;         // stream offset of its first byte
  std::uint64_t end = 0;           // one past its last byte
  std::vector<std::string> words;  // the name, then the arguments (at most kMaxWords, each cut at kMaxWordBytes)
  std::size_t argc = 0;            // how many words it really had

  static constexpr std::size_t kMaxWords = 16;
  static constexpr std::size_t kMaxWordBytes = 4096;

  std::string_view name() const { return words.empty() ? std::string_view{} : std::string_view{words[0]}; }
  // "DEL locklab:matrix": the name and a few arguments, each shortened, for a record.
  std::string describe() const;
};

// The client->server byte stream of one connection, read as Redis reads it.
class RespReader {
 public:
  // Read the next bytes of the stream; append every command they complete to `out`.
  void feed(std::string_view bytes, std::vector<RespCommand>& out);

  std::uint64_t fed() const { return fed_; }
  // The stream offset where the command being read began: every byte before it
  // belongs to a complete command. Between commands, when the reader is broken,
  // or when the command being read is already larger than kMaxPartial (held
  // whole it could fill the proxy's buffer): fed().
  std::uint64_t settled() const;
  bool broken() const { return !why_broken_.empty(); }
  const std::string& why_broken() const { return why_broken_; }

  static constexpr std::uint64_t kMaxPartial = 1u << 20;

 private:
  enum class Stage { between, count_line, bulk_line, bulk_body, bulk_end, inline_line };

  // Each takes the bytes from offset fed_ on; `end` is the stream offset just
  // past what completed (the end of a command, when it completes one).
  std::size_t step(std::string_view bytes, std::vector<RespCommand>& out);  // bytes used
  std::size_t take_line(std::string_view bytes, std::size_t limit);
  void begin_command(Stage stage);
  void end_line(std::vector<RespCommand>& out, std::uint64_t end);
  void end_count_line();
  void end_bulk_line();
  void end_inline_line(std::vector<RespCommand>& out, std::uint64_t end);
  std::size_t take_body(std::string_view bytes);
  void end_word(std::vector<RespCommand>& out, std::uint64_t end);
  void emit(std::vector<RespCommand>& out, std::uint64_t end);
  void fail(std::string why);

  Stage stage_ = Stage::between;
  std::uint64_t fed_ = 0;
  std::string line_;               // the header or inline line being read, without its newline
  std::int64_t words_left_ = 0;    // array elements still to read
  std::uint64_t body_left_ = 0;    // bytes of the current bulk string still to read
  std::uint64_t end_left_ = 0;     // of its "\r\n"
  bool keep_word_ = false;         // the bulk string being read is one of the command's first kMaxWords
  RespCommand command_;            // the one being read
  std::string why_broken_;
};

// A parsed PATTERN (grammar above).
class RespPattern {
 public:
  // A usage error naming what is wrong ("empty step", "bad name '1X'", ...).
  static Result<RespPattern> parse(std::string_view text);

  const std::string& text() const { return text_; }
  std::size_t steps() const { return steps_.size(); }
  bool step_matches(std::size_t step, const RespCommand& command) const;

  static constexpr std::size_t kMaxSteps = 8;

 private:
  struct Alternative {
    std::string name;  // upper case
    std::string text;  // lower case; empty: no argument test
  };
  std::string text_;
  std::vector<std::vector<Alternative>> steps_;
};

// How far one connection has come through a pattern.
class RespMatcher {
 public:
  explicit RespMatcher(std::shared_ptr<const RespPattern> pattern) : pattern_(std::move(pattern)) {}
  // Advance by one command; true when it completed the pattern (this command is the one to park).
  bool advance(const RespCommand& command);

 private:
  std::shared_ptr<const RespPattern> pattern_;
  std::size_t next_ = 0;
};

// The watched links of one client (one per lock server), armed together: the
// first match among them parks, and from then every link of the group holds
// what it has not forwarded. Groups that share a budget (any client, or
// holder-crash's times=K) park while it lasts. Proxies run one thread each:
// everything here is thread-safe.
//
// `on_park` runs on the parking proxy's thread the moment the group parks,
// before the proxy reads another byte: what must happen before the client
// can notice that its reply is late (SIGSTOP it: a client whose own request
// timeout is shorter than a coordinator's tick would otherwise time out and
// go on). It must not block.
class ParkGroup {
 public:
  struct Arrival {
    std::size_t member = 0;  // which link of the group (the caller's numbering: the lock server)
    std::string command;     // RespCommand::describe()
    std::chrono::steady_clock::time_point at;
  };

  // `budget`: parks all groups sharing it may take; null: this group's own one.
  explicit ParkGroup(std::shared_ptr<std::atomic<int>> budget = nullptr, std::function<void()> on_park = {});

  // The first match of the group takes the park, if the budget allows.
  bool claim(Arrival arrival);
  bool claimed() const { return claimed_.load(); }
  std::optional<Arrival> arrival() const;

 private:
  std::shared_ptr<std::atomic<int>> budget_;
  std::function<void()> on_park_;
  std::atomic<bool> claimed_{false};
  mutable std::mutex mutex_;
  std::optional<Arrival> arrival_;
};

}  // namespace locklab::harness
