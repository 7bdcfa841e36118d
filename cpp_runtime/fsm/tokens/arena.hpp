// parafuse boostfsm runtime: spec and hspec chunks that write their tokens straight into
// the result (docs/fsm.md, "Token sets", token lists).
//
// The result is sized first for every chunk's expected tokens, each chunk getting a room
// of its own in it, in order (`place`, `room`): the first at the front, each next after
// the previous one's room. A chunk tokenizes into its room; once all entries are
// validated, the chunks are settled in order, each moved down to follow the previous
// one's last token (one memmove of the tokens behind the first chunk, on memory already
// written: no second list, no fresh pages for a copy).
//
// A chunk leaves its room for a list of its own (`tokens`, fsm/tokens/chunks.hpp) when the
// room is full (the rest goes on in the list) or it is re-run (rerun_chunk reads the old
// tokens from the list). Settling copies a list into the result; where a chunk's tokens
// would reach into a room not yet moved, every later chunk first leaves its room.
//
// Rooms: the sampled density of the whole span (fsm/tokens/list.hpp) for 1 MiB or more,
// else a quarter of a token per byte (short inputs then fill their rooms often, which
// costs little there, and keeps the way out of a room exercised by every test).
//
// Rooms spare a second copy of the tokens: lists of their own for every chunk but the
// first, copied after it at the end, would copy half the tokens again, onto fresh pages
// the kernel clears (35 MB for C at 32 MiB).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fsm/tokens/chunks.hpp"

namespace parafuse::fsm {
inline namespace v1 {

// Copy a chunk's tokens out of its room into its own list (placed = false).
template <class OutToken>
void leave_room(TokenChunk& chunk) {
  const OutToken* from = static_cast<const OutToken*>(chunk.arena) + chunk.place;
  chunk.tokens.clear();
  chunk.tokens.reserve(chunk.in_room);
  for (size_t i = 0; i < chunk.in_room; ++i)
    chunk.tokens.push_back(Token{from[i].start, from[i].end, from[i].kind});
  chunk.in_room = 0;
  chunk.leave_room = nullptr;
}

// Rooms in `out` for the chunks (resized to hold them all, without zeroing where
// OutToken's constructor writes nothing).
template <class OutToken>
void make_rooms(std::vector<TokenChunk>& chunks, size_t expected, size_t span,
                std::vector<OutToken>& out) {
  size_t place = 0;
  for (TokenChunk& chunk : chunks) {
    const size_t bytes = chunk.end - chunk.begin;
    chunk.room = expected ? size_t(double(expected) * double(bytes) / double(span)) + 256
                          : bytes / 4 + 16;
    chunk.place = place;
    place += chunk.room;
  }
  out.clear();
  reserve_on_huge_pages(out, place);
  out.resize(place);
  for (TokenChunk& chunk : chunks) chunk.arena = out.data();
}

// Tokenize a chunk from `entry` into its room (then its list, once the room is full),
// counting its tokens per kind.
template <class OutToken>
void run_chunk_in_room(Tokenizer& tokenizer, TokenChunk& chunk, size_t entry, size_t n,
                       uint32_t kind_count) {
  chunk.entry = entry;
  chunk.tokens.clear();
  chunk.counts.assign(kind_count, 0);
  chunk.leave_room = &leave_room<OutToken>;
  OutToken* room = static_cast<OutToken*>(chunk.arena) + chunk.place;
  size_t p = entry, count = 0;
  Token token;
  while (p < chunk.end && p < n) {
    p = tokenizer.next_token(p, token);
    if (token.kind == kSkipToken) continue;
    ++chunk.counts[token.kind];
    if (count < chunk.room) {
      room[count++] = OutToken{token.start, token.end, token.kind};
      continue;
    }
    if (chunk.leave_room) {
      chunk.in_room = count;
      leave_room<OutToken>(chunk);
    }
    chunk.tokens.push_back(token);
  }
  if (chunk.leave_room) chunk.in_room = count;
  chunk.exit = p;
}

// Move every chunk's tokens to follow the previous chunk's, in order, and size `out` to
// them; the counts per kind go to `counts`.
template <class OutToken>
void settle_rooms(std::vector<TokenChunk>& chunks, std::vector<OutToken>& out,
                  std::vector<uint64_t>& counts) {
  size_t end = 0;
  for (size_t k = 0; k < chunks.size(); ++k) {
    TokenChunk& chunk = chunks[k];
    const bool placed = chunk.leave_room != nullptr;
    const size_t size = placed ? chunk.in_room : chunk.tokens.size();
    size_t limit = out.size();  // the first room not yet moved
    for (size_t j = k + 1; j < chunks.size(); ++j)
      if (chunks[j].leave_room) {
        limit = chunks[j].place;
        break;
      }
    if (end + size > limit) {  // these tokens would overwrite a room: empty the later ones
      size_t total = end + size;
      for (size_t j = k + 1; j < chunks.size(); ++j) {
        if (chunks[j].leave_room) chunks[j].leave_room(chunks[j]);
        total += chunks[j].tokens.size();
      }
      if (total > out.size()) out.resize(total);
    }
    OutToken* base = out.data();
    if (placed) {
      if (end != chunk.place) std::copy(base + chunk.place, base + chunk.place + size, base + end);
      for (size_t kind = 0; kind < counts.size(); ++kind) counts[kind] += chunk.counts[kind];
    } else {
      for (size_t i = 0; i < size; ++i) {
        const Token& token = chunk.tokens[i];
        base[end + i] = OutToken{token.start, token.end, token.kind};
        ++counts[token.kind];
      }
    }
    end += size;
  }
  out.resize(end);
}

}  // namespace v1
}  // namespace parafuse::fsm
