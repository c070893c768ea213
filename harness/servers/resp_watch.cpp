#include "servers/resp_watch.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace locklab::harness {
namespace {

// Redis refuses an inline line beyond 64 KiB (PROTO_INLINE_MAX_SIZE); a header
// line ("*3", "$17") is a few digits: anything much longer is not RESP.
constexpr std::size_t kMaxInlineLine = 64u << 10;
constexpr std::size_t kMaxHeaderLine = 32;
constexpr std::int64_t kMaxArrayLength = 0x7fffffff;  // Redis: "invalid multibulk length" beyond INT_MAX
constexpr std::int64_t kMaxBulkLength = 1LL << 40;    // far beyond proto-max-bulk-len (512 MB by default)

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

bool contains_ignoring_case(std::string_view haystack, std::string_view lower_needle) {
  return std::search(haystack.begin(), haystack.end(), lower_needle.begin(), lower_needle.end(),
                     [](char x, char y) { return lower(x) == y; }) != haystack.end();
}

// The whole of `text` as a decimal integer (an optional '-', then digits), or nullopt.
std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t value = 0;
  if (text.empty() || text.front() == '+') return std::nullopt;
  const auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || stop != text.data() + text.size()) return std::nullopt;
  return value;
}

// A word for a record: printable, at most `width` characters.
std::string shown(std::string_view word, std::size_t width) {
  std::string out;
  for (char c : word.substr(0, width)) out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  if (word.size() > width) out += "...";
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const auto end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::string RespCommand::describe() const {
  constexpr std::size_t kShownArguments = 3;
  std::string text = shown(name(), 24);
  // Built by append: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  for (std::size_t i = 1; i < words.size() && i <= kShownArguments; ++i) text.append(" ").append(shown(words[i], 24));
  if (argc > kShownArguments + 1)
    text.append(" (+").append(std::to_string(argc - kShownArguments - 1)).append(" more)");
  return text;
}

// --- the reader -------------------------------------------------------------------

void RespReader::feed(std::string_view bytes, std::vector<RespCommand>& out) {
  std::size_t done = 0;
  while (done < bytes.size() && !broken()) {
    const std::size_t used = step(bytes.substr(done), out);
    fed_ += used;
    done += used;
  }
  fed_ += bytes.size() - done;  // a broken stream is only counted
}

std::uint64_t RespReader::settled() const {
  if (broken() || stage_ == Stage::between || fed_ - command_.begin > kMaxPartial) return fed_;
  return command_.begin;
}

void RespReader::fail(std::string why) { why_broken_ = std::move(why); }

void RespReader::begin_command(Stage stage) {
  command_ = RespCommand{};
  command_.begin = fed_;
  stage_ = stage;
  line_.clear();
}

// One stage's worth of `bytes` (never empty); returns how many it used.
std::size_t RespReader::step(std::string_view bytes, std::vector<RespCommand>& out) {
  switch (stage_) {
    case Stage::between:
      // Redis reads a request that starts with '*' as an array, anything else as an inline line.
      if (bytes.front() == '*') {
        begin_command(Stage::count_line);
        return 1;
      }
      begin_command(Stage::inline_line);
      return 0;
    case Stage::count_line:
    case Stage::bulk_line:
    case Stage::inline_line: {
      const std::size_t used = take_line(bytes, stage_ == Stage::inline_line ? kMaxInlineLine : kMaxHeaderLine);
      if (!broken() && !line_.empty() && line_.back() == '\n') {
        line_.pop_back();
        end_line(out, fed_ + used);
      }
      return used;
    }
    case Stage::bulk_body:
      return take_body(bytes);
    case Stage::bulk_end: {
      const char expected = end_left_ == 2 ? '\r' : '\n';
      if (bytes.front() != expected) {
        fail("a bulk string not followed by \\r\\n at byte " + std::to_string(fed_));
        return 0;
      }
      if (--end_left_ == 0) end_word(out, fed_ + 1);
      return 1;
    }
  }
  return bytes.size();
}

// Up to and including the next '\n' into line_; fails past `limit`.
std::size_t RespReader::take_line(std::string_view bytes, std::size_t limit) {
  const auto newline = bytes.find('\n');
  const std::size_t used = newline == std::string_view::npos ? bytes.size() : newline + 1;
  if (line_.size() + used > limit + 1) {
    fail("a line longer than " + std::to_string(limit) + " bytes at byte " + std::to_string(command_.begin));
    return 0;
  }
  line_.append(bytes.substr(0, used));
  return used;
}

void RespReader::end_line(std::vector<RespCommand>& out, std::uint64_t end) {
  if (stage_ == Stage::inline_line) return end_inline_line(out, end);
  if (line_.empty() || line_.back() != '\r') return fail("a header line not ended by \\r\\n: '" + shown(line_, 32) + "'");
  line_.pop_back();
  if (stage_ == Stage::count_line) return end_count_line();
  end_bulk_line();
}

void RespReader::end_count_line() {
  const auto count = whole_number(line_);
  if (!count || *count > kMaxArrayLength) return fail("a bad array length '*" + shown(line_, 32) + "'");
  if (*count <= 0) {  // "*0", "*-1": Redis skips an empty request
    stage_ = Stage::between;
    return;
  }
  words_left_ = *count;
  command_.argc = static_cast<std::size_t>(*count);
  stage_ = Stage::bulk_line;
  line_.clear();
}

void RespReader::end_bulk_line() {
  const auto length = line_.empty() || line_.front() != '$' ? std::nullopt : whole_number(std::string_view(line_).substr(1));
  if (!length || *length < 0 || *length > kMaxBulkLength)
    return fail("expected a bulk string header '$N', got '" + shown(line_, 32) + "'");
  keep_word_ = command_.words.size() < RespCommand::kMaxWords;
  if (keep_word_) command_.words.emplace_back();
  body_left_ = static_cast<std::uint64_t>(*length);
  stage_ = body_left_ > 0 ? Stage::bulk_body : Stage::bulk_end;
  end_left_ = 2;
  line_.clear();
}

// Redis splits an inline request on white space; an empty line is no request.
void RespReader::end_inline_line(std::vector<RespCommand>& out, std::uint64_t end) {
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  std::size_t argc = 0;
  std::size_t at = 0;
  while (at < line_.size()) {
    const auto start = line_.find_first_not_of(" \t", at);
    if (start == std::string::npos) break;
    const auto stop = std::min(line_.find_first_of(" \t", start), line_.size());
    if (command_.words.size() < RespCommand::kMaxWords)
      command_.words.push_back(line_.substr(start, std::min(stop - start, RespCommand::kMaxWordBytes)));
    ++argc;
    at = stop;
  }
  line_.clear();
  stage_ = Stage::between;
  if (argc == 0) return;
  command_.argc = argc;
  emit(out, end);
}

std::size_t RespReader::take_body(std::string_view bytes) {
  const auto used = static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, bytes.size()));
  if (keep_word_) {
    std::string& word = command_.words.back();
    if (word.size() < RespCommand::kMaxWordBytes)
      word.append(bytes.substr(0, std::min(used, RespCommand::kMaxWordBytes - word.size())));
  }
  body_left_ -= used;
  if (body_left_ == 0) stage_ = Stage::bulk_end;
  return used;
}

