// The pages' furniture in Chinese (page_words.h). The terms are docs/glossary.md's
// (临界区, 租约, 持有者, ...), as the narration's catalog uses them.
#include "report/page_words.h"

#include <unordered_map>

namespace locklab::harness {
namespace {

struct Word {
  std::string_view en;
  std::string_view zh;
};

// The step-through page (story_page.cpp, story_page.js), then the matrix page (matrix_report.cpp).
constexpr Word kWords[] = {
    {"the lesson expects {0}", "本课预期：{0}"},
    {"the race: {0}", "竞态：{0}"},
    {"the race not to happen", "竞态不发生"},
    {"verdict: {0}", "结论：{0}"},
    {"Back", "上一步"},
    {"Next", "下一步"},
    {"{0} steps", "共 {0} 步"},
    {"spacing: one step each", "间距：每步一格"},
    {"spacing: time", "间距：按时间"},
    {"ahead: hidden", "后面：隐藏"},
    {"ahead: shown", "后面：显示"},
    {"one step", "一步"},
    {"click a step", "点击某一步"},
    {"This page steps through the story with JavaScript; without it only the list of steps shows.",
     "本页用 JavaScript 一步一步演示；没有它就只显示步骤列表。"},
    {"timeline: a lane per client and per lock key", "时间线：每个客户端、每个锁 key 一条泳道"},
    {"a client in the critical section", "客户端在临界区内"},
    {"two holders at once", "同时有两个持有者"},
    {"a lock key: whose value the server holds", "锁 key：服务器上存的是谁的值"},
    {"its lease, running down to its end", "它的租约，一直倒数到结束"},
    {"no TTL", "没有 TTL"},
    {"an expiry stamp in the value (generation 2)", "值里的过期时间戳（第 2 代）"},
    {"the key went away (expired, released, deleted)", "key 没了（过期、释放、删除）"},
    {"a command (line: sent → answered)", "一条命令（线：发出 → 收到回复）"},
    {"a line of the story", "故事的一句旁白"},
    {"narrator", "旁白"},
    {"owner / lease", "持有者 / 租约"},
    {"reads only", "只读"},
    {"critical section", "临界区"},
    {"two holders at once: {0} to {1}", "同时有两个持有者：{0} 到 {1}"},
    {"not known (a command the view does not read)", "未知（视图读不懂的命令）"},
    {"no TTL: only a DEL frees it", "没有 TTL：只有 DEL 能释放它"},
    {"lease {0} ({1})", "租约 {0}（{1}）"},
    {"free (no key)", "空闲（没有 key）"},
    {"someone's value", "某人的值"},
    {"{0}'s value", "{0} 的值"},
    {"lease not known here", "这里不知道租约"},
    {"its stamp says {0} left (wall clock)", "它的时间戳说还剩 {0}（墙上时钟）"},
    {"its stamp passed {0} ago (wall clock)", "它的时间戳已过去 {0}（墙上时钟）"},
    {"lease {0} left", "租约还剩 {0}"},
    {"holds {0}, {1}", "存着 {0}，{1}"},
    {"Step {0} of {1}", "第 {0} 步，共 {1} 步"},
    {"step {0} of {1}", "第 {0} / {1} 步"},
    {"step {0} at {1}", "第 {0} 步，{1}"},
    {"on {0}: {1}", "在 {0} 上：{1}"},
    {"in the critical section: {0}", "临界区内：{0}"},
    {"nobody", "没有人"},
    {"{0} holders at once", "同时 {0} 个持有者"},
    {"{0} on the server: {1}", "服务器上的 {0}：{1}"},
    // The matrix page.
    {"locklab fault matrix", "locklab 故障矩阵"},
    {"Violating cells: who held the lock when", "违规的格子：谁在什么时候持有锁"},
    {"safe, exposed: a lease lost under a holder, nobody entered (safe by luck)",
     "safe, exposed：租约在持有者手里丢了，没人进来（侥幸安全）"},
    {"differs from expected", "与预期不同"},
    {"lock", "锁"},
    {"expected {0}", "预期 {0}"},
    {"Counts in a cell: ov = overlapping critical-section pairs, lost = lost counter updates, wo = wrong-owner "
     "releases, stalls = stretches with nobody inside while clients waited, unavail = ms from a crash to the next "
     "acquisition, fenced = stale-token accesses the resource refused. Hover a cell for the expected class and why, "
     "and what its fault was seen to do for its race (what bit); a column's header, for when its fault bites. "
     "docs/faults.md has the same reasons (a library's: docs/peers.md).",
     "格子里的计数：ov = 重叠的临界区对数，lost = 丢失的计数器更新，wo = 误删（释放了别人的锁），stalls = "
     "客户端在等、却没人在里面的时段，unavail = 从崩溃到下一次加锁的毫秒数，fenced = 资源拒绝的过期 token 访问。"
     "鼠标悬停在格子上可以看到预期的类别和原因，以及它的故障在这次运行里对竞态做了什么（what bit）；"
     "悬停在列标题上可以看到这个故障什么时候生效。docs/faults.md 有同样的原因（库的：docs/peers.md）。"},
    {"Which generation is each library?", "每个库最像哪一代？"},
    {"library", "库"},
    {"nearest generation", "最接近的一代"},
    {"equal cells", "相同的格子"},
    {"where it differs", "不同之处"},
    {"One lane per client, a bar per critical section, red bands where two or more were inside at once; grey bars "
     "were refused by the fenced resource; purple rows are the faults (a tick per act), amber bands the stalls.",
     "每个客户端一条泳道，每个临界区一根条；红色带表示同时有两个或更多持有者在里面；灰色条是被 fencing "
     "资源拒绝的；紫色行是故障（每个动作一个刻度），琥珀色带是停滞。"},
};

const std::unordered_map<std::string_view, std::string_view>& chinese() {
  static const auto table = [] {
    std::unordered_map<std::string_view, std::string_view> map;
    for (const auto& word : kWords) map.emplace(word.en, word.zh);
    return map;
  }();
  return table;
}

}  // namespace

std::string fill(std::string_view pattern, const std::vector<std::string>& args) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{') {
      const std::size_t close = pattern.find('}', i);
      const std::string_view inside =
          close == std::string_view::npos ? std::string_view{} : pattern.substr(i + 1, close - i - 1);
      std::size_t index = next;
      const bool numbered = inside.size() == 1 && inside[0] >= '0' && inside[0] <= '9';
      if (close != std::string_view::npos && (inside.empty() || numbered)) {
        if (numbered) index = static_cast<std::size_t>(inside[0] - '0');
        if (index < args.size()) {
          out += args[index];
          if (!numbered) ++next;
          i = close;
          continue;
        }
      }
    }
    out += pattern[i];
  }
  return out;
}

std::string page_word(const std::string& lang, std::string_view english, const std::vector<std::string>& args) {
  if (lang != "zh") return fill(english, args);
  const auto found = chinese().find(english);
  return fill(found == chinese().end() ? english : found->second, args);
}

nlohmann::json page_words(const std::string& lang) {
  nlohmann::json words = nlohmann::json::object();
  if (lang != "zh") return words;
  for (const auto& word : kWords) words[std::string(word.en)] = std::string(word.zh);
  return words;
}

std::string html_lang(const std::string& lang) { return lang == "zh" ? "zh-CN" : "en"; }

}  // namespace locklab::harness
