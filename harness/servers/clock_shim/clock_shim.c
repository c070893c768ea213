/* locklab's clock shim: LD_PRELOAD it into a redis-server to move that node's
 * wall clock (Redis expires keys by CLOCK_REALTIME) without touching the host.
 *
 * It overrides gettimeofday(), time() and clock_gettime() and answers them
 * from the kernel through syscall(SYS_clock_gettime, ...), never through the
 * libc symbols it replaces: no dlsym(RTLD_NEXT), so no allocation and no
 * recursion. (Debian's libfaketime 0.9.10 resolves the real functions lazily;
 * preloaded into Debian's redis-server 7.0.15, jemalloc's initialisation calls
 * clock_gettime() while that happens and the server never comes up.)
 *
 * The offset, in milliseconds (may be negative), is the text of the file named
 * by the variable LOCKLAB_CLOCK_OFFSET_ENV (contract.h); a missing or unreadable file means 0. The
 * nemesis replaces the file atomically (write a temp file, rename it over), so
 * a reader sees the old offset or the new one, never half of one. Redis asks
 * for the time very often: the file is checked at most once per millisecond,
 * by one thread at a time, and re-read only when its inode or mtime changed.
 * Monotonic and CPU-time clocks are passed through unchanged. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "servers/clock_shim/contract.h"

#define NS_PER_MS 1000000LL
#define NS_PER_S 1000000000LL

static _Atomic long long offset_ns;        /* the offset in force */
static _Atomic long long next_check_ns;    /* monotonic time of the next file check */
static _Atomic int checking;               /* one thread checks the file at a time */
static ino_t seen_inode;                   /* guarded by `checking` */
static struct timespec seen_mtime;         /* guarded by `checking` */

static int kernel_clock_gettime(clockid_t clock, struct timespec *now) {
  return (int)syscall(SYS_clock_gettime, clock, now);
}

static long long monotonic_ns(void) {
  struct timespec now = {0, 0};
  kernel_clock_gettime(CLOCK_MONOTONIC, &now);
  return (long long)now.tv_sec * NS_PER_S + now.tv_nsec;
}

/* Parses "[+-]digits" (surrounding whitespace allowed); 0 on anything else. */
static long long parse_ms(const char *text, ssize_t length) {
  long long value = 0;
  int negative = 0, digits = 0;
  ssize_t i = 0;
  while (i < length && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i < length && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  for (; i < length && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) value = value * 10 + (text[i] - '0');
  return digits == 0 ? 0 : (negative ? -value : value);
}

static void reread_offset(const char *path) {
  struct stat status;
  if (stat(path, &status) != 0) {
    atomic_store(&offset_ns, 0);
    seen_inode = 0;
    return;
  }
  if (status.st_ino == seen_inode && status.st_mtim.tv_sec == seen_mtime.tv_sec &&
      status.st_mtim.tv_nsec == seen_mtime.tv_nsec)
    return;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char text[32];
  const ssize_t length = read(fd, text, sizeof text);
  close(fd);
  if (length < 0) return;
  atomic_store(&offset_ns, parse_ms(text, length) * NS_PER_MS);
  seen_inode = status.st_ino;
  seen_mtime = status.st_mtim;
}

/* getenv() once: the environment of a server does not change while it runs. */
static const char *offset_file(void) {
  static _Atomic(const char *) path;
  static _Atomic int looked;
  if (!atomic_load(&looked)) {
    atomic_store(&path, getenv(LOCKLAB_CLOCK_OFFSET_ENV));
    atomic_store(&looked, 1);
  }
  return atomic_load(&path);
}

static long long current_offset_ns(void) {
  const char *path = offset_file();
  if (path == NULL || *path == '\0') return 0;
  const long long now = monotonic_ns();
  if (now >= atomic_load(&next_check_ns)) {
    int expected = 0;
    if (atomic_compare_exchange_strong(&checking, &expected, 1)) {
      reread_offset(path);
      atomic_store(&next_check_ns, now + NS_PER_MS);
      atomic_store(&checking, 0);
    }
  }
  return atomic_load(&offset_ns);
}

static void shift(struct timespec *time, long long by_ns) {
  long long ns = (long long)time->tv_nsec + by_ns % NS_PER_S;
  time_t seconds = time->tv_sec + (time_t)(by_ns / NS_PER_S);
  if (ns < 0) {
    ns += NS_PER_S;
    --seconds;
  } else if (ns >= NS_PER_S) {
    ns -= NS_PER_S;
    ++seconds;
  }
  time->tv_sec = seconds;
  time->tv_nsec = (long)ns;
}

static int is_wall_clock(clockid_t clock) { return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE; }

/* The exported functions share this one, not each other: a call to the exported
 * clock_gettime() from inside the library could bind to another definition. */
static int shifted_clock_gettime(clockid_t clock, struct timespec *now) {
  const int result = kernel_clock_gettime(clock, now);
  if (result == 0 && is_wall_clock(clock)) shift(now, current_offset_ns());
  return result;
}

int clock_gettime(clockid_t clock, struct timespec *now) { return shifted_clock_gettime(clock, now); }

int gettimeofday(struct timeval *restrict now, void *restrict zone) {
  (void)zone; /* obsolete; glibc ignores it too */
  struct timespec wall;
  if (shifted_clock_gettime(CLOCK_REALTIME, &wall) != 0) return -1;
  now->tv_sec = wall.tv_sec;
  now->tv_usec = wall.tv_nsec / 1000;
  return 0;
}

time_t time(time_t *out) {
  struct timespec wall;
  if (shifted_clock_gettime(CLOCK_REALTIME, &wall) != 0) return (time_t)-1;
  if (out != NULL) *out = wall.tv_sec;
  return wall.tv_sec;
}
