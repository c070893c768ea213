// The narration's message catalog (harness/scenario/messages.h): every message
// has both languages with the same placeholders, every story line of the
// scenario catalog and every outcome word has its Chinese, and text() fills
// what it should. (That every narrated line of every scenario is Chinese under
// --lang zh is scenario.<name>.<lock>.zh, tests/scenario_output_test.py.)
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lock.h"

#include "scenario/messages.h"
#include "scenario/scenario_catalog.h"

namespace locklab::harness {
namespace {

// Chinese, or Chinese punctuation (a separator's Chinese is its full-width colon).
bool has_chinese(std::string_view text) {
  // UTF-8 lead bytes 0xE3..0xE9 start U+3000..U+9FFF (CJK punctuation and ideographs);
  // 0xEF 0xBC / 0xEF 0xBD start the full-width forms (：，（）).
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0xE3 && c <= 0xE9) return true;
    if (c == 0xEF && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xFE) == 0xBC) return true;
  }
  return false;
}

// The arguments a template uses: {} is the next one, {N} argument N (as fill() reads them).
std::multiset<int> placeholders(std::string_view pattern) {
  static const std::regex placeholder(R"(\{([0-9]?)\})");
  std::multiset<int> used;
  int next = 0;
  const std::string text(pattern);
  for (std::sregex_iterator it(text.begin(), text.end(), placeholder), end; it != end; ++it)
    used.insert((*it)[1].length() == 0 ? next++ : std::stoi((*it)[1].str()));
  return used;
}

// Switches the narration to zh for one test, back to en after it.
class InChinese : public ::testing::Test {
 protected:
  void SetUp() override { set_language(Language::zh); }
  void TearDown() override { set_language(Language::en); }
  static bool known(std::string_view english) { return translated(english) != english; }
};

TEST(MessageCatalog, EveryMessageHasBothLanguagesAndTheSamePlaceholders) {
  std::set<std::string_view> seen;
  ASSERT_FALSE(message_catalog().empty());
  for (const auto& message : message_catalog()) {
    EXPECT_FALSE(message.en.empty());
    EXPECT_TRUE(seen.insert(message.en).second) << "twice in the catalog: " << message.en;
    EXPECT_TRUE(has_chinese(message.zh)) << "no Chinese for: " << message.en << " => " << message.zh;
    EXPECT_EQ(placeholders(message.en), placeholders(message.zh)) << message.en << " => " << message.zh;
  }
}

TEST_F(InChinese, EveryStoryLineOfTheScenarioCatalogIsTranslated) {
  for (const auto& spec : scenario_catalog()) {
    for (const std::string* line : {&spec.source, &spec.story, &spec.race, &spec.words.shown, &spec.words.holds,
                                    &spec.words.happened, &spec.words.not_happened, &spec.words.expects,
                                    &spec.words.expects_not})
      EXPECT_TRUE(known(*line)) << spec.name << ": " << *line;
    for (const auto& lock : spec.locks) {
      if (!lock.story.empty()) {
        EXPECT_TRUE(known(lock.story)) << spec.name << " --lock " << lock.name;
      }
    }
    for (const auto& flag : spec.flags) {
      if (!flag.story.empty()) {
        EXPECT_TRUE(known(flag.story)) << spec.name << " --" << flag.name;
      }
    }
  }
  EXPECT_TRUE(known("unexpected"));
}

TEST_F(InChinese, EveryOutcomeWordIsTranslatedAndKeepsTheCodesWord) {
  for (const Release outcome : {Release::released, Release::still_held, Release::not_owner, Release::already_expired,
                                Release::error}) {
    EXPECT_TRUE(known(to_string(outcome))) << to_string(outcome);
    EXPECT_NE(std::string(translated(to_string(outcome))).find(to_string(outcome)), std::string::npos);
  }
  for (const Acquire outcome : {Acquire::acquired, Acquire::timed_out, Acquire::unknown, Acquire::error})
    EXPECT_TRUE(known(to_string(outcome))) << to_string(outcome);
}

