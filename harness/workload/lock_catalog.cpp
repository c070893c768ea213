#include "workload/lock_catalog.h"

#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "servers/resp_watch.h"
#include "support/text.h"
#include "workload/adapter_lock.h"

#ifndef LOCKLAB_PEERS_DIR
#error "LOCKLAB_PEERS_DIR must name the source tree's harness/adapters (harness/workload/CMakeLists.txt)"
#endif

namespace locklab::harness {
namespace {

using nlohmann::json;

constexpr std::string_view kKeyPlaceholder = "{key}";

// The registry's capability words, each with its field.
struct Word {
  const char* name;
  bool Capabilities::*field;
};
constexpr Word kWords[] = {
    {"expires", &Capabilities::expires},
    {"owner_checked_release", &Capabilities::owner_checked_release},
    {"reentrant", &Capabilities::reentrant},
    {"fencing", &Capabilities::fencing},
    {"multi_node", &Capabilities::multi_node},
    {"notifies_waiters", &Capabilities::notifies_waiters},
    {"honours_wait_replicas", &Capabilities::honours_wait_replicas},
    {"auto_extends", &Capabilities::auto_extends},
};

// What an adapter can: a Redis lock across processes, plus the words it claims.
Capabilities capabilities_of(const std::set<std::string>& words) {
  Capabilities can;
  for (const auto& word : kWords) can.*word.field = words.count(word.name) > 0;
  return can;
}

// A single-node lock is given the first server only (a fleet's multi-node
// member needs them all, the others must not see more than theirs).
LockConfig servers_for(LockConfig config, const Capabilities& can) {
  if (!can.multi_node && config.servers.size() > 1) config.servers.resize(1);
  return config;
}

LockDescription adapter_description(std::string name, std::vector<std::string> argv, std::string label) {
  LockDescription lock;
  lock.name = std::move(name);
  lock.number = "ext";
  lock.adapter = std::move(argv);
  lock.label = std::move(label);
  lock.summary = "an adapter: " + lock.label + " (docs/adapters.md)";
  lock.capabilities = capabilities_of({});
  return lock;
}

// The make of an adapter: AdapterLock::create, told the client number.
void give_make(LockDescription& lock) {
  lock.make = [argv = lock.adapter, label = lock.label, can = lock.capabilities,
               tokens = lock.token_at_resource](const LockConfig& config, int client) -> LockResult {
    auto made = AdapterLock::create(argv, servers_for(config, can), client, AdapterTimeouts{}, label);
    if (!made) return made.error();
    if (tokens) made.value()->carry_tokens();
    return std::unique_ptr<DistributedLock>(std::move(made).value());
  };
}

// An adapter's argv from the catalog: relative paths are the peers folder's.
std::vector<std::string> resolved_argv(const json& words, const std::string& dir) {
  std::vector<std::string> argv;
  for (const auto& word : words) {
    std::string text = word.get<std::string>();
    if (text.find('/') != std::string::npos && text.front() != '/') text = dir + "/" + text;
    argv.push_back(std::move(text));
  }
  return argv;
}

// A step point the catalog names, kept for the process's lifetime:
// Capabilities hold step points as string_views (a generation's are literals).
std::string_view interned(const std::string& text) {
  static std::set<std::string> texts;  // node-based: a view into an element stays valid
  return *texts.insert(text).first;
}

// release_window and acquire_gap: "" or a protocol step point (resp:PATTERN,
// with the spec's own keys after it, e.g. ":when=holder"); an Error otherwise.
Status read_step_points(const json& entry, const std::string& where, Capabilities& can) {
  for (const auto& [field, point] : {std::pair{"release_window", &Capabilities::release_window},
                                     std::pair{"acquire_gap", &Capabilities::acquire_gap}}) {
    const json value = entry.value(field, json(""));
    if (!value.is_string()) return Error{ErrorKind::usage, where + ": " + field + " must be a string"};
    const std::string text = value.get<std::string>();
    if (!text.empty() && !text.starts_with("resp:"))
      return Error{ErrorKind::usage, where + ": " + field + " must be empty or a protocol step point resp:PATTERN"};
    can.*point = interned(text);
  }
  return Done{};
}

}  // namespace

bool label_word(std::string_view label) {
  return !label.empty() && label.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+") ==
                               std::string_view::npos;
}

namespace {

std::set<std::string> all_words() {
  std::set<std::string> words;
  for (const auto& word : kWords) words.insert(word.name);
  return words;
}

// The capability words an entry says are true; an Error for a word the registry does not have.
Result<std::set<std::string>> claimed_words(const json& entry, const std::string& where) {
  const json capabilities = entry.value("capabilities", json::object());
  if (!capabilities.is_object()) return Error{ErrorKind::usage, where + ": capabilities must be an object of words"};
  std::set<std::string> claimed;
  for (const auto& [word, value] : capabilities.items()) {
    const bool known = std::any_of(std::begin(kWords), std::end(kWords), [&](const Word& w) { return word == w.name; });
    if (!known || !value.is_boolean())
      return Error{ErrorKind::usage, where + ": capability '" + word + "' is not one of " +
                                         words_text(all_words()) + " as true/false"};
    if (value.get<bool>()) claimed.insert(word);
  }
  return claimed;
}

// The entry's name and adapter command, or why they are missing.
Status check_name_and_command(const json& entry, const std::string& where) {
  if (!entry.is_object() || !entry.value("name", json()).is_string() || !label_word(entry["name"].get<std::string>()))
    return Error{ErrorKind::usage, where + ": no name (letters, digits, '.', '_', '-', '+')"};
  const json argv = entry.value("adapter", json());
  if (!argv.is_array() || argv.empty()) return Error{ErrorKind::usage, where + ": no adapter command"};
  for (const auto& word : argv)
    if (!word.is_string() || word.get<std::string>().empty())
      return Error{ErrorKind::usage, where + ": the adapter command must be non-empty strings"};
  return Done{};
}

// A variant row's "variant_of" (the base row's name) and "variant_reason" (why the departure is
// kept), both or neither; "main" (a boolean, default: true unless a variant).
Status read_variant(const json& entry, const std::string& where, LockDescription& lock) {
  const json of = entry.value("variant_of", json("")), reason = entry.value("variant_reason", json(""));
  if (!of.is_string() || !reason.is_string() || of.get<std::string>().empty() != reason.get<std::string>().empty())
    return Error{ErrorKind::usage, where + ": variant_of and variant_reason go together, as strings"};
  lock.variant_of = of.get<std::string>();
  lock.variant_reason = reason.get<std::string>();
  const json main = entry.value("main", json(lock.variant_of.empty()));
  if (!main.is_boolean()) return Error{ErrorKind::usage, where + ": main must be true or false"};
  lock.main_row = main.get<bool>();
  return Done{};
}

// "ttl_resolution_ms" (default 1): a library whose lease takes coarser units (python-redis-lock's
// whole seconds) runs the matrix with the lease it really gets, as a generation's does
// (sweeps/matrix.cpp, cell_workload); "ttl_resolution_reason" says why, and must.
Status read_ttl_resolution(const json& entry, const std::string& where, Capabilities& can) {
  const json ms = entry.value("ttl_resolution_ms", json(1)), reason = entry.value("ttl_resolution_reason", json(""));
  if (!ms.is_number_integer() || ms.get<long long>() < 1 || ms.get<long long>() > 60'000)
    return Error{ErrorKind::usage, where + ": ttl_resolution_ms must be a whole number of ms from 1 to 60000"};
  if (!reason.is_string() || (ms.get<int>() > 1 && reason.get<std::string>().empty()))
    return Error{ErrorKind::usage, where + ": a ttl_resolution_ms above 1 needs its ttl_resolution_reason (a string)"};
  can.ttl_resolution_ms = ms.get<int>();
  return Done{};
}

// "resend_ms" (default 0): how long a command that a connection reset caught takes, at the
// library's defaults, to come back to its caller (Redisson: a 3 s timeout, then a retry delay;
// python-redis-lock: redis-py sends its BLPOP again, whole). Only a lock that renews its own lease
// may say it: the matrix lengthens only such a lock's parked holder by it (a lapsing lease must
// outlast the patience). "resend_reason" says where the library sets it, and must.
Status read_resend(const json& entry, const std::string& where, LockDescription& lock) {
  const json ms = entry.value("resend_ms", json(0)), reason = entry.value("resend_reason", json(""));
  if (!ms.is_number_integer() || ms.get<long long>() < 0 || ms.get<long long>() > 60'000)
    return Error{ErrorKind::usage, where + ": resend_ms must be a whole number of ms from 0 to 60000"};
  if (!reason.is_string()) return Error{ErrorKind::usage, where + ": resend_reason must be a string"};
  if (ms.get<int>() > 0 && reason.get<std::string>().empty())
    return Error{ErrorKind::usage, where + ": a resend_ms above 0 needs its resend_reason (a string)"};
  if (ms.get<int>() > 0 && !lock.capabilities.auto_extends)
    return Error{ErrorKind::usage, where + ": resend_ms is for a lock that claims auto_extends (only a lock that "
                                           "renews its own lease keeps a parked holder longer)"};
  lock.resend_ms = ms.get<int>();
  return Done{};
}

// "catch_waiters" (default {}): {COLUMN: PATTERN}, the matrix columns whose
// fault catches every waiter's next request that matches PATTERN (servers/resp_watch.h), for a
// row whose class otherwise hung on whether a waiter's request was on its way as the server
// went (failover, node-restart), or on whether two contenders' first round split the live nodes
// (node-minority: the fault holds each one's request until the other's vote is there);
// "catch_waiters_reason" says why, and must.
Status read_catch_waiters(const json& entry, const std::string& where, LockDescription& lock) {
  const json columns = entry.value("catch_waiters", json::object()), reason = entry.value("catch_waiters_reason", json(""));
  if (!columns.is_object() || !reason.is_string())
    return Error{ErrorKind::usage, where + ": catch_waiters must be an object {COLUMN: PATTERN} and catch_waiters_reason a string"};
  // Which columns may catch is the matrix's to check (sweeps/matrix_expectations, check_catalog_columns).
  for (const auto& [column, pattern] : columns.items()) {
    if (!pattern.is_string()) return Error{ErrorKind::usage, where + ": catch_waiters." + column + " must be a string"};
    if (auto parsed = RespPattern::parse(pattern.get<std::string>()); !parsed)
      return Error{ErrorKind::usage, where + ": catch_waiters." + column + ": " + parsed.error().message};
    if (pattern.get<std::string>().find(':') != std::string::npos)
      return Error{ErrorKind::usage, where + ": catch_waiters." + column +
                                         ": a pattern cannot hold ':' (the fault grammar's separator)"};
    lock.catch_waiters[column] = pattern.get<std::string>();
  }
  if (!lock.catch_waiters.empty() && reason.get<std::string>().empty())
    return Error{ErrorKind::usage, where + ": catch_waiters needs its catch_waiters_reason (a string)"};
  return Done{};
}

// "park_holder" (default {}): {COLUMN: {"warm_up": N, "after_read": BOOL}},
// the matrix columns whose fault parks the first holder after N acquisitions
// (warm-up=N) and after its accepted read (park=read); "park_holder_reason"
// says why, and must. Which columns may is the matrix's to check
// (sweeps/matrix_columns.h, park_holder_problem).
Status read_park_holder(const json& entry, const std::string& where, LockDescription& lock) {
  constexpr int kMostWarmUp = 1000;  // the fault's own bound (nemesis/node_faults.cpp, holder_park_param)
  const json columns = entry.value("park_holder", json::object()), reason = entry.value("park_holder_reason", json(""));
  if (!columns.is_object() || !reason.is_string())
    return Error{ErrorKind::usage, where + ": park_holder must be an object {COLUMN: {warm_up, after_read}} and "
                                           "park_holder_reason a string"};
  for (const auto& [column, plan] : columns.items()) {
    const std::string at = where + ": park_holder." + column;
    if (!plan.is_object()) return Error{ErrorKind::usage, at + " must be an object {warm_up, after_read}"};
    for (const auto& [field, value] : plan.items())
      if (field != "warm_up" && field != "after_read")
        return Error{ErrorKind::usage, at + ": no field '" + field + "' (warm_up, after_read)"};
    const json warm = plan.value("warm_up", json(0)), after_read = plan.value("after_read", json(false));
    if (!warm.is_number_integer() || warm.get<std::int64_t>() < 0 || warm.get<std::int64_t>() > kMostWarmUp)
      return Error{ErrorKind::usage, at + ".warm_up must be a whole number of acquisitions, 0 to " + std::to_string(kMostWarmUp)};
    if (!after_read.is_boolean()) return Error{ErrorKind::usage, at + ".after_read must be true or false"};
    lock.park_holder[column] = {warm.get<int>(), after_read.get<bool>()};
  }
  if (!lock.park_holder.empty() && reason.get<std::string>().empty())
    return Error{ErrorKind::usage, where + ": park_holder needs its park_holder_reason (a string)"};
  return Done{};
}

// One "peers" entry, or why it is not one. Only the shipped catalog writes "expected".
Result<LockDescription> catalog_entry(const json& entry, const std::string& dir, const std::string& where, bool shipped) {
  if (auto checked = check_name_and_command(entry, where); !checked) return checked.error();
  if (!shipped && entry.contains("expected"))
    return Error{ErrorKind::usage, where + ": \"expected\" is the shipped rows' field: the classes you expect of your "
                                           "lock go in --expect FILE (docs/adapters.md), checked against your rows' cells"};
  const std::string name = std::string(kAdapterPrefix) + entry["name"].get<std::string>();
  LockDescription lock = adapter_description(name, resolved_argv(entry["adapter"], dir), name);
  lock.library = entry.value("library", entry["name"].get<std::string>());
  lock.language = entry.value("language", "");
  const json key = entry.value("key", json(""));
  if (!key.is_string() || (!key.get<std::string>().empty() && key.get<std::string>().find(kKeyPlaceholder) == std::string::npos))
    return Error{ErrorKind::usage, where + ": its key must be a string containing " + std::string(kKeyPlaceholder)};
  lock.key_pattern = key.get<std::string>();
  lock.clock_shim_unreachable = entry.value("clock_shim_unreachable", "");
  const json failover = entry.value("failover_topology", json(""));
  if (!failover.is_string() || (failover != "" && failover != "cluster"))
    return Error{ErrorKind::usage, where + ": failover_topology must be \"\" or \"cluster\""};
  lock.failover_topology = failover.get<std::string>();
  lock.summary = lock.library + " (" + lock.language + "), through its adapter";
  auto claimed = claimed_words(entry, where);
  if (!claimed) return claimed.error();
  lock.claimed = std::move(claimed).value();
  lock.capabilities = capabilities_of(lock.claimed);
  if (auto points = read_step_points(entry, where, lock.capabilities); !points) return points.error();
  if (auto resolution = read_ttl_resolution(entry, where, lock.capabilities); !resolution) return resolution.error();
  if (auto variant = read_variant(entry, where, lock); !variant) return variant.error();
  if (auto resend = read_resend(entry, where, lock); !resend) return resend.error();
  if (auto caught = read_catch_waiters(entry, where, lock); !caught) return caught.error();
  if (auto park = read_park_holder(entry, where, lock); !park) return park.error();
  const json tokens = entry.value("token_at_resource", json(false));
  if (!tokens.is_boolean() || (tokens.get<bool>() && !lock.claimed.count("fencing")))
    return Error{ErrorKind::usage, where + ": token_at_resource must be true or false, and true only with fencing"};
  lock.token_at_resource = tokens.get<bool>();
  auto cells = read_catalog_cells(entry, where);
  if (!cells) return cells.error();
  lock.expected = std::move(cells).value();
  lock.from_catalog = true;
  give_make(lock);
  return lock;
}

// Every entry of the catalog at `path`, or the first problem: a file that is
// not JSON, has no "peers" array, an entry of the wrong shape, a name twice.
Result<std::vector<LockDescription>> catalog_entries(const std::string& path, const std::string& dir, bool shipped) {
  std::ifstream in(path);
  if (!in) return Error{ErrorKind::usage, "cannot read " + path};
  const json document = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object() || !document.value("peers", json()).is_array())
    return Error{ErrorKind::usage, path + " is not a catalog of adapters (no \"peers\" array; docs/adapters.md)"};
  std::vector<LockDescription> entries;
  for (std::size_t i = 0; i < document["peers"].size(); ++i) {
    const std::string where = path + ": peer " + std::to_string(i + 1);
    Result<LockDescription> entry = Error{ErrorKind::usage, where};
    try {  // a field of the wrong type ("library": 3) throws in value()
      entry = catalog_entry(document["peers"][i], dir, where, shipped);
    } catch (const json::exception& e) {
      return Error{ErrorKind::usage, where + ": " + e.what()};
    }
    if (!entry) return entry.error();
    for (const auto& earlier : entries)
      if (earlier.name == entry->name) return Error{ErrorKind::usage, where + ": " + entry->name + " is given twice"};
    entries.push_back(std::move(entry).value());
  }
  for (auto& entry : entries) {
    if (entry.variant_of.empty()) continue;
    const auto base = std::string(kAdapterPrefix) + entry.variant_of;
    const auto found = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.name == base; });
    if (found == entries.end())
      return Error{ErrorKind::usage, path + ": " + entry.name + " is a variant of " + base + ", which it does not list"};
    entry.expected = with_base_cells(std::move(entry.expected), found->expected);
  }
  return entries;
}

struct Catalog {
  std::vector<LockDescription> peers;
  std::string problem;  // why it could not be read ("" = it was)
};

Catalog load_catalog(const std::string& dir) {
  auto entries = catalog_entries(dir + "/catalog.json", dir, /*shipped=*/true);
  if (!entries) return {{}, entries.error().message + " (LOCKLAB_PEERS_DIR)"};
  for (auto& peer : *entries) peer.shipped = true;
  return {std::move(entries).value(), ""};
}

// Read once per process: the catalog does not change under a run.
const Catalog& catalog() {
  static const Catalog loaded = load_catalog(peers_dir());
  return loaded;
}

std::string shipped_names() {
  std::string names;
  for (const auto& peer : catalog().peers) names += (names.empty() ? "" : ", ") + peer.name;
  return names.empty() ? "none" : names;
}

// `--adapter 'CMD ARGS'` split as a shell would, without running anything.
Result<std::vector<std::string>> split_command(std::string_view command) {
  wordexp_t words{};
  const int failed = ::wordexp(std::string(command).c_str(), &words, WRDE_NOCMD);
  if (failed != 0) {
    if (failed == WRDE_NOSPACE) ::wordfree(&words);
    return Error{ErrorKind::usage, "--adapter: cannot split '" + std::string(command) +
                                       "' into words (an unbalanced quote, or $(...) which is not run)"};
  }
  std::vector<std::string> argv(words.we_wordv, words.we_wordv + words.we_wordc);
  ::wordfree(&words);
  if (argv.empty()) return Error{ErrorKind::usage, "--adapter: empty command"};
  return argv;
}

}  // namespace

