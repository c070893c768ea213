// In which order the server ran two narrated commands, from what the story
// recorded: the steps' send and reply times, and the server's own log of the
// lock key (Scenario::server_log(), the witness's keyspace feed). Replies to
// concurrent clients are printed in the order they arrive, which need not be
// the order the server ran the requests in; a line that explains an order
// asks here first, and says so when the record cannot tell.
//
// Two rules, nothing guessed:
//   - a reply that arrived before the other request was sent: that one ran first;
//   - a refused acquire sent after the key was removed (a "del" or "expired"
//     the server logged before the request left) found the key there again,
//     so it ran after the next creation of the key in the server's log; the
//     k-th creation is the k-th acquire on the key (when the acquires' replies
//     came back one before the next was sent, so their order is known).
// tests/narration_claims_test.py checks the narration's order claims with the same two rules.
#pragma once

#include <nlohmann/json.hpp>

namespace locklab::harness {

enum class ServerOrder { first_ran_first, then_ran_first, unknown };

// `steps`: Narrator::steps(); `log`: Scenario::server_log(); `first`, `then`: step numbers of two commands.
ServerOrder server_order(const nlohmann::json& steps, const nlohmann::json& log, int first, int then);

}  // namespace locklab::harness
