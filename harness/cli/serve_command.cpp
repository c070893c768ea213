// `locklab serve`: fresh redis-servers for programs that are not locklab
// (scripts/compare-peers' own workers), so that the free-port and startup code
// stays in servers/ and nobody copies it: one HOST:PORT a line on stdout, then
// the servers run until stdin closes or SIGTERM/SIGINT comes; then each is
// stopped and its temp dir removed before the command exits.
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "servers/given_or_own_servers.h"

namespace locklab::cli {

using namespace locklab::harness;

namespace {

constexpr int kMaxMasters = 32;  // servers/redis_server.cpp guards up to 64 live servers per process

// SIGTERM, SIGINT and SIGHUP as a file descriptor, blocked as signals from now
// on; SIGPIPE ignored (a reader that went away is a stop, not a death). Blocked
// only after the servers were forked: they inherit the signal mask, and
// RedisServer::stop() needs their SIGTERM to reach them. A signal during the
// start still ends locklab at once: its servers die with it (they ask for
// PDEATHSIG), but their temporary folders stay.
int stop_signals() {
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTERM);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGHUP);
  ::signal(SIGPIPE, SIG_IGN);
  ::sigprocmask(SIG_BLOCK, &stops, nullptr);
  return ::signalfd(-1, &stops, SFD_CLOEXEC);
}

// Until stdin reaches its end (or fails) or a stop signal arrives. What stdin
// carries is read and ignored: only its end matters.
void wait_for_stop(int signals) {
  pollfd watched[2] = {{STDIN_FILENO, POLLIN, 0}, {signals, POLLIN, 0}};
  char buffer[512];
  for (;;) {
    if (::poll(watched, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (watched[1].revents != 0) return;
    if (watched[0].revents == 0) continue;
    const ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return;
  }
}

int serve(int masters) {
  auto servers = provide_given_or_own_servers({}, static_cast<std::size_t>(masters));
  if (!servers) return complain(kRuntime, servers.error().message);
  const int signals = stop_signals();
  if (signals < 0) return complain(kRuntime, std::string("signalfd: ") + std::strerror(errno));
  for (const auto& server : servers->lock) std::printf("%s\n", server.endpoint.to_string().c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "locklab serve: %d redis-server(s) up; close stdin or send SIGTERM to stop them\n", masters);
  wait_for_stop(signals);
  ::close(signals);
  return kOk;  // `servers` goes: every server stopped, its dir removed
}

}  // namespace

Command add_serve(CLI::App& app) {
  auto* srv = app.add_subcommand(
      "serve", "Start fresh redis-servers on free loopback ports for another program: one HOST:PORT a line on "
               "stdout; they run until stdin closes or SIGTERM, then stop");
  auto masters = std::make_shared<int>(1);
  srv->add_option("--masters", *masters, "How many independent redis-servers")
      ->check(CLI::Range(1, kMaxMasters))
      ->capture_default_str();
  return {srv, [masters](const std::string&) { return serve(*masters); }};
}

}  // namespace locklab::cli
