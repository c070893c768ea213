// Protocol step points at the fault proxy (servers/resp_watch.h): the RESP
// reader and the pattern on their own, then the proxy parking a request of a
// real client against a real redis-server -- split across reads, pipelined,
// released (the reply comes after), dropped (the write never happens), behind
// a malformed stream (it passes) -- and redis-py's Lock, driven by a script of
// this test's own through redis-py's public API, whose release script parks
// and resumes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fixtures/proxy_fixture.h"
#include "servers/resp_watch.h"
#include "servers/tcp_proxy.h"
#include "support/conditions.h"
#include "workload/adapter_lock.h"

namespace locklab::testing {
namespace {

using namespace std::chrono_literals;
using harness::Direction;
using harness::ParkGroup;
using harness::RespCommand;
using harness::RespMatcher;
using harness::RespPattern;
using harness::RespReader;
using harness::TcpProxy;
using harness::wait_until;
using Clock = std::chrono::steady_clock;

// Built by append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
std::string resp(const std::vector<std::string>& words) {
  std::string out("*");
  out.append(std::to_string(words.size())).append("\r\n");
  for (const auto& word : words) out.append("$").append(std::to_string(word.size())).append("\r\n").append(word).append("\r\n");
  return out;
}

std::vector<RespCommand> read_all(const std::string& stream, std::size_t piece, RespReader& reader) {
  std::vector<RespCommand> out;
  for (std::size_t at = 0; at < stream.size(); at += piece) reader.feed(std::string_view(stream).substr(at, piece), out);
  return out;
}

RespPattern pattern(const std::string& text) {
  auto parsed = RespPattern::parse(text);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error().message;
  return parsed ? std::move(parsed).value() : RespPattern::parse("PING").value();
}

RespCommand command(std::vector<std::string> words) {
  RespCommand parsed;
  parsed.argc = words.size();
  parsed.words = std::move(words);
  return parsed;
}

// --- the reader ----------------------------------------------------------------

const std::string kStream = resp({"GET", "k"}) + "PING\r\n" + resp({"SET", "k", ""}) + "  del   k  \n";

TEST(RespReader, ReadsArraysAndInlineCommandsWithTheirOffsets) {
  RespReader reader;
  const auto commands = read_all(kStream, kStream.size(), reader);
  ASSERT_EQ(commands.size(), 4u);
  EXPECT_EQ(commands[0].words, (std::vector<std::string>{"GET", "k"}));
  EXPECT_EQ(commands[1].words, (std::vector<std::string>{"PING"}));
  EXPECT_EQ(commands[2].words, (std::vector<std::string>{"SET", "k", ""}));
  EXPECT_EQ(commands[3].words, (std::vector<std::string>{"del", "k"}));
  std::uint64_t at = 0;
  for (const auto& c : commands) {
    EXPECT_EQ(c.begin, at) << c.describe();
    EXPECT_GT(c.end, c.begin);
    at = c.end;
  }
  EXPECT_EQ(at, kStream.size());
  EXPECT_FALSE(reader.broken());
  EXPECT_EQ(reader.settled(), kStream.size());
}

// Split anywhere -- one byte at a time, or at every cut into two -- the same commands come out.
TEST(RespReader, CommandsSplitAcrossReadsComeOutTheSame) {
  RespReader whole;
  const auto expected = read_all(kStream, kStream.size(), whole);
  for (std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}}) {
    RespReader reader;
    const auto got = read_all(kStream, piece, reader);
    ASSERT_EQ(got.size(), expected.size()) << "pieces of " << piece;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].words, expected[i].words);
      EXPECT_EQ(got[i].begin, expected[i].begin);
      EXPECT_EQ(got[i].end, expected[i].end);
    }
  }
  for (std::size_t cut = 1; cut < kStream.size(); ++cut) {
    RespReader reader;
    std::vector<RespCommand> got;
    reader.feed(std::string_view(kStream).substr(0, cut), got);
    reader.feed(std::string_view(kStream).substr(cut), got);
    EXPECT_EQ(got.size(), expected.size()) << "cut at " << cut;
  }
}

