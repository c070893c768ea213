#include "sweeps/adapter_declaration.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "servers/redis_server.h"
#include "support/files.h"
#include "support/text.h"
#include "workload/adapter_lock.h"

namespace locklab::harness {
namespace {

constexpr const char* kDeclarationKey = "locklab:declaration";

// The key init_ok named, as a pattern of the key it was told ("team:{key}"
// for "team:locklab:declaration"), as the run's probe reads it.
std::string key_pattern_of(std::string key) {
  const std::string told = kDeclarationKey, placeholder = "{key}";
  for (auto at = key.find(told); at != std::string::npos; at = key.find(told, at + placeholder.size()))
    key.replace(at, told.size(), placeholder);
  return key;
}

// The adapter's command as a catalog entry's `adapter`: a word with a '/'
// that does not start with one is read relative to the catalog's folder, so
// it is written absolute (it was relative to this directory); nullopt for
// such a word that is no path here ("--opt=a/b"), which a catalog cannot hold.
std::optional<nlohmann::json> catalog_argv(const std::vector<std::string>& argv) {
  nlohmann::json words = nlohmann::json::array();
  std::error_code ec;
  for (const auto& word : argv) {
    if (word.find('/') == std::string::npos || word.front() == '/') {
      words.push_back(word);
      continue;
    }
    if (!std::filesystem::exists(word, ec)) return std::nullopt;
    words.push_back(std::filesystem::absolute(word, ec).lexically_normal().string());
  }
  return words;
}

// `lock` as a catalog entry, or nullopt when a catalog cannot say it (catalog_argv; a key without {key}).
std::optional<nlohmann::json> catalog_entry(const LockDescription& lock) {
  const auto argv = catalog_argv(lock.adapter);
  if (!argv || (!lock.key_pattern.empty() && lock.key_pattern.find("{key}") == std::string::npos)) return std::nullopt;
  nlohmann::json capabilities = nlohmann::json::object();
  for (const auto& word : lock.claimed) capabilities[word] = true;
  return nlohmann::json{{"name", lock.name.substr(kAdapterPrefix.size())},
                        {"adapter", *argv},
                        {"key", lock.key_pattern},
                        {"capabilities", capabilities},
                        {"release_window", std::string(lock.capabilities.release_window)},
                        {"acquire_gap", std::string(lock.capabilities.acquire_gap)}};
}

}  // namespace

Status write_declared_catalog(UserAdapters& user, const std::string& path) {
  nlohmann::json peers = nlohmann::json::array();
  std::vector<LockDescription*> written;
  for (auto& lock : user.locks) {
    if (!lock.declared_in_init_ok) continue;
    if (auto entry = catalog_entry(lock)) {
      peers.push_back(std::move(*entry));
      written.push_back(&lock);
    }
  }
  if (written.empty()) return Done{};
  const nlohmann::json catalog = {
      {"schema", "locklab.peers/1"},
      {"about", "What the adapters given by --adapter declared in their init_ok, as the matrix read it before "
                "planning their rows: each cell's replay line gives them again with --catalog this file."},
      {"peers", peers}};
  if (auto saved = write_json_atomically(path, catalog); !saved) return saved.error();
  for (LockDescription* lock : written) lock->given_as = "--catalog " + shell_word(path);
  return Done{};
}

Result<LockDescription> declared_by_init_ok(const LockDescription& lock) {
  auto server = RedisServer::start();
  if (!server) return Error{server.error().kind, "adapter " + lock.label + ": no server to ask it on: " +
                                                     server.error().message};
  LockConfig config;
  config.key = kDeclarationKey;
  config.servers = {(*server)->connection_options()};
  auto adapter = AdapterLock::create(lock.adapter, config, 0, AdapterTimeouts{}, lock.label);
  if (!adapter) return adapter.error();
  const AdapterIdentity said = (*adapter)->identity();
  std::set<std::string> words;
  for (const auto& [word, value] : said.capabilities)
    if (value) words.insert(word);
  auto declared = with_declared(lock, words, said.release_window, said.acquire_gap);
  if (declared && declared->key_pattern.empty() && !said.key.empty()) declared->key_pattern = key_pattern_of(said.key);
  return declared;
}

Result<UserAdapters> with_init_ok_declarations(UserAdapters user, const char* command) {
  for (auto& lock : user.locks) {
    if (lock.from_catalog) continue;
    auto declared = declared_by_init_ok(lock);
    if (declared) {
      lock = std::move(declared).value();
      continue;
    }
    if (declared.error().kind == ErrorKind::usage) return declared.error();
    std::fprintf(stderr, "locklab %s: %s: its init_ok could not be read before it was planned: %s\n", command,
                 lock.name.c_str(), declared.error().message.c_str());
  }
  return user;
}

}  // namespace locklab::harness
