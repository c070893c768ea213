// What a story's traffic says about its keys, for the lines the commands
// alone do not say. The narrator tells the ledger every answered request and
// every critical section entered or left; the ledger answers with a remark to
// narrate, when there is one:
//
//   - a DEL that removed a key another client wrote last: 误删, whose key it was;
//   - a DEL that found no key because another client's DEL removed it, not its lease;
//   - an acquire refused by a key whose writer has left its critical section
//     but not yet released it (once per leaving: the lock is not free yet).
//
// It reads only the commands whose effect it knows from their reply (SET,
// SETNX, GETSET, DEL); a script on a key (EVAL, EVALSHA) or any other write
// makes it forget that key, so a remark is never a guess. It does not see a
// key expire: it remarks only on what a reply proves (DEL => 1: the key was
// there; DEL => 0: it was not).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace locklab::harness {

// A reply as far as the ledger needs it.
struct LedgerReply {
  enum class Kind { nil, integer, status, string, error, other };
  Kind kind = Kind::other;
  long long integer = 0;
};

class KeyLedger {
 public:
  // `who` sent `request` to `server` and got `reply`, narrated as step `step`.
  std::optional<std::string> answered(const std::string& who, const std::string& server,
                                      const std::vector<std::string>& request, const LedgerReply& reply, int step);
  void entered(const std::string& who);
  void left(const std::string& who);
  // `who` died holding what it held: its keys stay, but nobody waits for its release.
  void crashed(const std::string& who);
  // What the last remark answered() made claims of the run, for the narration
  // test (claims.h): "X's key did not expire: Y's DEL deleted it" claims that the
  // DEL (step `deleted`) came within the lease X's write (step `written`) took.
  struct LeaseClaim {
    int deleted = 0;
    int written = 0;
  };
  std::optional<LeaseClaim> last_claim() const { return last_claim_; }

 private:
  struct Entry {
    std::string writer;  // "" = not known
    int written_step = 0;
    bool writer_left = false;   // the writer left its section, its release not seen yet
    bool told_left = false;     // the refusal remark was made for this leaving
    std::string deleted_by;     // the last DEL that removed the key (while nobody wrote it since)
    std::string deleted_writer; // whose key that DEL removed
    int deleted_step = 0;
    int deleted_written_step = 0;  // when the key that DEL removed was written
  };
  using Where = std::pair<std::string, std::string>;  // server, key

  std::optional<std::string> wrote(Entry& entry, const std::string& who, int step);
  std::optional<std::string> deleted(Entry& entry, const std::string& who, long long count, int step);
  std::optional<std::string> refused(Entry& entry, const std::string& who);

  std::map<Where, Entry> keys_;
  std::optional<LeaseClaim> last_claim_;
};

}  // namespace locklab::harness
