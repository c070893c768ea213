#include "workload/user_adapters.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include "support/text.h"

namespace locklab::harness {
namespace {

// "LABEL=CMD ARGS" split at its first '=', when what is before it is a label
// (ext: optional): "ext:LABEL" and the command. A bare command ("python3
// mine.py --opt=1") has a space or a '/' before its first '=': nullopt.
std::optional<std::pair<std::string, std::string>> labelled(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  std::string_view label = text.substr(0, equals);
  if (label.starts_with(kAdapterPrefix)) label.remove_prefix(kAdapterPrefix.size());
  if (!label_word(label)) return std::nullopt;
  return std::pair{std::string(kAdapterPrefix) + std::string(label), std::string(text.substr(equals + 1))};
}

bool is_named(const std::vector<std::string>& named, const std::string& name) {
  return std::find(named.begin(), named.end(), name) != named.end();
}

// The --catalog FILE's entries, each marked as given by that flag; relative
// adapter paths are the file's folder's (as the shipped catalog's are harness/adapters').
Result<std::vector<LockDescription>> catalog_locks(const std::string& path) {
  const std::string dir = std::filesystem::absolute(std::filesystem::path(path)).parent_path().string();
  auto entries = read_catalog(path, dir);
  if (!entries) return Error{ErrorKind::usage, "--catalog: " + entries.error().message};
  for (auto& entry : *entries) {
    if (is_shipped(entry.name))
      return Error{ErrorKind::usage, "--catalog: " + path + ": " + entry.name +
                                         " is a shipped adapter (harness/adapters/catalog.json); give yours another label"};
    entry.given_as = "--catalog " + shell_word(path);
  }
  return entries;
}

// Adds `lock` unless its label is there already.
Status add_once(UserAdapters& user, LockDescription lock, const std::string& flag) {
  if (user.find(lock.name) != nullptr)
    return Error{ErrorKind::usage, flag + ": " + lock.name + " is given twice (one --adapter or --catalog entry per label)"};
  user.locks.push_back(std::move(lock));
  return Done{};
}

// The one `--adapter LABEL='CMD ARGS'`: a name of `named`, not shipped.
Status add_labelled(UserAdapters& user, const std::string& name, const std::string& command,
                    const std::vector<std::string>& named) {
  const std::string flag = "--adapter " + name.substr(kAdapterPrefix.size());
  if (!is_named(named, name))
    return Error{ErrorKind::usage, flag + ": no --lock " + name + " (nor a --fleet member) asks for it"};
  if (command.find_first_not_of(" \t") == std::string::npos)
    return Error{ErrorKind::usage, flag + ": empty command (--adapter LABEL='CMD ARGS')"};
  auto lock = find_lock(name, command);  // refuses a shipped name, splits the command
  if (!lock) return lock.error();
  return add_once(user, std::move(lock).value(), flag);
}

// The names of `named` that are ext: labels nobody has given a command for yet.
std::vector<std::string> unbound(const std::vector<std::string>& named, const UserAdapters& user) {
  std::vector<std::string> names;
  for (const auto& name : named)
    if (name.starts_with(kAdapterPrefix) && !is_shipped(name) && user.find(name) == nullptr && !is_named(names, name))
      names.push_back(name);
  return names;
}

// The bare `--adapter 'CMD ARGS'`: the command of the one unshipped ext: name left.
Status add_bare(UserAdapters& user, const std::string& command, const std::vector<std::string>& named) {
  const std::vector<std::string> names = unbound(named, user);
  const std::string flag = "--adapter " + shell_word(command);
  if (names.empty())
    return Error{ErrorKind::usage, flag + ": no --lock ext:LABEL that the catalog does not ship is left for it"};
  if (names.size() > 1) {
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
    return Error{ErrorKind::usage, flag + " would be one command for " + std::to_string(names.size()) +
                                       " unshipped labels (" + list + "): give each its own, --adapter LABEL='CMD ARGS'"};
  }
  auto lock = find_lock(names.front(), command);
  if (!lock) return lock.error();
  return add_once(user, std::move(lock).value(), "--adapter");
}

}  // namespace

const LockDescription* UserAdapters::find(std::string_view name) const {
  for (const auto& lock : locks)
    if (lock.name == name) return &lock;
  return nullptr;
}

Result<UserAdapters> user_adapters(const AdapterFlags& flags, const std::vector<std::string>& named) {
  UserAdapters user;
  if (!flags.catalog.empty()) {
    auto entries = catalog_locks(flags.catalog);
    if (!entries) return entries.error();
    for (auto& entry : *entries) user.locks.push_back(std::move(entry));  // read_catalog refused a name twice
  }
  std::vector<std::string> bare;
  for (const auto& text : flags.adapters) {
    if (auto pair = labelled(text)) {
      if (auto added = add_labelled(user, pair->first, pair->second, named); !added) return added.error();
    } else {
      bare.push_back(text);
    }
  }
  if (bare.size() > 1)
    return Error{ErrorKind::usage, "--adapter: " + std::to_string(bare.size()) +
                                       " commands without a label: give each its own, --adapter LABEL='CMD ARGS'"};
  if (bare.size() == 1)
    if (auto added = add_bare(user, bare.front(), named); !added) return added.error();
  return user;
}

std::string bare_command(const AdapterFlags& flags) {
  for (const auto& text : flags.adapters)
    if (!labelled(text)) return text;
  return "";
}

Result<LockDescription> find_lock(std::string_view name, const UserAdapters& user) {
  if (const LockDescription* lock = user.find(name)) return *lock;
  return find_lock(name);
}

}  // namespace locklab::harness
