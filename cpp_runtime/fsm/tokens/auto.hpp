// parafuse boostfsm runtime: what `auto` runs for a token set, measured (docs/fsm.md,
// "Token sets", what auto picks).
//
// On an input of at least kTokenProbeInput bytes, auto measures the input itself at
// kTokenProbes positions spread over it (each where a chunk could begin), at a cost of a
// few KiB of tokenizing per position:
//   wrong   the lookback guess (spec and hspec's entry) is not the first true token
//           boundary at or after the position (the truth: the tokenization started
//           kTokenProbeReach bytes earlier, which has almost always fallen in step)
//   within  the true boundary lies within kEnumWidth bytes (enum's branches cover it)
//   fall    bytes a tokenization started at a wrong start (the position, or the byte after
//           it when it is a true boundary) takes to fall in step with the true one
//           (never: not within kTokenProbeReach bytes)
// and picks
//   seq    when half the wrong starts or more never fall in step: chunks would be re-run
//          in order
//   enum   when most lookback guesses are wrong, yet the true boundary is within reach of
//          enum's branches almost everywhere and tokenizations fall in step within
//          kEnumCheapFall bytes (so the branches cost little): no second round
//   hspec  otherwise: the guesses are mostly right, a wrong one costs a short re-run
// A smaller input is measured by the training sample (boostfsm compile --train), when
// there was one: seq when most wrong starts never fell in step there, else hspec.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fsm/core/shared_constants.hpp"
#include "fsm/tokens/chunks.hpp"

namespace parafuse::fsm {
inline namespace v1 {

constexpr size_t kTokenMinChunk = 1 << 12;
constexpr size_t kEnumWidth = 8;
constexpr size_t kTokenProbeInput = size_t(1) << 20, kTokenProbes = 16;
constexpr size_t kTokenProbeReach = 1 << 10, kEnumCheapFall = 64;

struct TokenProbe {
  size_t probes = 0, wrong = 0, within = 0, never = 0;
  size_t fall_p90 = 0;  // over the positions that fell in step
};

// Bytes from `begin` until the tokenization started there shares a token start with the
// one started at `truth`; `reach` when not within reach bytes.
inline size_t probe_fall(Tokenizer& tokenizer, size_t begin, size_t truth, size_t reach,
                         size_t n) {
  size_t a = begin, b = truth;
  Token token;
  while (a != b && std::min(a, b) < begin + reach && std::min(a, b) < n) {
    if (a < b) a = tokenizer.next_token(a, token);
    else b = tokenizer.next_token(b, token);
  }
  return a == b ? a - begin : reach;
}

inline TokenProbe probe_tokens(const TokenTables& t, const uint8_t* data, size_t n, size_t from,
                               size_t stop) {
  TokenProbe probe;
  std::vector<size_t> falls;
  const size_t span = stop - from;
  for (size_t j = 0; j < kTokenProbes; ++j) {
    // positions at every residue modulo 8, lest a periodic input hide its phases
    const size_t begin = from + span * (2 * j + 1) / (2 * kTokenProbes) + j % 8;
    const size_t limit = std::min(n, begin + 4 * kTokenProbeReach);  // bounds every scan
    Tokenizer tokenizer(t, data, limit);
    const size_t truth = lookback_entry(tokenizer, begin, std::min(begin - from, kTokenProbeReach),
                                        limit);
    const size_t guess = lookback_entry(tokenizer, begin, t.lookback, limit);
    const size_t wrong_start = begin == truth ? begin + 1 : begin;  // not a true boundary
    const size_t fall = probe_fall(tokenizer, wrong_start, truth, kTokenProbeReach, limit);
    ++probe.probes;
    probe.wrong += guess != truth;
    probe.within += truth - begin < kEnumWidth;
    if (fall >= kTokenProbeReach) ++probe.never;
    else falls.push_back(fall);
  }
  if (!falls.empty()) {
    std::sort(falls.begin(), falls.end());
    probe.fall_p90 = falls[std::min(falls.size() - 1, falls.size() * 9 / 10)];
  }
  return probe;
}

inline std::string probe_text(const TokenProbe& p) {
  const auto of = [&](size_t k) { return std::to_string(k) + "/" + std::to_string(p.probes); };
  return "measured at " + std::to_string(p.probes) + " positions of the input: lookback " +
         "guesses wrong at " + of(p.wrong) + ", the true first token boundary within " +
         std::to_string(kEnumWidth) + " bytes at " + of(p.within) + ", starts never fell in " +
         "step within " + std::to_string(kTokenProbeReach) + " bytes at " + of(p.never) +
         (p.never < p.probes ? ", p90 " + std::to_string(p.fall_p90) + " bytes" : std::string());
}

// The scheme for data[from, stop) on `threads` threads, and why (see the top).
inline Scheme token_auto_choice(const TokenTables& t, const uint8_t* data, size_t n,
                                     size_t from, size_t stop, int threads,
                                     std::string& reason) {
  const size_t span = stop - from;
  if (threads <= 1) return reason = "one thread: tokenizing sequentially", Scheme::seq;
  if (span < kTokenMinChunk * size_t(threads))
    return reason = "input under " + std::to_string(kTokenMinChunk * size_t(threads)) +
                    " bytes: tokenizing sequentially", Scheme::seq;
  if (span >= kTokenProbeInput) {
    const TokenProbe p = probe_tokens(t, data, n, from, stop);
    const std::string measured = probe_text(p);
    if (2 * p.never >= p.probes)
      return reason = "seq: " + measured + ", so chunks would mostly be re-run in order",
             Scheme::seq;
    if (2 * p.wrong >= p.probes && 16 * p.within >= 15 * p.probes && p.never == 0 &&
        p.fall_p90 <= kEnumCheapFall)
      return reason = "enum: " + measured + "; chunks run from their first " +
                      std::to_string(kEnumWidth) + " bytes and splice the true start, " +
                      "with no second round", Scheme::enumeration;
    return reason = "hspec: " + measured +
                    "; chunks run from lookback guesses, wrong ones re-run in parallel rounds",
           Scheme::hspec;
  }
  const std::string measured =
      t.fall_never_ppm == kTokenUnknown
          ? std::string("no training measurement (an input under 1 MiB is not probed)")
          : "on the training sample a wrong start fell in step after median " +
                std::to_string(t.fall_median) + " bytes, p90 " + std::to_string(t.fall_p90) +
                ", never in " + std::to_string(t.fall_never_ppm / 10000) + "% of " +
                std::to_string(t.train_positions) + " starts";
  if (t.fall_never_ppm != kTokenUnknown && t.fall_never_ppm > 500000)
    return reason = "seq: " + measured + ", so chunks would mostly be re-run", Scheme::seq;
  return reason = "hspec: " + measured +
                  "; chunks run from lookback guesses, wrong ones re-run in parallel rounds",
         Scheme::hspec;
}

}  // namespace v1
}  // namespace parafuse::fsm
