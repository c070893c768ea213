#include "run/lease_witness.h"

#include "run/witness_join.h"

namespace locklab::harness {
namespace {

nlohmann::json blind_nodes(const std::vector<FeedLog>& logs) {
  nlohmann::json blind = nlohmann::json::array();
  for (const auto& log : logs)
    if (log.blind_from_ns != 0 || !log.ended_cleanly)
      blind.push_back({{"node", log.node}, {"why", log.error.empty() ? "its end marker never came back" : log.error}});
  return blind;
}

// Counts over the records the witness judged, and the lock's word beside it.
struct Tallies {
  std::int64_t judged = 0, by_word = 0, lost = 0, word_lost = 0, disagree = 0;
};

Tallies apply_findings(const std::vector<SectionWitness>& found, std::vector<CsRecord>& records) {
  Tallies t;
  for (std::size_t s = 0; s < records.size(); ++s) {
    CsRecord& record = records[s];
    t.word_lost += record.lease_lost_word;
    if (!found[s].judged) {
      ++t.by_word;  // lease_lost keeps the lock's word
      continue;
    }
    ++t.judged;
    record.lease_lost = found[s].lost ? 1 : 0;
    t.lost += record.lease_lost;
    t.disagree += record.lease_lost != record.lease_lost_word ? 1 : 0;
  }
  return t;
}

std::int64_t events_of(const std::vector<FeedLog>& logs) {
  std::int64_t events = 0;
  for (const auto& log : logs)
    for (const auto& item : log.items) events += item.read < 0 ? 1 : 0;
  return events;
}

}  // namespace

std::unique_ptr<LeaseWitness> LeaseWitness::unwatched(std::string why) {
  auto witness = std::make_unique<LeaseWitness>(WitnessPlan{});
  witness->why_not_ = std::move(why);
  return witness;
}

LeaseWitness::~LeaseWitness() {
  for (auto& feed : feeds_) (void)feed->stop();
}

void LeaseWitness::start() {
  if (!why_not_.empty()) return;
  if (plan_.nodes.empty() || plan_.keys.empty()) {
    why_not_ = plan_.nodes.empty() ? "the lock uses no Redis server" : "no lock key is known (an adapter that named none)";
    return;
  }
  for (const auto& node : plan_.nodes) {
    auto feed = KeyspaceFeed::start(node, plan_.keys);
    if (!feed) {
      why_not_ = "cannot watch " + node.endpoint.to_string() + ": " + feed.error().message;
      feeds_.clear();
      return;
    }
    feeds_.push_back(std::move(feed).value());
  }
}

void LeaseWitness::holder_entered(NemesisContext&, int client) {
  if (feeds_.empty()) return;
  const std::string key = plan_.key_of(client);
  if (key.empty()) return;
  for (auto& feed : feeds_) feed->request_read(client, key);
}

void LeaseWitness::close_reads() {
  for (auto& feed : feeds_) feed->close_reads();
}

WitnessOutcome LeaseWitness::finish(std::vector<CsRecord>& records) {
  WitnessOutcome outcome;
  if (feeds_.empty()) {
    outcome.block = {{"watched", false}, {"why", why_not_.empty() ? "not started" : why_not_}};
    return outcome;
  }
  std::vector<FeedLog> logs;
  nlohmann::json nodes = nlohmann::json::array();
  for (auto& feed : feeds_) {
    logs.push_back(feed->stop());
    nodes.push_back(logs.back().node);
    outcome.commands_on_servers += logs.back().commands_sent;
  }
  feeds_.clear();
  const Tallies t = apply_findings(witness_sections(logs, records, plan_.key_of, plan_.quorum), records);
  std::int64_t reads = 0;
  for (const auto& log : logs) reads += static_cast<std::int64_t>(log.reads.size());
  outcome.block = {{"watched", true},          {"nodes", nodes},
                   {"keys", plan_.keys},       {"quorum", plan_.quorum},
                   {"events", events_of(logs)}, {"reads", reads},
                   {"sections_judged", t.judged}, {"sections_by_lock_word", t.by_word},
                   {"leases_lost", t.lost},    {"lock_said_lost", t.word_lost},
                   {"disagreements_with_lock", t.disagree}, {"commands_excluded", outcome.commands_on_servers},
                   {"blind", blind_nodes(logs)}};
  return outcome;
}

}  // namespace locklab::harness
