#include "redis/cluster_routing.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace locklab::redis {
namespace {

std::string upper_case(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  return upper;
}

// Commands that carry no key: routed to the node used last.
bool keyless(std::string_view command) {
  static constexpr std::array<std::string_view, 14> kKeyless{
      "PING", "WAIT", "PUBLISH", "SUBSCRIBE", "UNSUBSCRIBE", "SCRIPT", "INFO",
      "CLUSTER", "FLUSHALL", "FLUSHDB", "DBSIZE", "TIME", "ECHO", "ASKING"};
  return std::find(kKeyless.begin(), kKeyless.end(), upper_case(command)) != kKeyless.end();
}

// Commands whose keys follow a numkeys argument (args[2]).
bool takes_numkeys(std::string_view command) {
  static constexpr std::array<std::string_view, 6> kScripts{"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"};
  return std::find(kScripts.begin(), kScripts.end(), upper_case(command)) != kScripts.end();
}

std::optional<int> to_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Error too_many_redirects(const Args& args, int max) {
  return {ErrorKind::reply, "cluster: " + args.front() + " redirected more than " + std::to_string(max) + " times"};
}

}  // namespace

std::uint16_t crc16_xmodem(std::string_view data) {
  // Polynomial 0x1021, initial value 0, no reflection (the spec's reference code).
  std::uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc = static_cast<std::uint16_t>(crc ^ (byte << 8));
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

std::string_view hash_tag(std::string_view key) {
  const auto open = key.find('{');
  if (open == std::string_view::npos) return key;
  const auto close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;  // no '}' or "{}": the whole key
  return key.substr(open + 1, close - open - 1);
}

int key_slot(std::string_view key) { return crc16_xmodem(hash_tag(key)) % kClusterSlots; }

std::string same_slot_key(const std::string& key, std::string_view suffix) {
  if (hash_tag(key).size() != key.size()) return key + std::string(suffix);
  return "{" + key + "}" + std::string(suffix);
}

std::optional<std::string_view> routing_key(const Args& args) {
  if (args.size() < 2 || keyless(args.front())) return std::nullopt;
  if (takes_numkeys(args.front())) {
    if (args.size() < 4 || args[2] == "0") return std::nullopt;
    return args[3];
  }
  return args[1];
}

Result<std::vector<SlotRange>> read_slot_map(Connection& connection) {
  auto reply = connection.command({"CLUSTER", "SLOTS"});
  if (!reply) return reply.error();
  if (!reply->is_array()) return reply_error(connection, *reply, "CLUSTER SLOTS");
  std::vector<SlotRange> map;
  for (std::size_t i = 0; i < reply->size(); ++i) {
    // [first, last, [ip, port, id, ...] (master), [replica]...]
    const Reply range = reply->element(i);
    if (range.size() < 3 || range.element(2).size() < 2)
      return Error{ErrorKind::protocol, "CLUSTER SLOTS: malformed range " + range.describe()};
    const Reply master = range.element(2);
    Endpoint endpoint{std::string(master.element(0).text()), static_cast<int>(master.element(1).integer())};
    if (endpoint.host.empty()) endpoint.host = connection.options().endpoint.host;  // "" = the node we asked
    map.push_back({static_cast<int>(range.element(0).integer()), static_cast<int>(range.element(1).integer()),
                   std::move(endpoint)});
  }
  return map;
}

std::optional<Redirect> parse_redirect(std::string_view text) {
  Redirect redirect;
  if (text.starts_with("MOVED ")) {
    text.remove_prefix(6);
  } else if (text.starts_with("ASK ")) {
    redirect.ask = true;
    text.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const auto space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot = to_int(text.substr(0, space));
  const auto to = Endpoint::parse(text.substr(space + 1));
  if (!slot || !to || *slot < 0 || *slot >= kClusterSlots) return std::nullopt;
  redirect.slot = *slot;
  redirect.to = *to;
  return redirect;
}

ClusterConnection::ClusterConnection(ConnectionOptions seed, int max_redirects)
    : seed_(std::move(seed)), max_redirects_(max_redirects), last_(seed_.endpoint) {}

Result<Connection*> ClusterConnection::node(const Endpoint& endpoint) {
  const auto name = endpoint.to_string();
  if (auto live = nodes_.find(name); live != nodes_.end()) {
    if (!live->second.broken()) return &live->second;
    nodes_.erase(live);
  }
  auto options = seed_;
  options.endpoint = endpoint;
  auto fresh = Connection::connect(options);
  if (!fresh) return fresh.error();
  return &nodes_.insert_or_assign(name, std::move(fresh).value()).first->second;
}

Status ClusterConnection::refresh_slot_map() {
  // Ask the node used last first (a MOVED names it), then the seed, then every
  // master we knew (the seed may be the node that died).
  std::vector<Endpoint> candidates{last_, seed_.endpoint};
  for (const auto& range : map_) candidates.push_back(range.master);
  std::optional<Error> last_error;
  for (const auto& endpoint : candidates) {
    auto connection = node(endpoint);
    if (!connection) {
      last_error = connection.error();
      continue;
    }
    auto map = read_slot_map(**connection);
    if (!map) {
      last_error = map.error();
      continue;
    }
    map_ = std::move(map).value();
    map_stale_ = false;
    return Done{};
  }
  return *last_error;
}

std::optional<Endpoint> ClusterConnection::owner_of(int slot) const {
  for (const auto& range : map_)
    if (range.first <= slot && slot <= range.last) return range.master;
  return std::nullopt;
}

Result<Connection*> ClusterConnection::master_for_slot(int slot) {
  if (map_.empty() || map_stale_) {
    if (auto loaded = refresh_slot_map(); !loaded) return loaded.error();
  }
  const auto owner = owner_of(slot);
  if (!owner) return Error{ErrorKind::reply, "cluster: no master serves slot " + std::to_string(slot)};
  last_ = *owner;
  return node(*owner);
}

Result<Connection*> ClusterConnection::current() { return node(last_); }

Result<Reply> ClusterConnection::command(const Args& args) {
  const auto key = routing_key(args);
  std::optional<Endpoint> ask_target;
  for (int attempt = 0; attempt <= max_redirects_; ++attempt) {
    Result<Connection*> connection = Error{ErrorKind::usage, "unreachable"};
    if (ask_target) {
      connection = node(*ask_target);
      if (connection) {
        // ASKING holds for the next command on this connection only.
        auto asking = (*connection)->command({"ASKING"});
        if (!asking) return asking.error();
      }
    } else {
      connection = key ? master_for_slot(key_slot(*key)) : current();
    }
    if (!connection) {
      map_stale_ = true;  // the owner may have failed over: ask the cluster again next time
      return connection.error();
    }
    auto reply = (*connection)->command(args);
    if (!reply) map_stale_ = true;
    if (!reply || !reply->is_error()) return reply;
    const auto redirect = parse_redirect(reply->text());
    if (!redirect) return reply;
    ++redirects_;
    last_ = redirect->to;
    if (redirect->ask) {
      ask_target = redirect->to;
      continue;
    }
    ask_target.reset();
    if (auto refreshed = refresh_slot_map(); !refreshed) return refreshed.error();
  }
  return too_many_redirects(args, max_redirects_);
}

Result<Reply> ClusterConnection::run(const Script& script, const Args& keys, const Args& args) {
  Args eval{"EVAL", script.source(), std::to_string(keys.size())};
  eval.insert(eval.end(), keys.begin(), keys.end());
  eval.insert(eval.end(), args.begin(), args.end());
  return command(eval);
}

}  // namespace locklab::redis
