// A per-process singleton that a fork()ed child never inherits.
//
// Generation 5 keeps two services per process (the renewal timer thread and
// the pub/sub subscriber). Threads do not survive fork(): a child that reused
// its parent's object would schedule renewals on a thread that does not exist.
// So the instance is tagged with the pid that created it; a different pid means
// "we are a child": build a fresh one, lazily, on first use in that process.
// The parent's copy is kept reachable but never touched (its mutexes may have
// been held by a parent thread at fork time; its destructor would join threads
// that are not there). pthread_atfork keeps our own mutex consistent across fork.
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <vector>

namespace locklab {

template <class T>
class ProcessLocal {
 public:
  // The instance for the calling process, created on first use here.
  static T& get() {
    static std::once_flag registered;
    std::call_once(registered, [] { pthread_atfork(&lock_mutex, &unlock_mutex, &unlock_mutex); });
    std::lock_guard guard(mutex());
    State& state = self();
    if (state.instance == nullptr || state.creator != ::getpid()) {
      if (state.instance != nullptr) inherited().push_back(state.instance);  // abandoned, never used
      state.instance = new T();
      state.creator = ::getpid();
    }
    return *state.instance;
  }

 private:
  struct State {
    T* instance = nullptr;
    pid_t creator = -1;
  };
  static State& self() {
    static State state;
    return state;
  }
  static std::vector<T*>& inherited() {
    static std::vector<T*> list;
    return list;
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  // Held across fork() so the child never starts with it locked by a thread it lacks.
  static void lock_mutex() { mutex().lock(); }
  static void unlock_mutex() { mutex().unlock(); }
};

}  // namespace locklab
