// How a story's numbered steps reach the terminal: at once (the default), one
// per Enter (--step-through, for a teacher projecting a terminal), or at a
// fixed pace (--pace MS).
//
// Where the wait sits. The narration is printed from several threads (the
// actors, their background watchdog and subscriber threads, the reader that
// relays a forked ProcessActor's lines through its pipe), each while it is in
// the middle of a command. A wait there would freeze an actor mid-command
// while its lease runs on in Redis. Holding the director between steps would
// not freeze an actor, but every story has leases and validities that keep
// running on the servers while a class talks, so the director's next act
// would find a different world: in ttl_shorter_than_work index3's 1 s lease
// would lapse before index1's late DEL (nothing left to delete), and in
// redlock_restart_without_persistence A's 1.5 s validity would end before Z
// acquires (no second holder). A pause for a human would change the story.
//
// So the wait holds only the printing: the story runs exactly as it does
// without these flags, every narrator call only queues its line, and a
// presenter thread shows the queue one step per Enter (or one per MS). Each
// line carries the time its step really happened, and the verdict is printed
// after the last step has been shown. The header of a stepped story says so on
// screen: what the class sees is the run that just happened, at the class's
// pace, not a run slowed down.
//
// Without a terminal (stdin or stdout not a TTY) --step-through plays straight
// through: nobody could press Enter. --pace needs no terminal.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace locklab::harness {

enum class Playback { straight, step_through, paced };

// --step-through asked for, and the terminal that would answer it: step_through
// only when stdin and stdout are both TTYs; paced when pace > 0; else straight.
Playback choose_playback(bool step_through, std::chrono::milliseconds pace);

class StepPrinter {
 public:
  StepPrinter() = default;
  ~StepPrinter();  // shows what is left without waiting, then stops the presenter
  StepPrinter(const StepPrinter&) = delete;
  StepPrinter& operator=(const StepPrinter&) = delete;

  // Starts the presenter thread (step_through, paced); straight needs none.
  // Call before the first show(), from the process that prints.
  void start(Playback playback, std::chrono::milliseconds pace);
  Playback playback() const { return playback_; }

  // One line of the story (without its newline). Never blocks on the reader:
  // straight prints it at once, the others queue it for the presenter.
  void show(std::string line);
  // Waits until every line shown so far is on the screen; step_through asks
  // for one more Enter first (what follows is the verdict).
  void finish();
  // Prints every queued line at once and stops waiting (a story that dies).
  void flush_now();

 private:
  void present();                                  // the presenter thread
  void join_presenter();                           // once, whoever asks first (finish, flush_now)
  bool wait_for_enter(const std::string& prompt);  // false: q, end of input, or flush_now()
  void pause_between_steps();
  void write_out(const std::string& text) const;

  Playback playback_ = Playback::straight;
  std::chrono::milliseconds pace_{0};
  pid_t owner_ = -1;  // the process whose thread presents: a forked child must never wait for it
  std::thread::id presenter_id_;  // set by start(), read by flush_now() (never the thread object: it may be joining)
  int wake_[2] = {-1, -1};  // a pipe that ends a wait for Enter early (flush_now)
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  bool finishing_ = false;  // finish() was called: after the queue, the verdict
  bool hurry_ = false;      // flush_now(), q or end of input: no more waiting
  bool done_ = false;       // the presenter has shown everything and ended
  // Under mutex_: show() queues while it is true; the presenter clears it as it
  // ends, after its last write, and from then show() prints at once. Read
  // instead of presenter_.joinable(), which finish() and flush_now() change.
  bool presenting_ = false;
  std::mutex join_mutex_;   // presenter_ is joined once, under it
  std::thread presenter_;
};

}  // namespace locklab::harness
