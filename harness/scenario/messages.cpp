#include "scenario/messages.h"

#include <atomic>
#include <regex>
#include <unordered_map>

namespace locklab::harness {
namespace {

std::atomic<Language> g_language{Language::en};

// The catalog. Each row: the English the kit or a main narrates (the key,
// exactly as written there), then its Chinese with the same placeholders.
// Terms as in docs/glossary.md; Redis commands, replies and code stay as they are.
const std::vector<Message> kCatalog = {
    // The kit: narrator, Scenario, its header and verdict
    {"enters the critical section",
     "进入临界区"},
    {"leaves the critical section",
     "离开临界区"},
    {"crashed at {}: the process is gone, nothing was released",
     "在步骤点 {} 崩溃：进程已不在，什么也没有释放"},
    {"(waited {} ms until {})",
     "（等了 {} ms，直到 {}）"},
    {"lock: {0}{1} (the lesson expects {2})",
     "锁：{0}{1}（本课预期{2}）"},
    {"verdict: {0} ({1}) -- {2}; {3}",
     "结论：{0}（{1}）—— {2}；{3}"},
    {"(step-through: the story runs at its own speed, as without this flag; its steps are shown one per Enter, each "
     "with the time it really happened at)",
     "（逐步播放：故事按自身速度运行，与不加此选项时相同；每按一次回车显示一步，每步带着它实际发生的时间）"},
    {"{}: {}",
     "{}：{}"},
    {"; {}",
     "；{}"},
    {"releases: {}",
     "释放：{}"},
    {"releases => {}",
     "释放 => {}"},
    {"its release script answers the holds left, so 1 means still held and 0 released: the reverse of "
     "seed 004 §8's unlock script (and of Redisson's, seed 000 §二.3.1), where 0 means one hold fewer "
     "and 1 released",
     "它的释放脚本返回剩余的持有次数，所以 1 表示仍持有、0 表示已释放：与种子文章 004 §8 的解锁脚本（以及 "
     "Redisson 的，种子文章 000 §二.3.1）正好相反，那里 0 表示重入次数减 1、1 表示已释放"},
    {"race shown",
     "竞态重现（race shown）"},
    {"fix holds",
     "修复有效（fix holds）"},
    {"unexpected",
     "出乎预期（unexpected）"},
    {"the race happened",
     "竞态发生了"},
    {"the race did not happen",
     "竞态没有发生"},
    {"the race",
     "竞态"},
    {"the race not to happen",
     "竞态不会发生"},
    // Outcomes (impls/lock.h) and Redlock votes: the code's word stays beside its Chinese
    {"acquired",
     "获得锁（acquired）"},
    {"refused",
     "被拒绝（refused）"},
    {"timed_out",
     "超时（timed_out）"},
    {"unknown",
     "结果未知（unknown）"},
    {"error",
     "出错（error）"},
    {"released",
     "已释放（released）"},
    {"still_held",
     "仍持有（still_held）"},
    {"not_owner",
     "不是自己的锁（not_owner）"},
    {"already_expired",
     "锁已不在（already_expired）"},
    {"for",
     "赞成"},
    {"against",
     "反对"},
    {"errored",
     "出错"},
    // The key ledger (key_ledger.cpp)
    {"{0}'s DEL deleted {1}'s key (误删): {1} wrote it at step {2}",
     "{0} 的 DEL 删除了 {1} 的锁 key（误删）：这个 key 是 {1} 在第 {2} 步写入的"},
    {"{0}'s key did not expire: {1}'s DEL deleted it at step {2}",
     "{0} 的锁 key 并不是过期了：是 {1} 的 DEL 在第 {2} 步删掉的"},
    {"the key is still {0}'s: {0} has left its critical section but not released the lock yet",
     "锁 key 仍是 {0} 的：{0} 已离开临界区，但还没有释放锁"},
    // Lease watching (lease_watch.cpp)
    {"PTTL {0} rose from {1} to {2} ms: the lease was renewed",
     "PTTL {0} 从 {1} ms 回升到 {2} ms：租约被续期了"},
    {"PTTL {0} => -2: the key expired, last seen with {1} ms left",
     "PTTL {0} => -2：key 已过期，最后一次看到时还剩 {1} ms"},
    // Redlock votes (scenario/redlock_votes.h)
    {"votes: {}",
     "投票：{}"},
    {"{0} of {1} for, quorum {2}: {3}",
     "{1} 票中 {0} 票赞成，法定多数 {2}：{3}"},
    {"acquired, validity {} ms",
     "获得锁，有效期 {} ms"},
    {"quorum came too late: elapsed {} ms, validity {} ms <= 0",
     "法定多数来得太晚：耗时 {} ms，有效期 {} ms <= 0"},
    {"no quorum: {0} for, {1} against, {2} errored or timed out (quorum {3})",
     "未达法定多数：{0} 票赞成，{1} 票反对，{2} 票出错或超时（法定多数 {3}）"},
    // The stories (scenario_catalog.cpp): sources, stories, races, verdict words
    {"seed 004 §11 本地锁会出现的问题",
     "种子文章 004 §11 本地锁会出现的问题"},
    {"100 requests at concurrency 50 increment a counter that starts at 1: expected 101",
     "100 个请求以并发 50 给一个从 1 开始的计数器加 1：预期 101"},
    {"lost updates: the counter ends below 101",
     "丢失更新：计数器最后小于 101"},
    {"seed 004 §4 基于redis分布式锁的基本实现",
     "种子文章 004 §4 基于redis分布式锁的基本实现"},
    {"A takes the lock and its process dies before its release; B waits for the lock",
     "A 拿到锁，它的进程在释放之前死掉；B 等待这把锁"},
    {"the key has no TTL (PTTL -1): nobody ever gets the lock again (死锁)",
     "锁 key 没有 TTL（PTTL -1）：再也没有人能拿到锁（死锁）"},
    {"A takes the lock with SETNX and crashes before its DEL; B waits and never gets in",
     "A 用 SETNX 拿到锁，在 DEL 之前崩溃；B 一直等，永远进不去"},
    {"A takes the lock with SETNX and EXPIRE and crashes before its DEL; the lease frees the key and "
     "B gets in",
     "A 用 SETNX 和 EXPIRE 拿到锁，在 DEL 之前崩溃；租约到期释放了 key，B 进去了"},
    {"A takes the lock with SET NX PX and crashes before its release; the lease frees the key and B gets "
     "in",
     "A 用 SET NX PX 拿到锁，在释放之前崩溃；租约到期释放了 key，B 进去了"},
    {"seed 003 §六.1 一些问题; seed 004 §5 优化分布式锁_设置过期时间",
     "种子文章 003 §六.1 一些问题；种子文章 004 §5 优化分布式锁_设置过期时间"},
    {"A takes the lock and crashes at once (before its EXPIRE, where it has one); B waits for the lock",
     "A 拿到锁后立刻崩溃（如果有 EXPIRE，就在 EXPIRE 之前）；B 等待这把锁"},
    {"SETNX and EXPIRE are two commands: the key is left with no TTL, deadlock (缺乏原子性)",
     "SETNX 和 EXPIRE 是两条命令：key 留下来没有 TTL，死锁（缺乏原子性）"},
    {"A's SETNX succeeds and A crashes before its EXPIRE; B waits and never gets in",
     "A 的 SETNX 成功，A 在 EXPIRE 之前崩溃；B 一直等，永远进不去"},
    {"A's SET NX PX sets the value and the TTL in one command; A crashes right after it, and B gets in "
     "once the lease ends",
     "A 的 SET NX PX 用一条命令同时设置值和 TTL；A 紧接着崩溃，租约一到 B 就进去了"},
    {"seed 003: the C3/C4 passage before 五、代码实现, and §六.2 一些问题",
     "种子文章 003：五、代码实现 之前的 C3/C4 那一段，以及 §六.2 一些问题"},
    {"C0's timestamp has passed; C1 and C2 both GET it and both GETSET: one wins, the loser overwrites "
     "the winner's expiry",
     "C0 的时间戳已过期；C1 和 C2 都 GET 到它，又都执行 GETSET：一个赢，输的一方覆盖了赢家的超时时间"},
    {"the loser's GETSET overwrote the winner's expiry (C1的超时时间被C2覆盖)",
     "输家的 GETSET 覆盖了赢家的超时时间（C1的超时时间被C2覆盖）"},
    {"seed 003 §五 代码实现 (lock() compares System.currentTimeMillis())",
     "种子文章 003 §五 代码实现（lock() 比较 System.currentTimeMillis()）"},
    {"B's wall clock runs ahead: it reads A's live timestamp as expired and GETSETs the lock",
     "B 的系统时钟走快了：它把 A 仍有效的时间戳当成已过期，对锁执行 GETSET"},
    {"B steals A's live lock: two holders (the expiry is judged by client clocks)",
     "B 抢走了 A 仍有效的锁：两个持有者（过期与否由客户端时钟判断）"},
    {"seed 004 §5 优化分布式锁_设置过期时间",
     "种子文章 004 §5 优化分布式锁_设置过期时间"},
    {"index1's work outlasts its lease: index2 and then index3 get in, and index1's late release runs "
     "while index3 holds",
     "index1 的业务比租约长：index2、然后 index3 先后进去，index1 迟到的释放发生在 index3 持有锁的时候"},
    {"index1's late DEL removes index3's lock (误删)",
     "index1 迟到的 DEL 删除了 index3 的锁（误删）"},
    {"seed 004 §6 优化分布式锁_防止误删除",
     "种子文章 004 §6 优化分布式锁_防止误删除"},
    {"index1 checks that the lock is its own, the lock expires, index2 takes it, index1 deletes",
     "index1 检查锁是自己的，锁过期，index2 拿到锁，index1 删除"},
    {"index1 deletes index2's lock (误删)",
     "index1 删除了 index2 的锁（误删）"},
    {"seed 004 §7 优化分布式锁_LUA脚本保证删除的原子性",
     "种子文章 004 §7 优化分布式锁_LUA脚本保证删除的原子性"},
    {"check_then_delete_race again with the compare-and-delete in one Lua script",
     "再讲一遍 check_then_delete_race，这次比较和删除在同一个 Lua 脚本里"},
    {"seed 004 §8 优化分布式锁_可以重入",
     "种子文章 004 §8 优化分布式锁_可以重入"},
    {"the holder calls a method that takes the same lock again (testLock -> testSubLock)",
     "持有者调用一个再次获取同一把锁的方法（testLock -> testSubLock）"},
    {"the nested call waits for a lock its own caller holds: not reentrant (不可重入)",
     "嵌套调用在等一把被自己的调用者持有的锁：不可重入"},
    {"seed 004 §9 优化分布式锁_自动续期; seed 000 §二.2.3 加鎖成功之后的鎖續約",
     "种子文章 004 §9 优化分布式锁_自动续期；种子文章 000 §二.2.3 加鎖成功之后的鎖續約"},
    {"A works longer than its 600 ms lease; B tries to get in",
     "A 的工作比它 600 ms 的租约长；B 试图进去"},
    {"the lease lapses under A, B acquires: two holders (锁续期 stops with the process)",
     "租约在 A 手里过期，B 拿到锁：两个持有者（锁续期随进程一起停止）"},
    {"A works longer than its 600 ms lease and nothing renews it (no watchdog); B tries to get in",
     "A 的工作比它 600 ms 的租约长，而没有任何东西为它续期（没有看门狗）；B 试图进去"},
    {"A works longer than its 600 ms lease; its watchdog renews the lease every 200 ms; B tries to get "
     "in",
     "A 的工作比它 600 ms 的租约长；它的看门狗每 200 ms 续期一次；B 试图进去"},
    {"then A's whole process is SIGSTOPped (a GC pause, a frozen VM)",
     "然后 A 的整个进程被 SIGSTOP（好比 GC 停顿、虚拟机被冻结）"},
    {"seed 000 §二.2.5 鎖競爭（其他線程加鎖失敗）",
     "种子文章 000 §二.2.5 鎖競爭（其他線程加鎖失敗）"},
    {"W1 and W2 wait while H holds the lock; H releases",
     "H 持有锁时 W1 和 W2 在等；H 释放锁"},
    {"the waiters learn of the release only by polling again (no unlock message)",
     "等待者只有再次轮询才知道锁已释放（没有解锁消息）"},
    {"polling shown",
     "轮询重现（polling shown）"},
    {"wake-up shown",
     "消息唤醒重现（wake-up shown）"},
    {"observed",
     "看到了"},
    {"the waiters were woken by the unlock message",
     "等待者被解锁消息唤醒"},
    {"polling",
     "轮询"},
    {"a wake-up by the unlock message",
     "由解锁消息唤醒"},
    {"seed 001 §二.5 Redis分布式锁的缺点; seed 004 §10 优化分布式锁_Redlock算法",
     "种子文章 001 §二.5 Redis分布式锁的缺点；种子文章 004 §10 优化分布式锁_Redlock算法"},
    {"A locks on the master, the master dies before replicating, the replica is promoted, B locks",
     "A 在主节点上加锁，主节点在复制之前宕机，从节点被提升为主节点，B 加锁"},
    {"A and B both hold the lock after the failover (主从切换)",
     "主从切换之后 A 和 B 都持有锁"},
    {"with the guard A's acquire waits for a replica (WAIT 1 100), gets none, and is undone",
     "有了保护，A 加锁后等待一个从节点确认（WAIT 1 100），没有等到，加锁被撤销"},
    {"seed 004 §10 优化分布式锁_Redlock算法",
     "种子文章 004 §10 优化分布式锁_Redlock算法"},
    {"5 masters N1-N5, 2 crash; A still gets 3 of 5 votes, B is refused until A releases",
     "5 个主节点 N1-N5，2 个崩溃；A 仍拿到 5 票中的 3 票，B 被拒绝，直到 A 释放"},
    {"after A's release B holds with the same 3 live masters: 2 of 5 down cost no availability",
     "A 释放后，B 用同样 3 个存活的主节点拿到了锁：5 个中坏 2 个并不影响可用性"},
    {"B acquires beside A: two holders",
     "B 和 A 同时拿到锁：两个持有者"},
    {"seed 004 §10 优化分布式锁_Redlock算法; redis.io distlock, crash-recovery",
     "种子文章 004 §10 优化分布式锁_Redlock算法；redis.io 的 distlock 页面，崩溃恢复一节"},
    {"client A holds on nodes N1, N2, N3; N3 crashes and comes back empty; client Z asks all five",
     "客户端 A 在节点 N1、N2、N3 上持有锁；N3 崩溃后空着回来；客户端 Z 向五个节点都申请"},
    {"Z acquires while A's validity lasts: two holders",
     "Z 在 A 的有效期内拿到锁：两个持有者"},
    {"with the delayed restart N3 stays down until A's validity is over",
     "延迟重启：N3 一直停着，直到 A 的有效期结束"},
    {"Kleppmann 2016, \"How to do distributed locking\" (not in the seeds; seed 004 §9 优化分布式锁_自动续期 "
     "poses the problem)",
     "Kleppmann 2016，《How to do distributed locking》（不在种子文章中；种子文章 004 §9 优化分布式锁_自动续期"
     " 提出了这个问题）"},
    {"client 1 pauses past its lease, client 2 locks and writes, client 1 wakes and writes",
     "client 1 停顿超过租约，client 2 加锁并写入，client 1 醒来后写入"},
    {"client 1's late write lands over client 2's: a lost update",
     "client 1 迟到的写入覆盖了 client 2 的：丢失更新"},
    // check_then_delete_race and lua_delete_fixes_it
    {"its work is short; it begins its release well within the {} ms lease",
     "它的工作很短；在 {} ms 租约内早早开始释放"},
    {"its work is short, but this machine is loaded: it begins its release {} ms after it asked for the lock",
     "它的工作很短，但这台机器负载很重：它在请求锁 {} ms 之后才开始释放"},
    {"index1 is parked at step point {}: its release stalls before it sends anything, for longer than "
     "the lease (a GC pause, a slow network)",
     "index1 停在步骤点 {}：它的释放在发出任何命令之前卡住，卡得比租约还长（GC 停顿、网络慢）"},
    {"index1 is parked at step point {}: its release stalls between its GET (\"mine\") and its DEL, for "
     "longer than the lease (a GC pause, a slow network)",
     "index1 停在步骤点 {}：它的释放卡在 GET（\"是我的\"）和 DEL 之间，卡得比租约还长（GC 停顿、网络慢）"},
    {"index1's key expired",
     "index1 的 key 过期"},
    {"the lock key is gone while index2 still believes it holds it",
     "锁 key 没了，而 index2 仍以为自己持有锁"},
    {"index2's lock is still there",
     "index2 的锁还在"},
    {"a third client could now enter beside index2",
     "现在第三个客户端可以和 index2 同时进去"},
    {"the compare-and-delete saw another token and left the key",
     "比较并删除看到的是别人的令牌，没有动 key"},
    {"release is one script, EVALSHA'd with KEYS[1] = lock, ARGV[1] = the holder's token:",
     "释放是一个脚本，用 EVALSHA 执行，KEYS[1] = lock，ARGV[1] = 持有者的令牌："},
    {"the seed's script returns 0 for both 'not yours' and 'no key'; ours answers -1 for the latter",
     "种子文章的脚本在“不是你的”和“没有 key”两种情况下都返回 0；我们的脚本对后者返回 -1"},
    {"release is two commands: GET lock, compare with our token, then DEL lock",
     "释放是两条命令：GET lock，与自己的令牌比较，然后 DEL lock"},
    {"index1 is parked at step point {} (nothing sent yet: the whole check-and-delete is still ahead); "
     "its release stalls there for longer than the lease",
     "index1 停在步骤点 {}（还什么都没发：整个检查并删除都在后面）；它的释放在这里卡得比租约还长"},
    {"index1 is parked at step point {} (its GET said: mine; the DEL is still ahead); its release stalls "
     "there for longer than the lease",
     "index1 停在步骤点 {}（它的 GET 说：是我的；DEL 还在后面）；它的释放在这里卡得比租约还长"},
    {"the script's GET saw index2's token, so it returned 0 (not_owner) and never ran its DEL",
     "脚本里的 GET 看到的是 index2 的令牌，所以返回 0（not_owner），根本没有执行 DEL"},
    {"the check was stale by the time the DEL ran: a third client could enter",
     "DEL 执行时，检查的结果已经过时：第三个客户端可以进去"},
    {"check and delete ran as one script: index2's lock survived",
     "检查和删除作为一个脚本执行：index2 的锁保住了"},
    // setnx_crash_deadlock, setnx_expire_gap and their second act (Scenario's b_tries_after_crash)
    // pubsub_wakeup: the acquires after H's release, in the order the server ran them
    {"{0}'s acquire (step {1}) was refused although its reply is printed before {2}'s (step {3}): the server ran "
     "{2}'s first. Its log shows H's release freeing the key, then {2}'s acquire taking it; {0}'s was sent after the "
     "release, and a refusal means the key was there again",
     "{0} 的加锁（第 {1} 步）被拒绝，虽然它的回复打印在 {2} 的（第 {3} 步）之前：服务器先执行的是 {2} 的。服务器的记录显示 "
     "H 的释放先让键消失，然后 {2} 的加锁把它占住；{0} 的请求是在释放之后发出的，被拒绝说明键又已存在"},
    {"{0}'s acquire (step {1}) was refused: the server had run {2}'s (step {3}) first, and the key was {2}'s",
     "{0} 的加锁（第 {1} 步）被拒绝：服务器先执行了 {2} 的（第 {3} 步），键已是 {2} 的"},
    {"{0}'s acquire (step {1}) ran before {2}'s (step {3}) and was refused",
     "{0} 的加锁（第 {1} 步）在 {2} 的（第 {3} 步）之前执行，被拒绝"},
    {"{0}'s refused acquire (step {1}) and {2}'s acquire (step {3}) cannot be ordered from what was recorded: their "
     "replies crossed, and the server's log does not place them",
     "{0} 被拒绝的加锁（第 {1} 步）和 {2} 的加锁（第 {3} 步）无法根据记录排出先后：两个回复交错，服务器的记录也定不了它们的位置"},
    {"A's process died at {}: after it left its critical section, before it sent its release (kill -9, a "
     "crash); no finally block runs in a process that is gone, so A never releases",
     "A 的进程在步骤点 {} 死掉：它已离开临界区，释放还没有发出（kill -9、崩溃）；进程已经不在，finally 块不会执行，"
     "所以 A 永远不会释放"},
    {"the key has no TTL: only a DEL can free it, and its owner is gone",
     "key 没有 TTL：只有 DEL 能释放它，而它的主人已经不在了"},
    {"the key carries a lease: the server will free it",
     "key 带着租约：服务端会释放它"},
    {"gives up: {} ms of SETNX answered 0",
     "放弃：{} ms 里 SETNX 一直返回 0"},
    {"the lease freed the crashed holder's lock; B got in after {} ms",
     "租约释放了崩溃持有者的锁；B 等了 {} ms 后进去"},
    {"after {} ms the crashed holder's key still has PTTL -1: every client waits forever (死锁)",
     "{} ms 之后，崩溃持有者的 key 仍然是 PTTL -1：所有客户端都将永远等待（死锁）"},
    {"acquired with one command: value and TTL are set together, A dies only now",
     "用一条命令拿到锁：值和 TTL 一起设置，A 直到现在才死"},
    {"SETNX happened, EXPIRE never did: the key has no TTL",
     "SETNX 执行了，EXPIRE 从未执行：key 没有 TTL"},
    {"the key carries its lease from the start",
     "key 从一开始就带着租约"},
    {"gives up after {} ms",
     "{} ms 后放弃"},
    {"the key expired on the server; B got in after {} ms",
     "key 在服务端过期；B 等了 {} ms 后进去"},
    {"after {} ms the key still has PTTL -1: deadlock (死锁)",
     "{} ms 之后 key 仍然是 PTTL -1：死锁"},
    // getset_c0_c1_c2 and getset_clock_skew
    {"hangs in its critical section past the timestamp it wrote (it never releases)",
     "卡在临界区里，超过了自己写下的时间戳（它永远不释放）"},
    {"C0's timestamp has passed on the wall clock",
     "C0 的时间戳按系统时钟已经过去"},
    {"C1 read C0's expired stamp and is parked before its GETSET",
     "C1 读到了 C0 过期的时间戳，停在它的 GETSET 之前"},
    {"the wall clock moved on a millisecond",
     "系统时钟又走了一毫秒"},
    {"C2 read the same expired stamp and is parked before its GETSET: both judged C0's lock expired",
     "C2 读到了同一个过期的时间戳，停在它的 GETSET 之前：两者都判断 C0 的锁已过期"},
    {"C1's GETSET returned C0's stamp, equal to what it read: C1 holds the lock",
     "C1 的 GETSET 返回 C0 的时间戳，与它读到的相同：C1 持有锁"},
    {"C1's GETSET did not return C0's stamp",
     "C1 的 GETSET 没有返回 C0 的时间戳"},
    {"C2's GETSET returned C1's stamp, not the one it read: the compare sends C2 back to waiting",
     "C2 的 GETSET 返回 C1 的时间戳，而不是它读到的那个：比较让 C2 回去继续等待"},
    {"without `oldValueStr.equals(currentValueStr)` that non-nil reply would be a win: C1 and C2 both "
     "inside (§六.2)",
     "如果没有 `oldValueStr.equals(currentValueStr)`，这个非 nil 的回复就算赢：C1 和 C2 会同时在里面（§六.2）"},
    {"C1 holds the lock, but the key carries C2's expiry, {} ms after the one C1 wrote",
     "C1 持有锁，但 key 里是 C2 的超时时间，比 C1 写的晚 {} ms"},
    {"the key still carries C1's expiry",
     "key 里仍是 C1 的超时时间"},
    {"exactly one winner (C1); its expiry {} was overwritten by the loser's {}",
     "恰好一个赢家（C1）；它的超时时间 {} 被输家的 {} 覆盖"},
    {"C1's expiry survived C2's GETSET",
     "C1 的超时时间在 C2 的 GETSET 之后仍然保留"},
    {"works; its lock is good for another {} s by A's clock",
     "工作中；按 A 的时钟，它的锁还有 {} s 有效"},
    {"B's wall clock is {} s ahead of A's and of the server's",
     "B 的系统时钟比 A 和服务端快 {} s"},
    {"believes it holds the lock",
     "以为自己持有锁"},
    {"finds the lock busy and backs off",
     "发现锁被占用，退回去等待"},
    {"B judged A's live timestamp expired by its own clock and took the lock while A was inside",
     "B 按自己的时钟判断 A 仍有效的时间戳已过期，在 A 还在里面时拿走了锁"},
    {"the server counts the lease; B's clock never entered the decision",
     "租约由服务端计时；B 的时钟根本没有参与判断"},
    // ttl_shorter_than_work
    {"its business logic takes longer than its lease",
     "它的业务逻辑比租约长"},
    {"finishes its work, long after its lease ran out",
     "完成工作，此时租约早已过期"},
    {"index1 is inside",
     "index1 已在里面"},
    {"the lease as the server counts it: {} ms",
     "服务端计时的租约：{} ms"},
    {"index3 will ask for a {} ms lease: it only has to still hold when index1 releases, also on a loaded "
     "machine (nobody waits for it to run out)",
     "index3 将申请 {} ms 的租约：只要 index1 释放时它仍持有锁即可，负载高的机器上也一样（没人等它过期）"},
    {"got in: index1's lease lapsed while index1 still works",
     "进去了：index1 的租约在它还在工作时过期了"},
    {"finishes its work, after index1",
     "在 index1 之后完成工作"},
    {"index2 is inside",
     "index2 已在里面"},
    {"got in: index2's lease lapsed while index2 still works",
     "进去了：index2 的租约在它还在工作时过期了"},
    {"index3 still works, but its lock is gone: a fourth client could enter now",
     "index3 还在工作，但它的锁没了：现在第四个客户端可以进去"},
    {"index3's lock is still there",
     "index3 的锁还在"},
    {"index1, index2 and index3 were inside at once regardless: the lease ran out under slow holders "
     "(the race watchdog_renewal and gc_pause_fencing address)",
     "无论如何，index1、index2 和 index3 曾同时在里面：租约在慢的持有者手里过期了（这是 watchdog_renewal "
     "和 gc_pause_fencing 讲的竞态）"},
    {"finishes its work, last",
     "最后一个完成工作"},
    {"index1's blind DEL deleted index3's lock, as in the seed",
     "index1 不加判断的 DEL 删除了 index3 的锁，与种子文章所说一致"},
    {"index1's late release was refused (not its token); index3's lock survived",
     "index1 迟到的释放被拒绝（不是它的令牌）；index3 的锁保住了"},
    // reentrancy
    {"calls testSubLock(), which takes the same lock with the same owner field (uuid-1:<thread>)",
     "调用 testSubLock()，它用同一个持有者字段（uuid-1:<线程>）再次获取同一把锁"},
    {"calls testSubLock(), which takes the same lock as owner uuid-1 again; each acquisition's token "
     "is uuid-1 plus fresh bits, and SET NX refuses any value while the key exists",
     "调用 testSubLock()，它以持有者 uuid-1 再次获取同一把锁；每次加锁的令牌都是 uuid-1 加上新的随机位，"
     "而 key 存在时 SET NX 拒绝任何值"},
    {"entered again: the lock counts this owner's holds",
     "再次进入：锁记录这个持有者的持有次数（可重入）"},
    {"gave up after {} ms: it waited for a lock its own caller holds",
     "{} ms 后放弃：它在等一把被自己的调用者持有的锁"},
    {"SET NX refuses any value while the key exists, the seed's same uuid included",
     "只要 key 存在，SET NX 就拒绝任何值，种子文章里相同的 uuid 也一样"},
    {"entered twice, released twice: still_held, then released",
     "进入两次，释放两次：先 still_held，再 released"},
    {"the nested call gave up on its own lock; without a bound it would wait until the {} s lease ran "
     "out, then get the lock with a new token while its caller still believes it holds the old one",
     "嵌套调用在自己的锁上放弃了；如果不设上限，它会一直等到 {} s 的租约过期，然后用新令牌拿到锁，而它的调用者"
     "仍以为自己持有旧的那把"},
    // watchdog_renewal
    {"works; the work takes longer than the {} ms lease",
     "工作中；工作时间比 {} ms 的租约长"},
    {"releases => {}; its watchdog found the lease lost {} time(s)",
     "释放 => {}；它的看门狗发现租约丢失 {} 次"},
    {"try_acquire => {} while A works on",
     "try_acquire => {}，A 仍在工作"},
    {"no watchdog: nothing renewed the lease while A was still working",
     "没有看门狗：A 还在工作时，没有任何东西为租约续期"},
    {"SIGSTOP A (pid {}): every thread of A stops, its watchdog too",
     "SIGSTOP A（pid {}）：A 的所有线程都停了，看门狗也停了"},
    {"SIGSTOP A (pid {}): every thread of A stops",
     "SIGSTOP A（pid {}）：A 的所有线程都停了"},
    {"A's key expired",
     "A 的 key 过期"},
    {"A is still inside its critical section: two holders",
     "A 仍在临界区里：两个持有者"},
    {"SIGCONT A: it carries on as if nothing happened",
     "SIGCONT A：它若无其事地继续运行"},
    {"A's watchdog renewed the lease every 200 ms while A worked; B was refused",
     "A 工作期间，它的看门狗每 200 ms 为租约续期；B 被拒绝"},
    {"the watchdog renewed A's lease while A ran, and stopped when A stopped",
     "看门狗在 A 运行时为它续期，A 停下时它也停了"},
    {"a fixed lease ran out under a slow holder, paused or not",
     "固定的租约在慢的持有者手里过期，不管它是否被暂停"},
    // pubsub_wakeup
    {"H holds the lock",
     "H 持有锁"},
    {"{} sleeps on the unlock channel",
     "{} 在解锁 channel 上睡眠等待"},
    {"{} was refused twice",
     "{} 被拒绝了两次"},
    {"{}: {} round trips to acquire, waited {} ms, handoff {} ms after the release it waited for",
     "{}：加锁用了 {} 次往返，等了 {} ms，在它等待的那次释放之后 {} ms 接手"},
    {"no message was published; each waiter found the lock free on a retry (every {} ms)",
     "没有发布任何消息；每个等待者都是在重试时（每 {} ms 一次）才发现锁空了"},
    {"each release PUBLISHed on the lock's channel and the waiters woke on the message, before the {} "
     "ms PTTL they were told to sleep",
     "每次释放都在锁的 channel 上 PUBLISH，等待者被消息唤醒，早于让它们睡眠的 {} ms PTTL"},
    // failover_loses_lock
    {"master {0}, replica {1} replicating through a proxy; the link is in sync",
     "主节点 {0}，从节点 {1} 通过代理复制；复制链路已同步"},
    {"the replication stream is held in the proxy: writes reach the master only",
     "复制流被扣在代理里：写入只到达主节点"},
    {"try_acquire => {}",
     "try_acquire（尝试加锁）=> {}"},
    {" ({})",  // what a lock said after its outcome (Scenario::attempt)
     "（{}）"},
    {"{} bytes of replication stream held: the replica has not seen them",
     "扣住了 {} 字节的复制流：从节点没有看到它们"},
    {"the master is SIGKILLed, the held bytes die with it, the replica is promoted (REPLICAOF NO ONE)",
     "主节点被 SIGKILL，扣住的字节随之消失，从节点被提升为主节点（REPLICAOF NO ONE）"},
    {"B acquires without the guard: the promoted master has no replica to wait for",
     "B 加锁时不带保护：新主节点没有可以等待的从节点"},
    {"try_acquire on the new master => {}",
     "在新主节点上 try_acquire => {}"},
    {"A still believes it holds the lock, and so does B",
     "A 仍以为自己持有锁，B 也是"},
    {"only B holds the lock: A was told that its acquire did not count {} ms after it asked (WAIT waited "
     "for a replica, then the hold was undone), before the failover",
     "只有 B 持有锁：A 在申请后 {} ms 被告知加锁不算数（WAIT 先等待从节点，然后撤销持有），这发生在主从切换之"
     "前"},
    {"the acknowledged write was lost with the master",
     "已确认的写入随主节点一起丢失了"},
    {"WAIT 1 got no acknowledgement, so A's hold was undone and refused",
     "WAIT 1 没有得到确认，所以 A 的持有被撤销并拒绝"},
    // redlock_minority_down and redlock_restart_without_persistence
    {"masters N4 ({0}) and N5 ({1}) are SIGKILLed: 3 of 5 remain",
     "主节点 N4（{0}）和 N5（{1}）被 SIGKILL：5 个剩 3 个"},
    {"B counted a majority though A holds 3 of 5",
     "A 持有 5 票中的 3 票，B 却也数到了多数"},
    {"A holds with 3 of 5 votes; B got 0 for, 3 against, 2 unreachable",
     "A 以 5 票中的 3 票持有锁；B 得到 0 票赞成，3 票反对，2 个节点不可达"},
    {"nodes N4 and N5 are down while A acquires",
     "A 加锁时节点 N4 和 N5 宕机"},
    {"N4 and N5 are back (empty: they never saw A's key)",
     "N4 和 N5 回来了（空的：它们从没见过 A 的 key）"},
    {"node N3 crashes (SIGKILL); persistence is off, A's key on N3 is gone",
     "节点 N3 崩溃（SIGKILL）；没有开持久化，N3 上 A 的 key 没了"},
    {"{}: Z holds the lock",
     "{}：Z 持有锁"},
    {"{}: Z is refused",
     "{}：Z 被拒绝"},
    {"N3 still down",
     "N3 仍然宕机"},
    {"A's validity ran out (N3 stays down meanwhile)",
     "A 的有效期结束（这期间 N3 一直宕机）"},
    {"its validity is over: it stops using the lock",
     "它的有效期结束：不再使用这把锁"},
    {"N3 restarts after the TTL, empty",
     "N3 在 TTL 之后重启，空的"},
    {"N3 restarts at once, empty",
     "N3 立即重启，空的"},
    {"after N3's restart",
     "N3 重启之后"},
    {"A's validity has not run out: A still holds it too",
     "A 的有效期还没结束：A 也仍持有锁"},
    {"A's validity had run out before Z acquired: one holder at a time",
     "Z 加锁之前 A 的有效期已经结束：同一时间只有一个持有者"},
    {"N3 forgot A's key on restart: N3, N4 and N5 voted for Z",
     "N3 重启后忘了 A 的 key：N3、N4 和 N5 投票给了 Z"},
    {"N3 came back only after A's lease was over everywhere",
     "N3 直到 A 的租约在所有节点上都结束后才回来"},
    // gc_pause_fencing
    {"token {}",
     "令牌 {}"},
    {"no token",
     "不带令牌"},
    {"the fence counter {} is preset to 32, so that the tokens are 33 and 34 as in Kleppmann's figure",
     "栅栏计数器 {} 预先设为 32，这样令牌就是 33 和 34，与 Kleppmann 的图一致"},
    {"client 1's lease expired",
     "client 1 的租约过期"},
    {"read {} with {}; a GC pause begins",
     "读到 {0}（{1}）；GC 停顿开始"},
    {"wakes up, still believing it holds the lock; writes {}",
     "醒来，仍以为自己持有锁；写入 {}"},
    {"the write landed",
     "写入成功"},
    {"the resource refused the write: its token is stale",
     "资源拒绝了这次写入：它的令牌已过时"},
    {"read {}, wrote {} with {}",
     "读到 {0}，写入 {1}（{2}）"},
    {"two increments were made under the lock; the counter reads {}",
     "在锁的保护下做了两次加 1；计数器读数为 {}"},
    {"one increment landed (client 2's), the stale one was refused; the counter reads {}",
     "只有一次加 1 成功（client 2 的），过时的那次被拒绝；计数器读数为 {}"},
    {"the counter lost client 2's increment (expected 2, got {})",
     "计数器丢失了 client 2 的加 1（预期 2，实际 {}）"},
    {"the stale token 33 was refused after the resource saw 34; client 2's write stands and client 1 "
     "knows its update did not happen",
     "资源见过 34 之后，过时的令牌 33 被拒绝；client 2 的写入保留下来，client 1 知道自己的更新没有发生"},
    // counter_demo's table (scenarios/counter_demo/counter_demo.cpp)
    {"seed 004 §11: {} requests, {} at a time, counter starts at 1, {} ms between GET and SET",
     "种子文章 004 §11：共 {} 个请求，每次 {} 个并发，计数器从 1 开始，GET 与 SET 之间隔 {} ms"},
    {"lock", "锁"},
    {"expected", "预期"},
    {"got", "实际"},
    {"requests", "请求"},
    {"article", "文章数据"},
    {"lesson", "课程要点"},
    {"no lock", "无锁"},
    {"local mutex, 1 instance", "本地锁，1 个实例"},
    {"local mutex, 3 instances", "本地锁，3 个实例"},
    {"{}, {} instances", "{}，{} 个实例"},
    {"106 (from 6)", "106（从 6 开始）"},
    {"loses updates", "丢失更新"},
    {"exactly 1 + requests", "恰好是 1 + 请求数"},
    {"as the lesson says", "与课程所说一致"},
    {"NOT as the lesson says", "与课程所说不符"},
    {"verdict: every row as the lesson says", "结论：每一行都与课程所说一致"},
    {"verdict: some row differs from the lesson", "结论：有一行与课程所说不符"},
    // Usage errors (stderr, exit 2; scenario.cpp) and a story that could not be told (die(), must():
    // stderr, exit 1). tests/story_errors_test.py --catalog finds a key missing here.
    {"--lock {0}: this story is told with {1}", "--lock {0}：这个故事只能用这些锁来讲：{1}"},
    {"the command line is not right ({}); --help lists every option", "命令行有误（{}）；--help 列出全部选项"},
    {"failed: {}", "失败：{}"},
    {"--node-timeout-ms must be below --ttl-ms", "--node-timeout-ms 必须小于 --ttl-ms"},
    {"unknown lock '{}' (known: {})", "没有叫 '{}' 的锁（已知的有：{}）"},
    {"starting redis-server", "启动 redis-server"},
    {"connecting the observer's probe", "连接观察者的探针"},
    {"starting the keyspace feed", "启动 keyspace 事件订阅"},
    {"starting {} masters", "启动 {} 个主节点"},
    {"making the lock {}", "创建锁 {}"},
    {"restarting {}", "重启 {}"},
    {"master and replica", "启动主节点和副本"},
    {"fail over", "主从切换"},
    {"fork A", "fork 出 A 的进程"},
    {"SIGSTOP A", "用 SIGSTOP 暂停 A"},
    {"preset the fence counter", "预设 fencing 计数器"},
    {"client {} reads", "客户端 {} 读取"},
    {"client {} writes", "客户端 {} 写入"},
    {"read the counter", "读取计数器"},
    {"waited {} ms, but never: {}", "等了 {} ms，始终没有等到：{}"},
    {"{} could not acquire a free lock", "{} 没能拿到一把空闲的锁"},
    {"{} could not take the expired lock", "{} 没能拿到已过期的锁"},
    {"{} never reached {}", "{} 始终没有到达步骤点 {}"},
    {"{} never got in", "{} 始终没能进入临界区"},
    {"{} is not a Redlock: this story counts its votes", "{} 不是 Redlock：这个故事要数它的票"},
    {"{} never got the lock", "{} 始终没有拿到锁"},
    {"A's key vanished", "A 的 key 不见了"},
    {"A's release went through: it never reached {}", "A 的释放完成了：它始终没有到达步骤点 {}"},
    {"A acquired without reaching {}", "A 没有经过步骤点 {} 就加锁成功了"},
    {"A crashed without leaving a key", "A 崩溃了，却没有留下 key"},
    {"A did not finish its story", "A 没有讲完它的故事"},
    {"A never acquired the free lock", "A 始终没有拿到空闲的锁"},
    {"A could not acquire on the master", "A 没能在主节点上加锁"},
    {"B could not acquire on the promoted replica", "B 没能在被提升的副本上加锁"},
    {"the guard let A acquire though no replica acknowledged", "没有副本确认，守卫却让 A 加锁成功了"},
    {"A did not get N1, N2 and N3", "A 没有拿到 N1、N2 和 N3"},
    {"A did not get the 3 votes of the live masters", "A 没有拿到 3 个存活主节点的票"},
    {"B did not get the lock after A released it", "A 释放之后，B 没有拿到锁"},
    {"B stayed out although the key has a TTL", "key 有 TTL，B 却一直进不来"},
    {"C0's key holds no timestamp", "C0 的 key 里没有时间戳"},
    {"C1 did not win the takeover", "C1 没有抢到过期的锁"},
    {"C2 won as well: the compare failed to keep it out", "C2 也抢到了：比较没能把它挡在外面"},
    {"Z got a majority with N3 down", "N3 宕机时 Z 却拿到了多数票"},
    {"Z could not acquire after A's validity ended", "A 的有效期结束之后，Z 没能加锁"},
    {"Z did not get N3, N4 and N5", "Z 没有拿到 N3、N4 和 N5"},
    {"a waiter slept its whole PTTL: the unlock message did not wake it", "有个等待者睡满了整个 PTTL：解锁消息没有唤醒它"},
    {"client 1 never paused", "客户端 1 始终没有暂停"},
    {"entered twice but released {}, then {}", "进入了两次，释放的结果却是 {}，然后是 {}"},
    {"index1 never released", "index1 始终没有释放"},
    {"index1's key has no lease", "index1 的 key 没有租约"},
    {"index1's release found no lock of index3's to delete: {}", "index1 的释放没有找到 index3 的锁可删：{}"},
    {"the resource refused the current holder", "资源拒绝了当前的持有者"},
    {"the unfenced write was refused", "没有 fencing 的写入却被拒绝了"},
    {"the watchdog did not keep the slow holder's lease", "看门狗没有保住慢持有者的租约"},
    // The --step-through prompts (step_through.cpp): the keys stay the keys.
    {"     [Enter] next step   [q Enter] play the rest ", "     [Enter] 下一步   [q Enter] 放完其余步骤 "},
    {"     [Enter] the verdict ", "     [Enter] 看结论 "},
};

const std::unordered_map<std::string_view, std::string_view>& chinese_of() {
  static const std::unordered_map<std::string_view, std::string_view> table = [] {
    std::unordered_map<std::string_view, std::string_view> map;
    for (const auto& message : kCatalog) map.emplace(message.en, message.zh);
    return map;
  }();
  return table;
}

}  // namespace

void set_language(Language language) { g_language = language; }
Language language() { return g_language; }

std::optional<Language> language_named(std::string_view name) {
  if (name == "en") return Language::en;
  if (name == "zh") return Language::zh;
  return std::nullopt;
}

const char* language_code(Language language) { return language == Language::zh ? "zh" : "en"; }

Language language_in_args(int argc, char** argv) {
  Language found = Language::en;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::optional<Language> named;
    if (arg == "--lang" && i + 1 < argc) named = language_named(argv[++i]);
    else if (arg.starts_with("--lang=")) named = language_named(arg.substr(7));
    if (named) found = *named;
  }
  return found;
}

