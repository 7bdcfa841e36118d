// parafuse boostfsm runtime: the tables of one token set (a tokenizer DFA), read from the
// blob that emitters/fsm/token_blob.py writes: the byte classes are a view of the blob;
// the states are renumbered for the runtime when the blob is parsed, with their
// self-loops (fsm/tokens/accel.hpp), into tables the TokenTables own.
//
// Layout (little-endian): 16 u64 header slots (TokenSlot), then byte_class[256] u8,
// next[states << shift] u32 (rows of 1 << shift entries, each the next state's row offset
// `state << shift`), accept[states] i32 (the kind a token ending there has, kSkipKind for
// a skip rule, kNoKind for none), loop[states] u8 (1: a live non-accepting state on a
// cycle, where Reps' memo is kept). States are ordered: the dead state first (when there
// is one), live non-accepting states, then accepting states from `accept_floor` on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "fsm/tokens/accel.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr uint64_t kTokenBlobMagic = 0x314b4f544d534650ull;  // "PFSMTOK1"
constexpr int32_t kNoKind = -1;
constexpr int32_t kSkipKind = -2;
constexpr uint64_t kTokenUnknown = ~0ull;

enum class TokenSlot : size_t {
  magic, states, classes, shift, start, dead, accept_floor, kind_count, needs_memo, lookback,
  fall_median, fall_p90, fall_never_ppm, train_positions, count_ = 16
};

struct TokenTables {
  uint32_t states = 0, classes = 0, shift = 0;
  uint32_t start = 0;         // row offset of the start state
  uint32_t dead = ~0u;        // row offset of the dead state (~0u: none)
  uint32_t accept_floor = 0;  // row offset of the first accepting state
  uint32_t kind_count = 0;                      // non-skip kinds + error (the last)
  bool needs_memo = false;                      // some path can re-read without bound
  uint32_t lookback = 64;
  uint64_t fall_median = kTokenUnknown, fall_p90 = kTokenUnknown;  // bytes to fall in step
  uint64_t fall_never_ppm = kTokenUnknown, train_positions = 0;
  const uint8_t* byte_class = nullptr;  // [256]
  const uint32_t* next = nullptr;       // [states * classes]
  const int32_t* accept = nullptr;      // [states]
  const uint8_t* loop = nullptr;        // [states]
  uint32_t loop_low = 0, loop_high = 0;  // row offsets of the states with a self-loop
  const uint8_t* self_loop = nullptr;   // [states] a TokenLoop
  const std::array<uint8_t, 4>* self_loop_exits = nullptr;  // [states]
  std::shared_ptr<const TokenLayout> layout;  // owns next, accept, loop and the two above

  uint16_t error_kind() const { return uint16_t(kind_count - 1); }
};

inline TokenTables parse_token_tables(const uint8_t* blob, size_t size) {
  const auto slot = [&](TokenSlot which) {
    uint64_t value;
    std::memcpy(&value, blob + 8 * size_t(which), 8);
    return value;
  };
  const size_t header = 8 * size_t(TokenSlot::count_);
  if (size < header + 256 || reinterpret_cast<uintptr_t>(blob) % 8 != 0 ||
      slot(TokenSlot::magic) != kTokenBlobMagic)
    throw std::runtime_error("token tables: not a parafuse token-set blob");
  TokenTables t;
  t.states = uint32_t(slot(TokenSlot::states));
  t.classes = uint32_t(slot(TokenSlot::classes));
  t.shift = uint32_t(slot(TokenSlot::shift));
  const uint64_t floor = slot(TokenSlot::accept_floor);
  const uint64_t start = slot(TokenSlot::start), dead = slot(TokenSlot::dead);
  t.kind_count = uint32_t(slot(TokenSlot::kind_count));
  t.needs_memo = slot(TokenSlot::needs_memo) != 0;
  t.lookback = uint32_t(slot(TokenSlot::lookback));
  t.fall_median = slot(TokenSlot::fall_median);
  t.fall_p90 = slot(TokenSlot::fall_p90);
  t.fall_never_ppm = slot(TokenSlot::fall_never_ppm);
  t.train_positions = slot(TokenSlot::train_positions);
  if (t.shift > 8 || t.states == 0 || t.states > (1u << 22))
    throw std::runtime_error("token tables: inconsistent header");
  const size_t cells = size_t(t.states) << t.shift;
  if (t.classes == 0 || t.classes > (1u << t.shift) || start >= t.states || floor > t.states ||
      (dead != ~0ull && dead >= t.states) || t.kind_count == 0 || t.kind_count > 0xFFFF ||
      size != header + 256 + 4 * cells + 4 * size_t(t.states) + t.states)
    throw std::runtime_error("token tables: inconsistent header");
  t.byte_class = blob + header;
  const auto* next = reinterpret_cast<const uint32_t*>(blob + header + 256);
  const auto* accept = reinterpret_cast<const int32_t*>(blob + header + 256 + 4 * cells);
  const uint8_t* loop = blob + header + 256 + 4 * cells + 4 * size_t(t.states);
  for (size_t cell = 0; cell < cells; ++cell)
    if (next[cell] >= (t.states << t.shift) || next[cell] % (1u << t.shift) != 0)
      throw std::runtime_error("token tables: a transition to no state");
  auto layout = std::make_shared<const TokenLayout>(lay_out_token_states(
      t.states, t.shift, uint32_t(start << t.shift),
      dead == ~0ull ? ~0u : uint32_t(dead << t.shift), next, accept, loop, t.byte_class));
  t.start = layout->start, t.dead = layout->dead, t.accept_floor = layout->accept_floor;
  t.loop_low = layout->loop_low, t.loop_high = layout->loop_high;
  t.next = layout->next.data(), t.accept = layout->accept.data(), t.loop = layout->loop.data();
  t.self_loop = layout->mode.data(), t.self_loop_exits = layout->exits.data();
  t.layout = std::move(layout);
  return t;
}

}  // namespace v1
}  // namespace parafuse::fsm