LockDescription::LockDescription(const Generation& generation)
    : name(generation.name),
      number(generation.number),
      summary(generation.summary),
      race(generation.race),
      capabilities(generation.capabilities),
      key_pattern(kKeyPlaceholder),
      variant_of(generation.variant_of),
      variant_reason(generation.variant_reason),
      main_row(generation.variant_of.empty()),
      make([make = generation.make, can = generation.capabilities](const LockConfig& config, int) {
        return make(servers_for(config, can));
      }) {}

std::string peers_dir() {
  if (const char* dir = std::getenv("LOCKLAB_PEERS_DIR"); dir != nullptr && *dir != '\0') return dir;
  return LOCKLAB_PEERS_DIR;
}

std::string locked_key(const LockDescription& lock, std::string_view key) {
  std::string text = lock.key_pattern;
  for (auto at = text.find(kKeyPlaceholder); at != std::string::npos; at = text.find(kKeyPlaceholder, at + key.size()))
    text.replace(at, kKeyPlaceholder.size(), key);
  return text;
}

std::vector<LockDescription> catalog_peers() { return catalog().peers; }

Result<std::vector<LockDescription>> read_catalog(const std::string& path, const std::string& dir) {
  return catalog_entries(path, dir, /*shipped=*/false);
}

bool is_shipped(std::string_view name) {
  return std::any_of(catalog().peers.begin(), catalog().peers.end(), [&](const auto& peer) { return peer.name == name; });
}