void RespReader::end_word(std::vector<RespCommand>& out, std::uint64_t end) {
  if (--words_left_ > 0) {
    stage_ = Stage::bulk_line;
    return;
  }
  stage_ = Stage::between;
  emit(out, end);
}

void RespReader::emit(std::vector<RespCommand>& out, std::uint64_t end) {
  command_.end = end;
  out.push_back(std::move(command_));
  command_ = RespCommand{};
}

// --- the pattern --------------------------------------------------------------------

namespace {

bool is_name(std::string_view name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

bool is_text(std::string_view text) {
  return !text.empty() && std::none_of(text.begin(), text.end(), [](char c) {
    return c == '=' || c == '>' || c == '|' || c == '~' || std::isspace(static_cast<unsigned char>(c)) ||
           !std::isprint(static_cast<unsigned char>(c));
  });
}

Error pattern_error(std::string_view text, const std::string& why) {
  std::string line("bad RESP pattern '");
  line.append(text).append("': ").append(why).append(" (PATTERN := NAME[~TEXT][|NAME...][>STEP...], e.g. GET>DEL)");
  return Error{ErrorKind::usage, line};
}

}  // namespace

Result<RespPattern> RespPattern::parse(std::string_view text) {
  RespPattern pattern;
  pattern.text_ = std::string(text);
  if (text.empty()) return pattern_error(text, "empty");
  const auto steps = split(text, '>');
  if (steps.size() > kMaxSteps) return pattern_error(text, "more than " + std::to_string(kMaxSteps) + " steps");
  for (std::string_view step : steps) {
    if (step.empty()) return pattern_error(text, "an empty step");
    std::vector<Alternative> alternatives;
    for (std::string_view alternative : split(step, '|')) {
      const auto tilde = alternative.find('~');
      const std::string_view name = alternative.substr(0, tilde);
      if (!is_name(name)) return pattern_error(text, std::string("'").append(name).append("' is not a command name"));
      Alternative parsed;
      for (char c : name) parsed.name.push_back(upper(c));
      if (tilde != std::string_view::npos) {
        const std::string_view needle = alternative.substr(tilde + 1);
        if (!is_text(needle))
          return pattern_error(text, std::string("'~").append(needle).append("' needs a text without = > | ~ or spaces"));
        for (char c : needle) parsed.text.push_back(lower(c));
      }
      alternatives.push_back(std::move(parsed));
    }
    pattern.steps_.push_back(std::move(alternatives));
  }
  return pattern;
}

bool RespPattern::step_matches(std::size_t step, const RespCommand& command) const {
  if (step >= steps_.size()) return false;
  for (const Alternative& alternative : steps_[step]) {
    if (!equal_ignoring_case(command.name(), alternative.name)) continue;
    if (alternative.text.empty()) return true;
    for (std::size_t i = 1; i < command.words.size(); ++i)
      if (contains_ignoring_case(command.words[i], alternative.text)) return true;
  }
  return false;
}

bool RespMatcher::advance(const RespCommand& command) {
  if (next_ >= pattern_->steps() || !pattern_->step_matches(next_, command)) return false;
  return ++next_ == pattern_->steps();
}

// --- the group ----------------------------------------------------------------------

ParkGroup::ParkGroup(std::shared_ptr<std::atomic<int>> budget, std::function<void()> on_park)
    : budget_(budget ? std::move(budget) : std::make_shared<std::atomic<int>>(1)), on_park_(std::move(on_park)) {}

bool ParkGroup::claim(Arrival arrival) {
  const std::lock_guard lock(mutex_);
  if (claimed_.load()) return false;
  int left = budget_->load();
  do {
    if (left <= 0) return false;
  } while (!budget_->compare_exchange_weak(left, left - 1));
  arrival_ = std::move(arrival);
  claimed_.store(true);
  if (on_park_) on_park_();
  return true;
}

std::optional<ParkGroup::Arrival> ParkGroup::arrival() const {
  const std::lock_guard lock(mutex_);
  return arrival_;
}

}  // namespace locklab::harness
