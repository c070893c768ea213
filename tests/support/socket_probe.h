// Sees, from the kernel's side, that a request reached a server that has not
// read it yet (a SIGSTOPped redis-server). Then SIGKILLing that server makes
// the kernel answer the client with a reset (unread data at close => RST):
// a deterministic "connection reset after the request was sent".
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace locklab::testing {

// True when some established IPv4 connection to local `port` has bytes
// waiting in the server side's receive queue (/proc/net/tcp).
inline bool server_has_unread_request(int port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues;
    fields >> slot >> local >> remote >> state >> queues;
    const auto colon = local.find(':');
    const auto queue_colon = queues.find(':');
    if (colon == std::string::npos || queue_colon == std::string::npos) continue;
    if (std::stoi(local.substr(colon + 1), nullptr, 16) != port || state != "01") continue;  // 01 = ESTABLISHED
    if (std::stoul(queues.substr(queue_colon + 1), nullptr, 16) > 0) return true;
  }
  return false;
}

}  // namespace locklab::testing