namespace {

// A shipped Go or Rust adapter's binary, built by kits/KIT/install: "" when it is there,
// else the line the install left in kits/KIT/bin/NOT_BUILT (no go or cargo, a build that failed).
std::string missing_built_binary(const LockDescription& lock, const std::string& kit) {
  if (::access(lock.adapter.front().c_str(), X_OK) == 0) return "";
  std::string why;
  std::ifstream reason(std::filesystem::path(peers_dir()) / "kits" / kit / "bin/NOT_BUILT");
  std::getline(reason, why);
  return "not installed: " + lock.adapter.front() + " is not built (" +
         (why.empty() ? "run harness/adapters/kits/" + kit + "/install" : why) + ")";
}

// Whether `program` can be run: a path that exists, or a name found on PATH.
bool on_path(const std::string& program) {
  std::error_code ec;
  if (program.find('/') != std::string::npos) return std::filesystem::exists(program, ec);
  const char* env = std::getenv("PATH");
  const std::string path = env == nullptr ? "" : env;
  for (std::size_t begin = 0; begin <= path.size();) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    if (end > begin && std::filesystem::exists(std::filesystem::path(path.substr(begin, end - begin)) / program, ec))
      return true;
    begin = end + 1;
  }
  return false;
}

// A Java adapter (catalog: ["kits/java/run", NAME, ...]) needs `java` and the jar that
// harness/adapters/kits/java/install builds into kits/java/target/NAME/NAME.jar.
std::string missing_java(const LockDescription& lock) {
  if (!on_path("java")) return "java is not installed (a JDK 17: harness/adapters/kits/java/install installs one as root)";
  if (lock.adapter.size() < 2) return "";
  const auto target = std::filesystem::path(peers_dir()) / "kits/java/target";
  const auto jar = target / lock.adapter[1] / (lock.adapter[1] + ".jar");
  std::error_code ec;
  if (std::filesystem::exists(jar, ec)) return "";
  // Nothing built at all: one line for every Java row (the matrix's default rows name it once).
  const auto missing = std::filesystem::exists(target, ec) ? jar : target;
  return "not installed: " + missing.string() + " is missing (build the Java adapters: harness/adapters/kits/java/install)";
}

