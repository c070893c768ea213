#include "nemesis/held_contender.h"

#include "history/history.h"

namespace locklab::harness {

using std::chrono::milliseconds;

StepHook HeldContenderFault::client_step_hook(int client) {
  StepHook holder = gate_.hook(client);
  StepHook contender = reader_gate_.hook(client);
  if (!holder) return contender;
  return [holder = std::move(holder), contender = std::move(contender)](std::string_view at) {
    holder(at);
    contender(at);
  };
}

void HeldContenderFault::hold_contender(const NemesisContext& context, int holder) {
  if (context.history != nullptr) holder_records_ = context.history->slot(holder).records.load();
  reader_gate_.arm(holder);
}

// While the contender's gate is armed, "got in" means its read is in: it
// parked there (or two acquisitions passed, one of them over). Letting the
// holder go as soon as the contender was inside could let it write before the
// contender read, if the contender was slow to get there.
//
// A holder parked after its own accepted read (park=read) waits for a
// contender's accepted read alone: a contender whose read the fenced resource
// refused (its token below the holder's) has not got in, however many of them
// acquired, and letting the holder go on their count would let it write and
// leave before a contender that draws its token again gets in.
bool HeldContenderFault::overtaken(const NemesisContext& context, int holder) const {
  if (!reader_gate_.ever_armed() || reader_gate_.released()) return GatedFault::overtaken(context, holder);
  if (reader_gate_.parked() >= 0) return true;
  if (gate_.point() == kCsRead) return false;
  return acquisitions_by_others(context, holder) - others_before_ >= 2;
}

// The holder's parked section is over: a later record of its own began, its
// last one is no longer inside, or it died. Read from the records, not from
// the live `inside` flag: a holder that left and re-entered between two ticks
// (a blind DEL lets it back at once) is seen to have left.
bool HeldContenderFault::holder_left(const NemesisContext& context, int holder) const {
  if (context.history == nullptr) return true;
  const ClientSlot& slot = context.history->slot(holder);
  if (slot.records.load() > holder_records_ || slot.died_ns.load() != 0) return true;
  const auto stage = context.history->last_stage(holder);
  return !stage || *stage != CsStage::inside;
}

void HeldContenderFault::let_contender_go(const NemesisContext& context, int holder, milliseconds patience) {
  if (!reader_gate_.ever_armed() || reader_gate_.released()) return;
  const int contender = reader_gate_.parked();
  const bool left = holder_left(context, holder);
  if (contender >= 0 && !reader_noted_) {
    reader_noted_ = true;
    if (left) {
      note(context, "client " + std::to_string(contender) + " read the resource after client " +
                        std::to_string(holder) + "'s section was over: not held");
      return reader_gate_.release();
    }
    note(context, "client " + std::to_string(contender) + " read the resource inside; it waits there until client " +
                      std::to_string(holder) + "'s section is over");
  }
  if (!gate_.released()) return;
  const auto now = std::chrono::steady_clock::now();
  if (holder_let_go_ == std::chrono::steady_clock::time_point{}) holder_let_go_ = now;
  if (!left && now - holder_let_go_ <= patience) return;
  if (contender >= 0)
    note(context, left ? "client " + std::to_string(holder) + " left its section: client " +
                             std::to_string(contender) + " goes on to its write"
                       : "client " + std::to_string(holder) + " still inside " + ms_text(patience) +
                             " after it was let go: client " + std::to_string(contender) + " let go");
  reader_gate_.release();
}

}  // namespace locklab::harness
