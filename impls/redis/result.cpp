#include "redis/result.h"

namespace locklab {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::io: return "io";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::closed: return "closed";
    case ErrorKind::protocol: return "protocol";
    case ErrorKind::reply: return "reply";
    case ErrorKind::auth: return "auth";
    case ErrorKind::usage: return "usage";
  }
  return "unknown";
}

}  // namespace locklab