// A Python row on build/venv's interpreter (catalog: ["../../build/venv/bin/python3", ...]) needs the
// venv that harness/adapters/kits/python/install makes: "" when it is there, else its NOT_INSTALLED line.
// ext:redis-py runs /usr/bin/python3 with Debian's python3-redis and needs no venv.
// A venv whose pip install failed has its interpreter but not the libraries: NOT_INSTALLED says so.
std::string missing_venv(const LockDescription& lock) {
  const std::filesystem::path python(lock.adapter.front());
  const std::filesystem::path venv = python.parent_path().parent_path();
  std::error_code ec;
  const bool failed = std::filesystem::exists(venv / "NOT_INSTALLED", ec);
  const bool runs = ::access(python.c_str(), X_OK) == 0;
  if (venv.filename() != "venv" || (runs && !failed)) return "";
  std::string why;
  std::ifstream reason(venv / "NOT_INSTALLED");
  std::getline(reason, why);
  return "not installed: " + (runs ? venv.lexically_normal().string() + " is incomplete" :
                                     python.lexically_normal().string() + " is missing") +
         " (" + (why.empty() ? "run harness/adapters/kits/python/install" : why) + ")";
}

}  // namespace

// Why the C++ names the JavaScript kit's node_modules (and the Java kit's target/) here, the one
// place it knows a kit's layout: a full matrix (and scripts/run's main job) must leave
// the shipped JavaScript rows out with one line on a machine where
// harness/adapters/kits/js/install has not run, and refuse `--lock` of one
// with the install hint, before anything runs; otherwise each of their cells
// would be an `error` saying "Cannot find module". The catalog cannot say it
// yet: its entries carry no prerequisite (catalog.json's format,
// docs/adapters.md). To remove this: give each entry a `needs` (a path under
// the catalog's folder and the command that makes it) and read that here
// instead. Asking each adapter's init_ok before the rows would also do, at a
// node start per shipped row on every matrix.
std::string missing_prerequisite(const LockDescription& lock) {
  if (!lock.shipped) return "";
  if (lock.language == "go") return missing_built_binary(lock, "go");
  if (lock.language == "rust") return missing_built_binary(lock, "rust");
  if (lock.language == "java") return missing_java(lock);
  if (lock.language == "python") return missing_venv(lock);
  if (lock.language != "javascript") return "";
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(peers_dir()) / "kits/js/node_modules", ec)) return "";
  return peers_dir() + "/kits/js/node_modules is missing (install the peers' npm modules: harness/adapters/kits/js/install)";
}