TEST(MessageText, FillsInOrderAndByIndexAndNeverRereadsAValue) {
  EXPECT_EQ(fill("{} of {}", {"3", "5"}), "3 of 5");
  EXPECT_EQ(fill("{1} before {0}", {"a", "b"}), "b before a");
  EXPECT_EQ(fill("{0}'s DEL deleted {1}'s key: {1} wrote it", {"A", "B"}), "A's DEL deleted B's key: B wrote it");
  EXPECT_EQ(fill("value {}", {"{0} {}"}), "value {0} {}");  // a value with braces stays as it is
  EXPECT_EQ(fill("{} and {}", {"one"}), "one and {}");      // a placeholder without a value stays
  EXPECT_EQ(fill("no placeholder {x}", {"a"}), "no placeholder {x}");
  EXPECT_EQ(text("{}: {}", "race", 7), "race: 7");
}

TEST_F(InChinese, TextTranslatesTheTemplateNotTheValues) {
  EXPECT_EQ(text("releases: {}", "still_held"), "释放：still_held");
  EXPECT_EQ(text("releases: {}", translated("still_held")), "释放：仍持有（still_held）");
  EXPECT_EQ(text("an English line the catalog does not have"), "an English line the catalog does not have");
}

TEST(MessageLanguage, OnlyEnAndZhAreLanguages) {
  EXPECT_EQ(language_named("en"), Language::en);
  EXPECT_EQ(language_named("zh"), Language::zh);
  EXPECT_FALSE(language_named("fr"));
  EXPECT_FALSE(language_named("ZH"));
  EXPECT_EQ(language(), Language::en);  // the default
  EXPECT_EQ(translated("enters the critical section"), "enters the critical section");
}

// A lock's error narrated under --lang zh (failover_loses_lock --guard's step 7): its words in
// Chinese, its numbers kept; an error no pattern knows stays as it is; English untouched.
TEST_F(InChinese, ALocksErrorIsTranslatedWithItsNumbers) {
  const std::string shortfall =
      "only 0 of 1 replica(s) acknowledged the lock within 100 ms; released it (a failover could lose it)";
  const std::string zh = translated_error(shortfall);
  EXPECT_NE(zh, shortfall);
  EXPECT_NE(zh.find("100 ms"), std::string::npos) << zh;
  EXPECT_NE(zh.find("只有 0 个"), std::string::npos) << zh;
  EXPECT_EQ(translated_error("something new went wrong"), "something new went wrong");
  set_language(Language::en);
  EXPECT_EQ(translated_error(shortfall), shortfall);
}

// --lang is read before the parser runs, so that its errors are told in it (scenario.cpp, counter_demo).
TEST(MessageLanguage, ArgvNamesTheLanguageBeforeAnyParser) {
  const auto in = [](std::vector<std::string> words) {
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    return language_in_args(static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(in({"story", "--lock", "bogus", "--lang", "zh"}), Language::zh);
  EXPECT_EQ(in({"story", "--lang=zh", "--bogus"}), Language::zh);
  EXPECT_EQ(in({"story", "--lang", "zh", "--lang", "en"}), Language::en);  // the last one, as the parser takes it
  EXPECT_EQ(in({"story", "--lang", "fr"}), Language::en);                  // not a language: the parser says so
  EXPECT_EQ(in({"story", "--lang"}), Language::en);
  EXPECT_EQ(in({"story", "--json", "--lang"}), Language::en);
  EXPECT_EQ(in({"story"}), Language::en);
}

// The errors below the kit that a story reports when it cannot go on: a target, a write, a
// redis-server start; an error inside another is translated too (its group is an error itself).
TEST_F(InChinese, TheErrorsBelowTheKitAreTranslated) {
  EXPECT_EQ(translated_error("--json: directory /x/y does not exist"), "--json：目录 /x/y 不存在");
  EXPECT_EQ(translated_error("cannot write /x/a.html (rename): Permission denied"),
            "无法写入 /x/a.html（rename）：Permission denied");
  EXPECT_EQ(translated_error("cannot write /x/a.html: No space left on device"),
            "无法写入 /x/a.html：No space left on device");
  EXPECT_EQ(translated_error("cannot start redis-server: redis-server not found (install it: scripts/setup)"),
            "无法启动 redis-server：找不到 redis-server（安装它：scripts/setup）");
  EXPECT_EQ(translated_error("redis-server on port 7001 did not answer PING within 5000 ms"),
            "端口 7001 上的 redis-server 在 5000 ms 内没有回应 PING");
}

}  // namespace
}  // namespace locklab::harness
