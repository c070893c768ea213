#include "scenario/key_ledger.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "scenario/messages.h"

namespace locklab::harness {
namespace {

std::string upper(std::string word) {
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
  return word;
}

bool has_option(const std::vector<std::string>& request, const char* option) {
  for (std::size_t i = 3; i < request.size(); ++i)
    if (upper(request[i]) == option) return true;
  return false;
}

// Commands that read a key, or change only its lease: its writer stays its writer.
bool leaves_writer(const std::string& command) {
  static const std::set<std::string> kept = {"GET",  "PTTL",   "TTL",     "EXISTS",  "HGETALL",  "HGET",
                                             "HEXISTS", "TYPE", "PEXPIRE", "EXPIRE", "PEXPIREAT", "EXPIREAT",
                                             "WAIT", "SCRIPT", "PING",    "INFO",    "PUBLISH",  "SUBSCRIBE",
                                             "UNSUBSCRIBE"};
  return kept.count(command) > 0;
}

}  // namespace

std::optional<std::string> KeyLedger::answered(const std::string& who, const std::string& server,
                                               const std::vector<std::string>& request, const LedgerReply& reply,
                                               int step) {
  last_claim_.reset();
  if (request.size() < 2 || reply.kind == LedgerReply::Kind::error) return std::nullopt;
  const std::string command = upper(request[0]);
  if (command == "EVAL" || command == "EVALSHA") {  // a script: its effect is not readable from here
    const long long keys = request.size() > 2 ? std::atoll(request[2].c_str()) : 0;
    for (long long i = 0; i < keys && 3 + static_cast<std::size_t>(i) < request.size(); ++i)
      keys_.erase({server, request[3 + static_cast<std::size_t>(i)]});
    return std::nullopt;
  }
  if (leaves_writer(command)) return std::nullopt;
  Entry& entry = keys_[{server, request[1]}];
  const bool integer = reply.kind == LedgerReply::Kind::integer;
  if (command == "SET") {
    if (reply.kind == LedgerReply::Kind::status) return wrote(entry, who, step);
    if (reply.kind == LedgerReply::Kind::nil && has_option(request, "NX")) return refused(entry, who);
    return std::nullopt;
  }
  if (command == "SETNX" && integer) return reply.integer == 1 ? wrote(entry, who, step) : refused(entry, who);
  if (command == "GETSET") return wrote(entry, who, step);
  if (command == "DEL" && request.size() == 2 && integer) return deleted(entry, who, reply.integer, step);
  keys_.erase({server, request[1]});  // a write the ledger cannot read: forget the key
  return std::nullopt;
}

std::optional<std::string> KeyLedger::wrote(Entry& entry, const std::string& who, int step) {
  entry = Entry{};
  entry.writer = who;
  entry.written_step = step;
  return std::nullopt;
}

std::optional<std::string> KeyLedger::deleted(Entry& entry, const std::string& who, long long count, int step) {
  if (count > 0) {
    const Entry before = entry;
    entry = Entry{};
    entry.deleted_by = who;
    entry.deleted_writer = before.writer;
    entry.deleted_step = step;
    entry.deleted_written_step = before.written_step;
    if (before.writer.empty() || before.writer == who) return std::nullopt;
    return text("{0}'s DEL deleted {1}'s key (误删): {1} wrote it at step {2}", who, before.writer,
                before.written_step);
  }
  // Nothing to delete: if the key was this client's and another's DEL took it, say so.
  if (!entry.deleted_by.empty() && entry.deleted_by != who && entry.deleted_writer == who) {
    last_claim_ = LeaseClaim{entry.deleted_step, entry.deleted_written_step};
    return text("{0}'s key did not expire: {1}'s DEL deleted it at step {2}", who, entry.deleted_by,
                entry.deleted_step);
  }
  return std::nullopt;
}

std::optional<std::string> KeyLedger::refused(Entry& entry, const std::string& who) {
  if (entry.writer.empty() || entry.writer == who || !entry.writer_left || entry.told_left) return std::nullopt;
  entry.told_left = true;
  return text("the key is still {0}'s: {0} has left its critical section but not released the lock yet",
              entry.writer);
}

void KeyLedger::entered(const std::string& who) {
  for (auto& [where, entry] : keys_)
    if (entry.writer == who) entry.writer_left = false;
}

void KeyLedger::left(const std::string& who) {
  for (auto& [where, entry] : keys_)
    if (entry.writer == who) {
      entry.writer_left = true;
      entry.told_left = false;
    }
}

void KeyLedger::crashed(const std::string& who) {
  for (auto& [where, entry] : keys_)
    if (entry.writer == who) entry.told_left = true;  // nobody waits for a dead client's release
}

}  // namespace locklab::harness
