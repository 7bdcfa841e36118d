// Counting visits of reporting states (cpp_runtime/fsm/core/count.hpp) gives the same counts
// whichever mode its first block counts in (auto's timed walks start in the mode a warm walk
// settled in: fsm/auto/rates.hpp), and leaves the mode its last block chose where asked.
// Prints "ok", or each case that fails.
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "fsm/core/count.hpp"

using namespace parafuse::fsm;

int failures = 0;

void expect(bool holds, const char* what) {
  if (!holds) std::printf("failed: %s\n", what), ++failures;
}

constexpr uint32_t kStates = 6, kClasses = 4, kShift = 4;  // rows of 4 entries of 4 bytes
constexpr uint32_t kFloor = 3;                              // states 3, 4, 5 report

struct Machine {
  std::vector<uint32_t> table;  // [state << shift / 4 + class]: the next state's offset
  std::vector<uint8_t> byte_class;
};

Machine random_machine(std::mt19937& rng) {
  Machine m{std::vector<uint32_t>(size_t(kStates) << kShift >> 2), std::vector<uint8_t>(256)};
  for (uint32_t s = 0; s < kStates; ++s)
    for (uint32_t c = 0; c < kClasses; ++c)
      m.table[(s << kShift >> 2) + c] = (rng() % kStates) << kShift;
  for (int b = 0; b < 256; ++b) m.byte_class[size_t(b)] = uint8_t(rng() % kClasses);
  return m;
}

// The counts of every lane walked alone, one step at a time.
std::vector<uint64_t> expected_counts(const TypedTable<uint32_t>& m, const Lane* lanes) {
  std::vector<uint64_t> hist(kStates - kFloor, 0);
  for (int k = 0; k < 4; ++k) {
    uint32_t state = lanes[k].state;
    for (size_t i = 0; i < lanes[k].length; ++i) {
      state = m.step(state, lanes[k].data[i]);
      if (state >= (kFloor << kShift)) ++hist[(state >> kShift) - kFloor];
    }
  }
  return hist;
}

int main() {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const Machine machine = random_machine(rng);
    TypedTable<uint32_t> m(Tables{});
    m.table = machine.table.data(), m.byte_class = machine.byte_class.data();
    m.shift = kShift, m.floor_offset = kFloor << kShift;
    std::vector<uint8_t> data(70000);
    for (uint8_t& byte : data) byte = uint8_t(rng());
    const size_t lengths[4] = {size_t(rng() % 40000), 40000, size_t(rng() % 3000), 66000};
    std::vector<uint64_t> inc(kStates, 0);
    for (uint32_t s = kFloor; s < kStates; ++s) inc[s] = uint64_t(1) << (8 * (s - kFloor));
    for (Counting first : {Counting::sparse, Counting::packed, Counting::dense}) {
      Lane lanes[4];
      for (int k = 0; k < 4; ++k)
        lanes[k] = Lane{data.data() + 1000 * k, lengths[k], 0, uint32_t(k % kStates) << kShift};
      const std::vector<uint64_t> expected = expected_counts(m, lanes);
      std::vector<uint64_t> hist(kStates - kFloor, 0);
      std::vector<uint32_t> dense(size_t(kStates) << kShift, 0);
      Counting settled = Counting::sparse;
      Counters c{hist.data(), dense.data(), inc.data(), kFloor << kShift, kShift,
                 kStates << kShift};
      c.first = first, c.settled = &settled;
      count_lanes<4>(m, lanes, c);
      expect(hist == expected, "the counts do not depend on the first block's mode");
      // random bytes visit the 3 reporting states of 6 about every other step: a dense
      // rate, which the packed mode (at most 8 reporting states) counts without branching
      const size_t common = std::min(std::min(lengths[0], lengths[1]), lengths[2]);
      expect(common < kFirstBlock || settled == Counting::packed,
             "the last block's choice is left where asked");
    }
  }
  // A walk of one block counts it in the mode asked for (the modes it used are recorded).
  {
    std::mt19937 one(9);
    const Machine machine = random_machine(one);
    TypedTable<uint32_t> m(Tables{});
    m.table = machine.table.data(), m.byte_class = machine.byte_class.data();
    m.shift = kShift, m.floor_offset = kFloor << kShift;
    std::vector<uint8_t> data(4 * 512, 7);
    std::vector<uint64_t> inc(kStates, 0);
    for (uint32_t s = kFloor; s < kStates; ++s) inc[s] = uint64_t(1) << (8 * (s - kFloor));
    for (Counting first : {Counting::sparse, Counting::packed, Counting::dense}) {
      Lane lanes[4];
      for (int k = 0; k < 4; ++k) lanes[k] = Lane{data.data() + 512 * k, 512, 0, 0};
      std::vector<uint64_t> hist(kStates - kFloor, 0);
      std::vector<uint32_t> dense(size_t(kStates) << kShift, 0);
      uint32_t modes = 0;
      Counters c{hist.data(), dense.data(), inc.data(), kFloor << kShift, kShift,
                 kStates << kShift};
      c.first = first, c.modes = &modes;
      count_lanes<4>(m, lanes, c);
      expect(modes == 1u << unsigned(first), "a one-block walk counts in the first mode");
    }
  }
  if (failures == 0) std::printf("ok\n");
  return failures != 0;
}
