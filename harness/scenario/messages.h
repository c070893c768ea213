// The narration's two languages (--lang en | zh) and its one message catalog
// (messages.cpp): every line a story narrates -- the kit's and the mains' --
// is written in English, with {} (in order) or {0}..{9} (by index) where a
// value goes, and that English is the key of its Chinese in the catalog:
//
//   story.say("index1 is parked at step point {}", story.window());
//   // en: index1 is parked at step point after-get-before-del
//   // zh: index1 停在步骤点 after-get-before-del
//
// Redis commands and replies, actor names, step points, lock names and
// numbers are values, never translated. An English text the catalog does not
// know is printed as it is (the zh test, tests/scenario_lang_test.py, finds
// it: a narrated line without Chinese). The catalog uses docs/glossary.md's
// terms (看门狗, 误删, 可重入, 租约, ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "report/page_words.h"

namespace locklab::harness {

enum class Language { en, zh };

// The process's narration language: Scenario sets it from --lang before the
// story starts (a ProcessActor's child inherits it with the fork).
void set_language(Language language);
Language language();
// "en" or "zh"; nullopt for anything else.
std::optional<Language> language_named(std::string_view name);
const char* language_code(Language language);
// The language argv asks for (--lang zh or --lang=zh; the last one given), read
// before any parser runs: a usage error the parser finds is told in it. en when
// argv names none, or names one that is not a language (the parser says so).
Language language_in_args(int argc, char** argv);

struct Message {
  std::string_view en;  // the key: the English template
  std::string_view zh;
};
// The catalog, in the order of messages.cpp (its tests read it).
const std::vector<Message>& message_catalog();

// `english` in the narration's language: the catalog's Chinese for it under
// zh, else `english` itself.
std::string_view translated(std::string_view english);

// An error a lock returned (its last_error(), an Error's message), in the
// narration's language: its words are the lock's, its numbers and names
// values, so it is matched by pattern (messages.cpp's kErrors), not as a key.
// An error no pattern matches is printed as it is.
std::string translated_error(const std::string& english);

// fill(pattern, args), which fills {} and {N}, is report/page_words.h's: one
// filler for the narration's catalog and the pages' words (report is below this kit).

namespace message_detail {
inline std::string as_text(const std::string& value) { return value; }
inline std::string as_text(std::string_view value) { return std::string(value); }
inline std::string as_text(const char* value) { return value; }
template <class Number, class = std::enable_if_t<std::is_integral_v<Number>>>
std::string as_text(Number value) {
  return std::to_string(value);
}
}  // namespace message_detail

// The message `english` in the narration's language, its placeholders filled.
// Floating-point values are formatted by the caller (fixed() in support/text.h).
template <class... Args>
std::string text(std::string_view english, const Args&... args) {
  return fill(translated(english), {message_detail::as_text(args)...});
}

}  // namespace locklab::harness
