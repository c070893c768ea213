// A lock client in another process and any language (issue 18): locklab speaks
// the adapter protocol of docs/adapters.md to it, one JSON object per line over
// the adapter's stdin and stdout, and the adapter calls its library's public API.
//
// Failures are values. Before a request reaches the adapter, a failure is
// definite (Acquire::error); after it, the outcome is unknown
// (Acquire::unknown, Release::error): "when in doubt, unknown". An adapter
// that prints garbage, answers the wrong shape or id, exits or goes silent is
// broken from then on: every later call fails at once with the same one line,
// which names the adapter (argv[0]) and what it did.
//
// The adapter dies with its client: the child asks the kernel for SIGKILL when
// the thread that spawned it exits (PR_SET_PDEATHSIG; so create the lock on the
// thread that keeps it), and the destructor closes its stdin, waits
// `exit_grace`, then SIGKILLs and reaps it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lock.h"

#include "support/awake_time.h"

namespace locklab::harness {

struct AdapterTimeouts {
  std::chrono::milliseconds init{15'000};       // init -> init_ok: the adapter's start and its imports (the Java kit's own is 12 s)
  std::chrono::milliseconds margin{2'000};      // acquire waits wait_ms + this; release and noop this
  std::chrono::milliseconds exit_grace{1'000};  // after closing its stdin, before SIGKILL
};

// What the adapter said of itself in init_ok.
struct AdapterIdentity {
  std::string library;
  std::string version;
  std::string language;
  std::map<std::string, bool> capabilities;
  std::string key;  // the Redis key it says it locks for init's key ("" = it did not say)
  // The protocol step points it declares (docs/adapters.md, init_ok's
  // `release_window`, `acquire_gap`): what a catalog entry would say, for an
  // adapter no catalog declares. "" = it did not say.
  std::string release_window, acquire_gap;
};

// The adapter's process and our end of its stdin/stdout (one socket pair, so
// a write to an adapter that is gone fails with EPIPE instead of raising SIGPIPE).
// The line of a dead adapter's stderr that names its error (AdapterProcess::stderr_reason()).
std::string last_error_line(const std::string& text);

class AdapterProcess {
 public:
  // `name` names it in the errors of the spawn ("adapter NAME: could not start: ...").
  static Result<AdapterProcess> spawn(const std::vector<std::string>& argv, const std::string& name,
                                      std::chrono::milliseconds exit_grace);

  AdapterProcess(AdapterProcess&& other) noexcept;
  AdapterProcess& operator=(AdapterProcess&& other) = delete;
  AdapterProcess(const AdapterProcess&) = delete;
  AdapterProcess& operator=(const AdapterProcess&) = delete;
  ~AdapterProcess() { end(); }
  // Closes its stdin (its cue to exit), waits `exit_grace`, SIGKILLs and reaps
  // it; closes our end. Idempotent.
  void end();

  Status send_line(const std::string& line);  // never blocks; fails if the adapter stopped reading
  // The next line without its '\n'; ErrorKind::timeout once `bound` is spent
  // (a line already there is read first), closed at EOF. The bound counts no
  // time the process was stopped (support/awake_time.h: a holder-pause).
  Result<std::string> read_line(AwakeBound& bound);
  Result<std::string> read_line(std::chrono::milliseconds bound) {
    AwakeBound awake(bound);
    return read_line(awake);
  }
  // After EOF: "exited with status 3", "was killed by signal 9", or "closed its stdout".
  std::string exit_description();
  // What the adapter last said on its stderr (kept in a memory file, not shown): the line a
  // dying runtime names its error on ("Error: ...", a Python traceback's last line), else its
  // last non-empty line; "" when it said nothing.
  std::string stderr_reason() const;
  // After EOF, reaped within the grace: it exited non-zero or was killed by a signal (a
  // runtime dying on an unhandled error), not a clean exit nor a closed stdout.
  bool exited_on_error();
  // Without blocking: reaped, or its end of the socket hung up.
  bool hung_up();
  // Keeps the stderr memory file under 1 MiB (emptied past it: the end is what counts).
  void cap_stderr();
  pid_t pid() const { return pid_; }  // kept after the child is reaped

 private:
  AdapterProcess(pid_t pid, int fd, int stderr_fd, std::chrono::milliseconds exit_grace)
      : pid_(pid), fd_(fd), stderr_fd_(stderr_fd), exit_grace_(exit_grace) {}
  bool try_reap();

  pid_t pid_ = -1;
  int fd_ = -1;
  int stderr_fd_ = -1;  // the adapter's stderr: a memory file (memfd), read by stderr_reason()
  bool reaped_ = false;
  int status_ = 0;
  std::chrono::milliseconds exit_grace_;
  std::string buffer_;
};

class AdapterLock final : public DistributedLock {
 public:
  // Spawns `argv` (argv[0] is run through PATH), sends init with the config's
  // servers, key and ttl and the client number, and checks init_ok. `label`
  // names the adapter in every error line ("ext:redis-py"); empty: argv[0].
  static Result<std::unique_ptr<AdapterLock>> create(std::vector<std::string> argv, const LockConfig& config,
                                                     int client, AdapterTimeouts timeouts = {},
                                                     std::string label = {});

  Acquire try_acquire(std::chrono::milliseconds wait) override;
  Release release() override;
  // One noop round trip: the adapter's overhead, measured, never subtracted silently.
  Result<std::chrono::microseconds> noop();

  std::uint64_t leases_lost() const override { return leases_lost_.load(); }  // unasked `event: lost` lines
  // The `fencing_token` of the last `acquired`, while held, once carry_tokens() was called: the
  // workload then carries it to the fenced counter, which refuses a stale one (as generation 7's).
  std::optional<std::uint64_t> fencing_token() const override { return token_; }
  // The row's service hands the library's token to its resource (catalog `token_at_resource`):
  // from now on an `acquired` must carry a `fencing_token`, a non-negative integer.
  void carry_tokens() { carry_tokens_ = true; }
  const AdapterIdentity& identity() const { return identity_; }
  // The one line that says how the adapter broke ("" while it behaves).
  std::string broken() const override { return broken_; }
  // The adapter exited mid-run ("client 2's adapter exited with status 1: the service dies on
  // Error: ..."): its client crashed, not an error of the harness. "" while it lives.
  std::string died() const override { return died_; }
  bool died_now() override;
  bool died_within(std::chrono::milliseconds span) override;
  Blocked blocked() const override { return blocked_; }
  // Closes the adapter's stdin and reaps it (SIGKILL after exit_grace); every later call fails.
  void close() override;
  pid_t pid() const { return process_.pid(); }

 private:
  AdapterLock(AdapterProcess process, std::string name, std::chrono::milliseconds ttl,
              std::optional<std::chrono::milliseconds> retry, AdapterTimeouts timeouts)
      : process_(std::move(process)), name_(std::move(name)), ttl_(ttl), retry_(retry), timeouts_(timeouts) {}
  struct Reply;
  Result<Reply> ask(Reply request, const char* what, std::chrono::milliseconds bound);
  Result<Reply> read_reply(long long id, const char* what, std::chrono::milliseconds bound);
  Error broke(std::string what_it_did, bool request_sent);
  Status check_init(const Reply& reply);
  Status check_contained();  // every process of the adapter is where a fault reaches it
  Status carried_token(const Reply& reply);

  AdapterProcess process_;
  std::string name_;  // argv[0], in every error line
  std::chrono::milliseconds ttl_;
  // The run's --retry, sent with every acquire as retry_ms (none: the adapter's own pause).
  std::optional<std::chrono::milliseconds> retry_;
  AdapterTimeouts timeouts_;
  AdapterIdentity identity_;
  long long next_id_ = 1;
  std::string broken_;  // set once the adapter misbehaved: every later call fails with it
  std::string died_;    // set when it exited after init (a crash of its client, not a break)
  int client_ = 0;
  bool initialized_ = false;  // init_ok came: an exit from here on is a death, not a failure to start
  Blocked blocked_;     // calls answered with blocked_ms: the library still waiting past the bound
  std::chrono::nanoseconds last_awake_{0};  // the awake time the last reply took (read_reply)
  Status note_blocked(const Reply& reply, const char* what, bool blocked_word, std::chrono::milliseconds needed);
  Error exited(const char* when);
  Error gone(const std::string& when);
  std::string said() const;
  bool closed_ = false;  // close() ended it
  std::atomic<std::uint64_t> leases_lost_{0};
  bool carry_tokens_ = false;
  std::optional<std::uint64_t> token_;
};

}  // namespace locklab::harness
