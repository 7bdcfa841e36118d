// parafuse boostfsm runtime: one match, as every scheme (CPU or GPU) reports it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace parafuse::fsm {
inline namespace v1 {

struct Match {
  uint64_t offset;  // bytes consumed when the tag was reported
  uint32_t tag;     // index into the machine's tags, in order of first appearance
};

// Matches in (offset, tag) order; with `once`, each (offset, tag) kept once (runs that may
// find a match twice: a prefiltered engine's confirmations in several jobs).
inline void sort_matches(std::vector<Match>& matches, bool once = false) {
  std::sort(matches.begin(), matches.end(), [](const Match& a, const Match& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.tag < b.tag;
  });
  if (once)
    matches.erase(std::unique(matches.begin(), matches.end(),
                              [](const Match& a, const Match& b) {
                                return a.offset == b.offset && a.tag == b.tag;
                              }),
                  matches.end());
}

}  // namespace v1
}  // namespace parafuse::fsm
