// Random owner tokens: 128 bits from the kernel CSPRNG (getrandom), as hex.
#pragma once

#include <string>

namespace locklab {

std::string random_token_128();  // 32 lowercase hex characters

// The value a token generation (3, 4, 6, 7) stores for ONE acquisition: a
// fresh random token each time (the distlock page: unique per lock request),
// so a delayed compare-and-delete left over from this client's earlier hold
// cannot delete its current one. LockConfig::owner, when set, is the client's
// identity and becomes the prefix: "<owner>:<32 hex>" (readable in the key,
// still unique per acquisition). Empty owner = the random part alone.
std::string acquisition_token(const std::string& owner);

}  // namespace locklab