const std::vector<Message>& message_catalog() { return kCatalog; }

std::string_view translated(std::string_view english) {
  if (g_language != Language::zh) return english;
  const auto found = chinese_of().find(english);
  return found == chinese_of().end() ? english : found->second;
}

namespace {

struct ErrorPattern {
  const char* en;  // an ECMAScript regex of the whole message; its groups are the values
  const char* zh;  // {0}, {1}, ... the groups in order
};

// The errors a story narrates (impls/replica_wait.cpp's WAIT guard), then the errors of the components
// below that a story reports when it cannot go on: an --html or --json target (support/files.cpp's
// output_target_problem, write_file_atomically) and starting a redis-server (servers/redis_server.cpp).
const ErrorPattern kErrors[] = {
    {R"(only (\d+) of (\d+) replica\(s\) acknowledged the lock within (\d+) ms; released it \(a failover could lose it\))",
     "{2} ms 内 {1} 个副本中只有 {0} 个确认了这把锁；已经释放它（主从切换可能会丢掉它）"},
    {R"(WAIT failed: (.*))", "WAIT 失败：{0}"},
    {R"(WAIT answered (.*))", "WAIT 的回答是 {0}"},
    {R"((--\w+): directory (.*) does not exist)", "{0}：目录 {1} 不存在"},
    {R"((--\w+): (.*) is a directory)", "{0}：{1} 是一个目录"},
    {R"((--\w+): cannot write into (.*))", "{0}：无法写入目录 {1}"},
    {R"(cannot write (.*) \((\w+)\): (.*))", "无法写入 {0}（{1}）：{2}"},
    {R"(cannot write (.*?): (.*))", "无法写入 {0}：{1}"},
    {R"(cannot start redis-server: (.*))", "无法启动 redis-server：{0}"},
    {R"(redis-server not found \(install it: (.*)\))", "找不到 redis-server（安装它：{0}）"},
    {R"(redis-server binary not executable: (.*))", "redis-server 不可执行：{0}"},
    {R"(LOCKLAB_REDIS_SERVER is not executable: (.*))", "LOCKLAB_REDIS_SERVER 指向的文件不可执行：{0}"},
    {R"(redis-server on port (\d+) exited at start: ([\s\S]*))", "端口 {0} 上的 redis-server 启动时就退出了：{1}"},
    {R"(redis-server on port (\d+) did not answer PING within (\d+) ms)",
     "端口 {0} 上的 redis-server 在 {1} ms 内没有回应 PING"},
};

}  // namespace

std::string translated_error(const std::string& english) {
  if (g_language != Language::zh) return english;
  for (const auto& pattern : kErrors) {
    std::smatch groups;
    if (!std::regex_match(english, groups, std::regex(pattern.en))) continue;
    std::vector<std::string> args;
    // A group may be an error itself ("cannot start redis-server: <why>"): shorter, so this ends.
    for (std::size_t i = 1; i < groups.size(); ++i) args.push_back(translated_error(groups[i].str()));
    return fill(pattern.zh, args);
  }
  return english;
}

}  // namespace locklab::harness
