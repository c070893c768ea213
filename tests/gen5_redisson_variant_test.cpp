// Generation 5's variant row `reentrant-watchdog+redisson` (issue 27 item 6;
// impls/registry.h, generation_variants()): generation 5 with
// LockConfig::redisson_compatible, a row of its own so that `locklab run`,
// `matrix` and `fleets` reach the mode. It is a variant, labelled as the
// catalog's are, out of the teaching list and the quick matrix; every cell is
// written down in code and in docs/generations.md; on the wire it speaks
// Redisson's names (tests/redisson_compat_test.cpp drives Redisson's own
// scripts against the mode); and beside Redisson itself (the Java kit) one key
// holds with no overlap. The fleet case skips, one line, without the Java build.
#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "registry.h"

#include "fixtures/locklab_binary.h"
#include "fixtures/redis_fixture.h"
#include "report/fleets_report.h"
#include "sweeps/fleets.h"
#include "sweeps/matrix.h"
#include "sweeps/matrix_expectations.h"
#include "workload/lock_catalog.h"

namespace locklab::harness {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kVariant = "reentrant-watchdog+redisson";
constexpr const char* kBase = "reentrant-watchdog";

bool has(const std::vector<std::string>& rows, const std::string& row) {
  return std::find(rows.begin(), rows.end(), row) != rows.end();
}

TEST(GenerationVariants, TheRedissonRowIsAVariantOfGenerationFiveNotATeachingRow) {
  const Generation* variant = find_generation(kVariant);
  ASSERT_NE(variant, nullptr) << kVariant << " is not in the registry";
  EXPECT_EQ(variant->variant_of, kBase);
  EXPECT_NE(variant->variant_reason.find("Redisson"), std::string::npos) << variant->variant_reason;
  EXPECT_EQ(variant->number, "5");
  EXPECT_EQ(capability_words(variant->capabilities), capability_words(find_generation(kBase)->capabilities))
      << "the switch changes how waiters wake, not what the lock promises";
  EXPECT_EQ(step_points(kVariant), step_points(kBase));
  for (const auto& generation : generations()) EXPECT_NE(generation.name, kVariant) << "not a teaching row";
  EXPECT_TRUE(find_generation(kBase)->variant_of.empty());

  const auto described = find_lock(kVariant);
  ASSERT_TRUE(described) << described.error().message;
  EXPECT_EQ(described->variant_of, kBase);
  EXPECT_FALSE(described->main_row);
  EXPECT_FALSE(described->is_adapter());
}

TEST(GenerationVariants, InTheMatrixOfEveryRowNotTheQuickOne) {
  const auto rows = [](bool quick, const std::string& libraries) {
    MatrixOptions options;
    options.quick = quick;
    options.libraries = libraries;
    auto selected = matrix_rows(options);
    return selected ? *selected : std::vector<std::string>{"error: " + selected.error().message};
  };
  EXPECT_FALSE(has(rows(true, ""), kVariant)) << "--quick: the main rows";
  EXPECT_TRUE(has(rows(true, "all"), kVariant));
  EXPECT_TRUE(has(rows(false, ""), kVariant)) << "the full matrix: every row";
  EXPECT_FALSE(has(rows(false, "main"), kVariant));
}

TEST(GenerationVariants, TheFleetsSweepPairsTheVariantWithEveryAdapter) {
  const auto pairs = default_fleet_pairs();
  for (const auto& peer : catalog_peers())
    EXPECT_NE(std::find(pairs.begin(), pairs.end(), std::pair<std::string, std::string>(kVariant, peer.name)),
              pairs.end())
        << kVariant << " + " << peer.name;
}

// Every column is written down, agrees with the plan's n/a, and docs/generations.md lists the
// same class and reason.
TEST(GenerationVariants, EveryCellIsWrittenDownInCodeAndInTheDocs) {
  std::ifstream in(LOCKLAB_GENERATIONS_DOC);
  ASSERT_TRUE(in) << LOCKLAB_GENERATIONS_DOC;
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto described = find_lock(kVariant);
  ASSERT_TRUE(described);
  for (const auto& column : matrix_columns()) {
    const auto expectation = expected_cell(kVariant, column.heading.name);
    ASSERT_TRUE(expectation) << kVariant << " x " << column.heading.name << " has no expectation";
    const CellPlan plan = plan_cell(*described, column, true);
    EXPECT_EQ(plan.not_applicable.empty(), expectation->expected != CellClass::not_applicable) << column.heading.name;
    const std::string row = std::string("| ") + kVariant + " | " + column.heading.name + " | " + expected_text(*expectation) +
                            " | " + expectation->reason + " |";
    EXPECT_NE(doc.find(row), std::string::npos) << "docs/generations.md lacks the row: " << row;
  }
}

// On the wire: Redisson's owner field and Redisson's channel, reached through the registry by
// the row's name; the base row speaks neither.
class RedissonVariantWire : public testing::RedisTest {};

TEST_F(RedissonVariantWire, ItsFieldIsAUuidAndThreadAndItsReleaseWakesRedissonsChannel) {
  const std::string key = "locklab:variant-wire";
  const std::string channel = "redisson_lock__channel:{" + key + "}";
  auto listener = redis::Connection::connect(server().connection_options());
  ASSERT_TRUE(listener);
  ASSERT_TRUE(listener->send({"SUBSCRIBE", channel}));
  ASSERT_TRUE(listener->read_until(std::chrono::steady_clock::now() + 5s)) << "SUBSCRIBE confirmed";
  const std::regex redisson_field("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+");
  for (const std::string name : {kBase, kVariant}) {
    auto lock = make_lock(name, config(10s, key));
    ASSERT_TRUE(lock) << lock.error().message;
    ASSERT_EQ((*lock)->try_acquire(0ms), Acquire::acquired) << name;
    const auto fields = run({"HKEYS", key});
    ASSERT_TRUE(fields.is_array() && fields.size() == 1) << fields.describe();
    const std::string field(fields.element(0).text());
    EXPECT_EQ(std::regex_match(field, redisson_field), name == kVariant) << name << "'s field " << field;
    EXPECT_EQ((*lock)->release(), Release::released);
  }
  // The base row published nothing here (it wakes its oldest queued waiter, on its own
  // channel); the variant's release is the first message: LockPubSub.UNLOCK_MESSAGE.
  auto message = listener->read_until(std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(message) << message.error().message;
  ASSERT_TRUE(message->is_array());
  EXPECT_EQ(message->element(0).text(), "message");
  EXPECT_EQ(message->element(1).text(), channel);
  EXPECT_EQ(message->element(2).text(), "0");
}

// Redisson (the newest, through the Java kit) and the variant on one key, judged by `locklab
// fleets`: never an overlap nor a lost update nor an error, and `shares` once each got in
// kFleetMinSections times (3 s: a JVM client gets in about 20 times a second beside it).
TEST(RedissonVariantFleet, RedissonAndTheVariantShareOneKey) {
  const auto redisson = find_lock("ext:redisson");
  ASSERT_TRUE(redisson) << redisson.error().message;
  if (const std::string missing = missing_prerequisite(*redisson); !missing.empty()) GTEST_SKIP() << missing;
  testing::ScratchDir out("locklab-variant-fleet");
  const auto run = testing::run_locklab(std::string("fleets --lock ext:redisson --lock ") + kVariant +
                                        " --duration 3 --out " + out.str());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::ifstream in(out.path("fleets.json"));
  const json fleets = json::parse(in, nullptr, false);
  ASSERT_FALSE(fleets.is_discarded());
  ASSERT_EQ(fleets["pairs"].size(), 1u);
  const json& pair = fleets["pairs"][0];
  EXPECT_EQ(pair["verdict"], "safe") << pair.dump(1);
  EXPECT_EQ(pair["overlaps"], 0) << pair.dump(1);
  EXPECT_EQ(pair["counter"]["expected"], pair["counter"]["actual"]) << pair.dump(1);
  bool enough = true;
  for (const auto& member : pair["members"]) {
    EXPECT_EQ(member["errors"].get<long long>() + member["release_errors"].get<long long>(), 0) << member.dump(1);
    EXPECT_GT(member["acquired"].get<long long>(), 0) << member["lock"] << " must really have got in";
    enough = enough && member["acquired"].get<long long>() >= kFleetMinSections;
  }
  EXPECT_EQ(pair["sharing"], enough ? "shares" : "not shown") << pair.dump(1);
}

}  // namespace
}  // namespace locklab::harness