Result<LockDescription> find_lock(std::string_view name) {
  if (const Generation* generation = find_generation(name)) return LockDescription(*generation);
  const std::string unknown = "unknown lock '" + std::string(name) + "'";
  if (!name.starts_with(kAdapterPrefix)) return Error{ErrorKind::usage, unknown + " (see: locklab list)"};
  if (!catalog().problem.empty()) return Error{ErrorKind::usage, unknown + ": " + catalog().problem};
  for (const auto& peer : catalog().peers)
    if (peer.name == name) return peer;
  return Error{ErrorKind::usage, unknown + " (shipped adapters: " + shipped_names() +
                                     "; an adapter of your own: --adapter LABEL='CMD ARGS' or --catalog FILE)"};
}

Result<LockDescription> find_lock(std::string_view name, std::string_view adapter_command) {
  if (adapter_command.empty() || !name.starts_with(kAdapterPrefix)) return find_lock(name);
  if (name.size() == kAdapterPrefix.size()) return Error{ErrorKind::usage, "--lock: ext: needs a label (ext:LABEL)"};
  if (!label_word(name.substr(kAdapterPrefix.size())))
    return Error{ErrorKind::usage, "--lock: " + std::string(name) + ": a label is letters, digits, '.', '_' and '-'"};
  for (const auto& peer : catalog().peers)
    if (peer.name == name)
      return Error{ErrorKind::usage, "--adapter: " + std::string(name) + " is a shipped adapter (" + peers_dir() +
                                         "/catalog.json); give yours another label"};
  auto argv = split_command(adapter_command);
  if (!argv) return argv.error();
  LockDescription lock = adapter_description(std::string(name), std::move(argv).value(),
                                             std::string(name) + " (" + std::string(adapter_command) + ")");
  lock.given_as = "--adapter " + shell_word(std::string(name) + "=" + std::string(adapter_command));
  give_make(lock);
  return lock;
}

std::set<std::string> capability_words(const Capabilities& capabilities) {
  std::set<std::string> words;
  for (const auto& word : kWords)
    if (capabilities.*word.field) words.insert(word.name);
  return words;
}

std::string words_text(const std::set<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : ", ") + word;
  return "{" + text + "}";
}

LockDescription with_claims(LockDescription lock, const std::set<std::string>& words) {
  lock.claimed = words;
  lock.capabilities = capabilities_of(words);
  give_make(lock);
  return lock;
}

Result<LockDescription> with_declared(LockDescription lock, const std::set<std::string>& words,
                                      const std::string& release_window, const std::string& acquire_gap) {
  lock = with_claims(std::move(lock), words);
  const json said = {{"release_window", release_window}, {"acquire_gap", acquire_gap}};
  if (auto points = read_step_points(said, "adapter " + lock.label + ": its init_ok", lock.capabilities); !points)
    return points.error();
  lock.declared_in_init_ok = true;
  give_make(lock);
  return lock;
}

}  // namespace locklab::harness