TEST(RespReader, SettledStopsWhereAnIncompleteCommandBegins) {
  RespReader reader;
  std::vector<RespCommand> out;
  const std::string first = resp({"PING"});
  reader.feed(first + "*2\r\n$3\r\nDE", out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(reader.settled(), first.size()) << "the DEL's first byte: nothing of it may go before it is judged";
  reader.feed("L\r\n$1\r\nk\r\n", out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].name(), "DEL");
  EXPECT_EQ(reader.settled(), reader.fed());
}

TEST(RespReader, EmptyRequestsAreSkipped) {
  RespReader reader;
  std::vector<RespCommand> out;
  reader.feed("*0\r\n\r\n*-1\r\n   \r\n", out);
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(reader.broken()) << reader.why_broken();
}

TEST(RespReader, LongCommandsAreKeptOnlyAsFarAsMatchingNeeds) {
  RespReader reader;
  std::vector<std::string> words = {"EVAL", std::string(10'000, 'x')};
  for (int i = 0; i < 30; ++i) words.push_back(std::to_string(i));
  std::vector<RespCommand> out;
  reader.feed(resp(words), out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].argc, words.size());
  EXPECT_EQ(out[0].words.size(), RespCommand::kMaxWords);
  EXPECT_EQ(out[0].words[1].size(), RespCommand::kMaxWordBytes);
  EXPECT_EQ(out[0].describe(), "EVAL xxxxxxxxxxxxxxxxxxxxxxxx... 0 1 (+28 more)");
}

// Never trusted: each of these stops the reader with a reason, and it reads nothing after.
TEST(RespReader, MalformedStreamsStopTheReaderWithAReason) {
  const std::vector<std::string> malformed = {
      "*x\r\n",                          // not a length
      "*1\r\nGET\r\n",                   // not a bulk string
      "*1\r\n$-3\r\n",                   // a negative length
      "*1\r\n$3\r\nGETXY",               // no CRLF after the bulk
      "*1\n",                            // a header without '\r'
      "*99999999999\r\n",                // beyond INT_MAX
      std::string(70'000, 'a'),          // an inline line beyond 64 KiB
      "*1\r\n$" + std::string(40, '9'),  // a header line that never ends
  };
  for (const auto& bytes : malformed) {
    RespReader reader;
    std::vector<RespCommand> out;
    reader.feed(bytes, out);
    reader.feed(resp({"DEL", "k"}), out);
    EXPECT_TRUE(reader.broken()) << bytes.substr(0, 20);
    EXPECT_FALSE(reader.why_broken().empty());
    EXPECT_TRUE(out.empty()) << bytes.substr(0, 20) << ": nothing is read after a malformed byte";
    EXPECT_EQ(reader.settled(), reader.fed()) << "a broken stream holds nothing back";
    EXPECT_EQ(reader.fed(), bytes.size() + resp({"DEL", "k"}).size());
  }
}

// --- the pattern ---------------------------------------------------------------

TEST(RespPattern, ParsesTheGrammarAndRefusesTheRest) {
  for (const char* good : {"DEL", "del|UNLINK", "GET>DEL", "SETNX>EXPIRE|PEXPIRE", "EVALSHA|EVAL", "EVAL~del",
                           "EVALSHA~4b2f|EVAL~del>GET", "DEL~locklab:matrix", "A>B>C>D>E>F>G>H"})
    EXPECT_TRUE(RespPattern::parse(good)) << good;
  for (const char* bad : {"", "GET>", ">DEL", "GET>>DEL", "DEL|", "G ET", "1DEL", "DEL~", "DEL~a=b", "DEL~a b",
                          "DEL~~a", "A>B>C>D>E>F>G>H>I"}) {
    auto parsed = RespPattern::parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().kind, ErrorKind::usage);
    EXPECT_NE(parsed.error().message.find("bad RESP pattern '"), std::string::npos) << parsed.error().message;
  }
}

TEST(RespMatcher, ParksOnlyTheLastStepAfterTheEarlierOnesWereSeen) {
  const auto get_then_del = std::make_shared<const RespPattern>(pattern("GET>DEL|UNLINK"));
  RespMatcher matcher(get_then_del);
  EXPECT_FALSE(matcher.advance(command({"DEL", "k"}))) << "a DEL before any GET";
  EXPECT_FALSE(matcher.advance(command({"get", "k"})));
  EXPECT_FALSE(matcher.advance(command({"SET", "other", "1"}))) << "commands in between are allowed";
  EXPECT_TRUE(matcher.advance(command({"unlink", "k"})));
  EXPECT_FALSE(matcher.advance(command({"DEL", "k"}))) << "once per arming";
}

TEST(RespPattern, TheArgumentTestTellsTwoScriptsApart) {
  const RespPattern release = pattern("EVALSHA~e9f69f2b|EVAL~del");
  EXPECT_TRUE(release.step_matches(0, command({"EVAL", "return redis.call('DEL', KEYS[1])", "1", "k"})));
  EXPECT_FALSE(release.step_matches(0, command({"EVAL", "return redis.call('pexpire', KEYS[1], 10)", "1", "k"})));
  EXPECT_TRUE(release.step_matches(0, command({"evalsha", "E9F69F2B00aa", "1", "k"})));
  EXPECT_FALSE(release.step_matches(0, command({"EVALSHA", "0bad", "1", "k"})));
}

TEST(ParkGroup, TheFirstClaimParksAndGroupsShareTheirBudget) {
  auto budget = std::make_shared<std::atomic<int>>(1);
  ParkGroup a(budget), b(budget);
  EXPECT_TRUE(a.claim({1, "DEL k", Clock::now()}));
  EXPECT_FALSE(a.claim({0, "DEL k", Clock::now()})) << "the group parked once";
  EXPECT_TRUE(a.claimed());
  ASSERT_TRUE(a.arrival());
  EXPECT_EQ(a.arrival()->member, 1u);
  EXPECT_FALSE(b.claim({0, "DEL k", Clock::now()})) << "the budget went to the other group";
  EXPECT_FALSE(b.claimed());
  EXPECT_FALSE(b.arrival());
}

// --- the proxy against a real redis-server -------------------------------------

// A raw TCP client: the test decides where its requests split.
class RawClient {
 public:
  explicit RawClient(const redis::Endpoint& endpoint) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(endpoint.port));
    ::inet_pton(AF_INET, endpoint.host.c_str(), &address.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Everything received until `expected` bytes came, the peer closed, or the deadline.
  std::string receive(std::size_t expected, std::chrono::milliseconds within) {
    const auto deadline = Clock::now() + within;
    while (received_.size() < expected && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      received_.append(buffer, static_cast<std::size_t>(n));
    }
    return received_;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

class RespWatchProxy : public ProxiedRedisTest {
 protected:
  bool arrived(const std::shared_ptr<ParkGroup>& group) {
    return wait_until([&] { return group->arrival().has_value(); }, 5s);
  }
  std::uint64_t forwarded_requests() const { return proxy_->counters(Direction::client_to_server).forwarded; }
  bool exists(const std::string& key) { return run({"EXISTS", key}).integer() == 1; }
};

TEST_F(RespWatchProxy, ParkThenReleaseTheReplyArrivesAfter) {
  auto client = through_proxy();
  const auto group = proxy_->arm_watch(pattern("GET>DEL"));
  ASSERT_TRUE(client.command({"SET", "k", "v"}));
  ASSERT_TRUE(client.command({"DEL", "nothing"})) << "a DEL before any GET passes";
  auto got = client.command({"GET", "k"});
  ASSERT_TRUE(got) << "the GET passes";
  EXPECT_EQ(got->string(), "v");
  ASSERT_TRUE(client.send({"DEL", "k"}));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(group->arrival()->command, "DEL k");
  EXPECT_EQ(group->arrival()->member, 0u);
  EXPECT_TRUE(exists("k")) << "the DEL is parked: the key is still there";
  EXPECT_GT(proxy_->counters(Direction::client_to_server).buffered, 0u);

  proxy_->release_park();
  auto reply = client.read_until(Clock::now() + 5s);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->integer(), 1) << "the parked DEL reached Redis after the release";
  EXPECT_FALSE(exists("k"));
  ASSERT_TRUE(client.command({"GET", "k"}));
  ASSERT_TRUE(client.command({"DEL", "k"})) << "released = disarmed: the next GET>DEL passes";
}

// A request split across reads is judged (and held) whole: none of its bytes
// reach Redis before its last one came and it did not match.
TEST_F(RespWatchProxy, ACommandSplitAcrossReadsParksWhole) {
  ASSERT_TRUE(run({"SET", "k", "v"}).is_status("OK"));
  RawClient client(proxy_->endpoint());
  ASSERT_TRUE(client.connected());
  const auto group = proxy_->arm_watch(pattern("DEL"));
  const std::string ping = resp({"PING"}), del = resp({"DEL", "k"});
  ASSERT_TRUE(client.send(ping + del.substr(0, 11)));
  EXPECT_EQ(client.receive(7, 5s), "+PONG\r\n") << "the whole PING went on";
  ASSERT_TRUE(wait_until([&] { return proxy_->counters(Direction::client_to_server).received == ping.size() + 11; }, 5s));
  EXPECT_EQ(forwarded_requests(), ping.size()) << "the DEL's first bytes wait for the rest";
  EXPECT_FALSE(group->arrival());

  ASSERT_TRUE(client.send(del.substr(11)));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(group->arrival()->command, "DEL k");
  EXPECT_EQ(forwarded_requests(), ping.size()) << "parked: not one byte of the DEL went on";
  EXPECT_TRUE(exists("k"));

  proxy_->release_park();
  EXPECT_EQ(client.receive(7 + 4, 5s), "+PONG\r\n:1\r\n");
  EXPECT_FALSE(exists("k"));
}

// Several requests in one write: those before the match are answered, the
// match and everything after it wait, then go on in order.
TEST_F(RespWatchProxy, PipelinedCommandsBeforeTheMatchGoOnTheRestWait) {
  RawClient client(proxy_->endpoint());
  ASSERT_TRUE(client.connected());
  const auto group = proxy_->arm_watch(pattern("GET>DEL"));
  ASSERT_TRUE(client.send(resp({"SET", "a", "1"}) + resp({"GET", "a"}) + resp({"DEL", "a"}) + resp({"SET", "b", "2"})));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(client.receive(5 + 7, 5s), "+OK\r\n$1\r\n1\r\n") << "the SET and the GET were answered";
  EXPECT_TRUE(exists("a")) << "the DEL waits";
  EXPECT_FALSE(exists("b")) << "and so does what came after it";

  proxy_->release_park();
  EXPECT_EQ(client.receive(5 + 7 + 4 + 5, 5s), "+OK\r\n$1\r\n1\r\n:1\r\n+OK\r\n") << "in order";
  EXPECT_FALSE(exists("a"));
  EXPECT_TRUE(exists("b"));
}

TEST_F(RespWatchProxy, ParkThenDropTheKeyIsNeverWritten) {
  auto client = through_proxy(2s);
  const auto group = proxy_->arm_watch(pattern("SETNX>EXPIRE"));
  ASSERT_EQ(client.command({"SETNX", "lock", "me"})->integer(), 1);
  ASSERT_TRUE(client.send({"EXPIRE", "lock", "100"}));
  ASSERT_TRUE(client.send({"SET", "after", "1"}));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(group->arrival()->command, "EXPIRE lock 100");

  proxy_->drop_park();
  auto reply = client.read_until(Clock::now() + 2s);
  ASSERT_FALSE(reply) << "the connection was reset, no reply";
  EXPECT_NE(reply.error().kind, ErrorKind::timeout) << reply.error().message;
  EXPECT_EQ(run({"TTL", "lock"}).integer(), -1) << "the EXPIRE never reached Redis: a key without a TTL";
  EXPECT_FALSE(exists("after")) << "nor did what followed it";
  EXPECT_EQ(proxy_->counters(Direction::client_to_server).buffered, 0u);
  EXPECT_TRUE(wait_until([&] { return proxy_->open_connections() == 0; }, 5s));

  auto next = through_proxy();
  ASSERT_TRUE(next.command({"SETNX", "x", "1"}));
  ASSERT_TRUE(next.command({"EXPIRE", "x", "100"})) << "dropped = disarmed";
}

// A stream the reader cannot read passes untouched (Redis answers it as it
// would), and the watch goes on for every other connection.
TEST_F(RespWatchProxy, AMalformedStreamPassesAndTheWatchGoesOn) {
  const auto group = proxy_->arm_watch(pattern("DEL"));
  {
    RawClient garbage(proxy_->endpoint());
    ASSERT_TRUE(garbage.connected());
    ASSERT_TRUE(garbage.send("*abc\r\n" + resp({"DEL", "k"})));
    const std::string answer = garbage.receive(1000, 2s);
    EXPECT_NE(answer.find("-ERR Protocol error"), std::string::npos) << answer;
  }
  {
    RawClient garbage(proxy_->endpoint());
    ASSERT_TRUE(garbage.send(std::string(70'000, 'a')));
    const std::string answer = garbage.receive(1000, 2s);
    EXPECT_NE(answer.find("-ERR Protocol error"), std::string::npos) << answer.substr(0, 80);
  }
  EXPECT_FALSE(group->arrival()) << "nothing parked on a malformed stream";

  auto client = through_proxy();
  ASSERT_TRUE(client.send({"DEL", "k"}));
  ASSERT_TRUE(arrived(group)) << "a well-formed connection is still watched";
  proxy_->release_park();
  ASSERT_TRUE(client.read_until(Clock::now() + 5s));
}

// One client's links to two servers, armed as one group (a multi-node lock):
// the first match parks, and from then the other link holds everything too,
// its own match and what is not one.
TEST_F(RespWatchProxy, AGroupParksOnceAndItsOtherLinksHoldFromThen) {
  auto second = harness::RedisServer::start();
  ASSERT_TRUE(second) << second.error().message;
  auto other_proxy = TcpProxy::start((*second)->endpoint());
  ASSERT_TRUE(other_proxy) << other_proxy.error().message;
  auto direct = redis::Connection::connect((*second)->connection_options());
  ASSERT_TRUE(direct);
  ASSERT_TRUE(run({"SET", "k", "1"}).is_status("OK"));
  ASSERT_TRUE(direct->command({"SET", "k", "1"}));

  const auto group = proxy_->arm_watch(pattern("DEL"));
  EXPECT_EQ((*other_proxy)->arm_watch(pattern("DEL"), group, 1), group);
  auto first = through_proxy();
  redis::ConnectionOptions options = (*second)->connection_options();
  options.endpoint = (*other_proxy)->endpoint();
  auto to_second = redis::Connection::connect(options);
  ASSERT_TRUE(to_second);
  ASSERT_TRUE(to_second->command({"PING"})) << "nothing parked yet: the other link passes";

  ASSERT_TRUE(first.send({"DEL", "k"}));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(group->arrival()->member, 0u);
  ASSERT_TRUE(to_second->send({"SET", "other", "1"}));
  ASSERT_TRUE(to_second->send({"DEL", "k"}));
  const std::size_t ping = resp({"PING"}).size(), later = resp({"SET", "other", "1"}).size() + resp({"DEL", "k"}).size();
  ASSERT_TRUE(wait_until([&] { return (*other_proxy)->counters(Direction::client_to_server).received == ping + later; }, 5s));
  EXPECT_EQ((*other_proxy)->counters(Direction::client_to_server).forwarded, ping);
  EXPECT_EQ((*other_proxy)->counters(Direction::client_to_server).buffered, later);
  EXPECT_EQ(direct->command({"EXISTS", "other"})->integer(), 0) << "the other link holds what is not a match too";
  EXPECT_EQ(direct->command({"EXISTS", "k"})->integer(), 1) << "and its own DEL";
  EXPECT_TRUE(exists("k"));

  proxy_->release_park();
  (*other_proxy)->release_park();
  ASSERT_TRUE(first.read_until(Clock::now() + 5s));
  ASSERT_TRUE(to_second->read_until(Clock::now() + 5s));
  ASSERT_TRUE(to_second->read_until(Clock::now() + 5s));
  EXPECT_FALSE(exists("k"));
  EXPECT_EQ(direct->command({"EXISTS", "k"})->integer(), 0);
  EXPECT_EQ(direct->command({"EXISTS", "other"})->integer(), 1);
}

// A crash on a multi-node client (review #3): the park was claimed on the first
// link; the other proxy's thread had no reason to look since (nothing came on
// its link), so its link has no fence yet when the crash drops the park. What
// the dead client had written there -- still in the socket, read after the
// drop -- must not reach the second server: the drop fences and resets every
// link of the claimed group, not only those that had fenced themselves.
TEST_F(RespWatchProxy, ADroppedParkResetsTheGroupsOtherLinksThatHadNoFenceYet) {
  auto second = harness::RedisServer::start();
  ASSERT_TRUE(second) << second.error().message;
  auto other_proxy = TcpProxy::start((*second)->endpoint());
  ASSERT_TRUE(other_proxy) << other_proxy.error().message;
  auto direct = redis::Connection::connect((*second)->connection_options());
  ASSERT_TRUE(direct);

  const auto group = proxy_->arm_watch(pattern("DEL"));
  (*other_proxy)->arm_watch(pattern("DEL"), group, 1);
  auto first = through_proxy();
  RawClient to_second((*other_proxy)->endpoint());
  ASSERT_TRUE(to_second.connected());
  ASSERT_TRUE(to_second.send(resp({"PING"})));
  EXPECT_EQ(to_second.receive(7, 5s), "+PONG\r\n") << "nothing parked yet: the other link passes";

  ASSERT_TRUE(first.send({"DEL", "k"}));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(group->arrival()->member, 0u);
  // The client "dies" here: both links' parks are dropped, the first one first (as drop() does).
  proxy_->drop_park();
  (*other_proxy)->drop_park();
  // What it had written to the second server before dying, read by that proxy only now.
  (void)to_second.send(resp({"SET", "written-before-the-crash", "1"}));
  EXPECT_TRUE(wait_until([&] { return (*other_proxy)->open_connections() == 0; }, 5s))
      << "the group's other link was not reset";
  EXPECT_EQ(direct->command({"EXISTS", "written-before-the-crash"})->integer(), 0)
      << "a request of the dead client reached the second server after its park was dropped";
  EXPECT_EQ(to_second.receive(8, 1s), "+PONG\r\n") << "no reply either: the link is gone";
}

// --- redis-py, behind the proxy ------------------------------------------------

bool python_redis_installed() { return std::system("/usr/bin/python3 -c 'import redis' >/dev/null 2>&1") == 0; }

// The test's own client: redis-py's Lock through its public API only, one
// step per line on stdin, one line of outcome on stdout.
const char* const kRedisPyScript = R"py(
import sys, redis
host, port, key = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lock = redis.Redis(host=host, port=port).lock(key, timeout=30)
print("acquired" if lock.acquire(blocking=False) else "busy", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
)py";

TEST_F(RespWatchProxy, RedisPyLocksReleaseScriptParksAndResumes) {
  if (!python_redis_installed()) GTEST_SKIP() << "python3-redis is not installed (scripts/setup installs it)";
  const auto group = proxy_->arm_watch(pattern("EVALSHA|EVAL"));
  auto spawned = harness::AdapterProcess::spawn(
      {"/usr/bin/python3", "-c", kRedisPyScript, proxy_->endpoint().host, std::to_string(proxy_->endpoint().port),
       "locklab:py"},
      "redis-py script", 1s);
  ASSERT_TRUE(spawned) << spawned.error().message;
  harness::AdapterProcess& script = *spawned;
  auto line = script.read_line(10s);
  ASSERT_TRUE(line) << line.error().message;
  ASSERT_EQ(*line, "acquired");
  EXPECT_FALSE(group->arrival()) << "redis-py's acquire is a SET, not a script";
  EXPECT_TRUE(exists("locklab:py"));

  ASSERT_TRUE(script.send_line("release\n"));
  ASSERT_TRUE(arrived(group));
  EXPECT_EQ(group->arrival()->command.rfind("EVALSHA ", 0), 0u) << group->arrival()->command;
  EXPECT_NE(group->arrival()->command.find("locklab:py"), std::string::npos) << group->arrival()->command;
  EXPECT_TRUE(exists("locklab:py")) << "the release script is parked";
  auto early = script.read_line(200ms);
  EXPECT_FALSE(early) << "release() has not returned: " << (early ? *early : "");

  proxy_->release_park();
  line = script.read_line(10s);
  ASSERT_TRUE(line) << line.error().message;
  EXPECT_EQ(*line, "released");
  EXPECT_FALSE(exists("locklab:py"));
}

}  // namespace
}  // namespace locklab::testing
