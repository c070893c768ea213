#include "counter_service.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>

namespace locklab::scenarios {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kWorkerThreads = 64;  // > ab's -c50 in flight (Tomcat's default is 200)

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void use_many_threads(httplib::Server& server) {
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
}

// The child: one service instance. Never returns (it must not run the parent's destructors).
[[noreturn]] void run_instance(const CounterSetup& setup, int port_pipe) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // Inherited from the parent: the launcher's handler (it would kill the parent's
  // redis-servers) and the blocked mask. An instance just dies on either signal.
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  const sigset_t signals = stop_signals();
  ::pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);

  httplib::Server server;
  use_many_threads(server);
  server.Get("/test", [&setup](const httplib::Request&, httplib::Response& response) {
    const RequestOutcome outcome = increment_counter(setup);
    response.status = outcome == RequestOutcome::lock_not_taken ? 503
                      : outcome == RequestOutcome::redis_failed  ? 500
                                                                 : 200;
    response.set_content(std::string(to_string(outcome)) + "\n", "text/plain");
  });
  server.Get("/counter", [&setup](const httplib::Request&, httplib::Response& response) {
    auto counter = read_counter(setup);
    response.status = counter ? 200 : 500;
    response.set_content((counter ? *counter : counter.error().message) + "\n", "text/plain");
  });
  server.Get("/reset", [&setup](const httplib::Request&, httplib::Response& response) {
    auto done = reset_counter(setup);
    response.status = done ? 200 : 500;
    response.set_content(done ? "1\n" : done.error().message + "\n", "text/plain");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  const bool written = ::write(port_pipe, &port, sizeof port) == static_cast<ssize_t>(sizeof port);
  ::close(port_pipe);
  if (port <= 0 || !written) ::_exit(1);
  server.listen_after_bind();
  ::_exit(0);
}

struct Instance {
  pid_t pid = -1;
  int port = -1;
};

// Reads the child's port, waiting at most `limit`.
int read_port(int fd, std::chrono::milliseconds limit) {
  pollfd watched{fd, POLLIN, 0};
  int port = -1;
  if (::poll(&watched, 1, static_cast<int>(limit.count())) == 1 &&
      ::read(fd, &port, sizeof port) != static_cast<ssize_t>(sizeof port))
    port = -1;
  return port;
}

Result<Instance> start_instance(const CounterSetup& setup) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error{ErrorKind::io, "pipe failed"};
  std::fflush(nullptr);  // the child must not repeat our buffered output
  const pid_t pid = ::fork();
  if (pid < 0) return Error{ErrorKind::io, "fork failed"};
  if (pid == 0) {
    ::close(fds[0]);
    run_instance(setup, fds[1]);
  }
  ::close(fds[1]);
  const int port = read_port(fds[0], 10s);
  ::close(fds[0]);
  if (port <= 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Error{ErrorKind::io, "an instance did not start"};
  }
  return Instance{pid, port};
}

// SIGTERM, then SIGKILL if it lingers; always reaped.
void stop_instance(const Instance& instance) {
  ::kill(instance.pid, SIGTERM);
  for (auto deadline = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < deadline;) {
    if (::waitpid(instance.pid, nullptr, WNOHANG) == instance.pid) return;
    std::this_thread::sleep_for(10ms);
  }
  ::kill(instance.pid, SIGKILL);
  ::waitpid(instance.pid, nullptr, 0);
}

// The article's gateway: each request goes to the next instance in turn.
void route_round_robin(httplib::Server& front, const std::vector<Instance>& instances, std::chrono::milliseconds wait) {
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  front.Get(R"(/.*)", [&instances, next, wait](const httplib::Request& request, httplib::Response& response) {
    const Instance& target = instances[(*next)++ % instances.size()];
    httplib::Client client("127.0.0.1", target.port);
    client.set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(wait) + 5s);
    auto answer = client.Get(request.path.c_str());
    if (!answer) {
      response.status = 502;
      response.set_content("instance unreachable\n", "text/plain");
      return;
    }
    response.status = answer->status;
    response.set_content(answer->body, "text/plain");
  });
}

std::string join(const std::vector<int>& numbers) {
  std::string text;
  for (int n : numbers) {
    if (!text.empty()) text += ',';
    text += std::to_string(n);
  }
  return text.empty() ? "-" : text;
}

}  // namespace

// `count` instances, or none (those started are stopped) and why not.
Result<std::vector<Instance>> start_instances(const CounterSetup& setup, int count) {
  std::vector<Instance> instances;
  for (int i = 0; i < count; ++i) {
    auto started = start_instance(setup);
    if (!started) {
      for (const auto& instance : instances) stop_instance(instance);
      return started.error();
    }
    instances.push_back(*started);
  }
  return instances;
}

// What a user needs to drive the demo: the front's address, the pids, the ab line.
void announce(int port, const ServeOptions& options, const std::vector<Instance>& instances) {
  std::vector<int> instance_pids, instance_ports;
  for (const auto& instance : instances) {
    instance_pids.push_back(instance.pid);
    instance_ports.push_back(instance.port);
  }
  std::printf("counter_demo: listening on http://127.0.0.1:%d/ (lock %s, %zu %s on %s %s, counter set to 1)\n",
              port, options.setup.lock_name.c_str(), instances.size(), instances.size() == 1 ? "instance" : "instances",
              instances.size() == 1 ? "port" : "ports", join(instance_ports).c_str());
  std::printf("counter_demo: pids: instances %s; redis %s\n", join(instance_pids).c_str(),
              join(options.redis_pids).c_str());
  std::printf("counter_demo: try  ab -n100 -c50 http://127.0.0.1:%d/test  then  curl http://127.0.0.1:%d/counter\n",
              port, port);
  std::fflush(stdout);
}

int serve(const ServeOptions& options) {
  // From here on, only sigwait below sees SIGINT/SIGTERM (every thread inherits the mask).
  const sigset_t signals = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  if (auto reset = reset_counter(options.setup); !reset) {
    std::fprintf(stderr, "counter_demo: cannot set the counter: %s\n", reset.error().message.c_str());
    return 1;
  }
  auto started = start_instances(options.setup, options.instances);
  if (!started) {
    std::fprintf(stderr, "counter_demo: %s\n", started.error().message.c_str());
    return 1;
  }
  const std::vector<Instance> instances = std::move(started).value();
  auto stop_all = [&instances] {
    for (const auto& instance : instances) stop_instance(instance);
  };

  httplib::Server front;
  use_many_threads(front);
  route_round_robin(front, instances, options.setup.wait);
  const int port = options.port == 0 ? front.bind_to_any_port("127.0.0.1")
                                     : (front.bind_to_port("127.0.0.1", options.port) ? options.port : -1);
  if (port <= 0) {
    stop_all();
    std::fprintf(stderr, "counter_demo: cannot listen on 127.0.0.1:%d\n", options.port);
    return 1;
  }

  std::atomic<bool> listen_returned{false};
  std::jthread listener([&front, &listen_returned] {
    front.listen_after_bind();
    listen_returned = true;
  });
  // stop() before listen has started would be lost and join() would wait forever.
  while (!front.is_running() && !listen_returned) std::this_thread::sleep_for(1ms);
  if (listen_returned) {
    stop_all();
    std::fprintf(stderr, "counter_demo: the front stopped listening\n");
    return 1;
  }
  announce(port, options, instances);

  int received = 0;
  ::sigwait(&signals, &received);
  front.stop();
  listener.join();
  stop_all();
  std::printf("counter_demo: stopped (%s)\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  return 0;
}

}  // namespace locklab::scenarios
