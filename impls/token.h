// Random owner tokens: 128 bits from the kernel CSPRNG (getrandom), as hex.
#pragma once

#include <string>

namespace locklab {

std::string random_token_128();  // 32 lowercase hex characters

}  // namespace locklab
