#include "script_shape.h"

#include <utility>

#include "redis/sha1.h"

namespace locklab {

ScriptShape script_shape(ScriptRole role, std::string source, int keys, int args) {
  std::string sha1 = redis::sha1_hex(source);
  return {role, std::move(source), std::move(sha1), keys, args};
}

}  // namespace locklab
