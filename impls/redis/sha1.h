// SHA-1 of a text, in lowercase hex: the name Redis gives a Lua script (SCRIPT
// LOAD's answer, EVALSHA's first argument). The lock generations' scripts are
// known by it (impls/script_shape.h), so that what reads the traffic can tell
// which script an EVALSHA ran without asking Redis.
#pragma once

#include <string>
#include <string_view>

namespace locklab::redis {

std::string sha1_hex(std::string_view text);

}  // namespace locklab::redis
