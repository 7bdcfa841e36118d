// The token list flex- and re2c-generated lexers build in bench/fsm_tokens.py: records
// laid out as boostfsm's (start u64, end u64, kind u16), errors merged into runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

struct PfToken {
  uint64_t start, end;
  uint16_t kind;
};

extern std::vector<PfToken> pf_tokens;
extern size_t pf_pos;

inline void pf_emit(int kind, size_t length) {
  pf_tokens.push_back(PfToken{pf_pos, pf_pos + length, uint16_t(kind)});
  pf_pos += length;
}

inline void pf_skip(size_t length) { pf_pos += length; }

inline void pf_error(int kind) {
  if (!pf_tokens.empty() && pf_tokens.back().kind == kind && pf_tokens.back().end == pf_pos)
    ++pf_tokens.back().end;
  else
    pf_tokens.push_back(PfToken{pf_pos, pf_pos + 1, uint16_t(kind)});
  ++pf_pos;
}
