// The furniture of the pages a run or a story becomes -- headings, buttons,
// legends, the state box of the step-through page, the matrix page's titles --
// in the page's language (--lang en | zh). The narration itself is translated
// where it is told (scenario/messages.cpp); these are the words around it,
// which the report component owns: English is the key, as in the narration's
// catalog, and a word without Chinese stays English (tests/page_words_test.py finds it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace locklab::harness {

// Fills `pattern`'s {} (the next argument) and {N} (argument N, 0..9) with
// `args`; a placeholder without an argument is left as it is, and a value is
// never read again (a value holding "{1}" stays as it is). The one filler of
// both catalogs: these pages' words and the narration's (scenario/messages.h),
// which is above this component.
std::string fill(std::string_view pattern, const std::vector<std::string>& args);

// `english` in `lang` ("zh": its Chinese; anything else: `english`), its {0}..{9}
// filled with `args` (fill()).
std::string page_word(const std::string& lang, std::string_view english, const std::vector<std::string>& args = {});

// {english: chinese} of every word, for a page's script (story_page.js's T());
// an empty object for any language but "zh".
nlohmann::json page_words(const std::string& lang);

// The HTML lang attribute: "zh-CN" for zh (a browser picks its CJK font by it), else "en".
std::string html_lang(const std::string& lang);

}  // namespace locklab::harness
