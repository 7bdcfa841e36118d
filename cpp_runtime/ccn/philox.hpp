// Philox4x32-10 (Random123), usable from host and device code; the dropout masks
// and --random inputs of docs/ccn-language.md sections 5 and 10 are pure functions of it.
#pragma once
#include "ccn/namespace.hpp"
#include <cstdint>

#include "ccn/host_device.hpp"

namespace parafuse::ccn {

struct Philox4 { uint32_t x[4]; };

PF_HOST_DEVICE inline void philox_mulhilo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t product = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  *hi = static_cast<uint32_t>(product >> 32);
  *lo = static_cast<uint32_t>(product);
}

PF_HOST_DEVICE inline Philox4 philox4x32_10(Philox4 counter, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, counter.x[0], &hi0, &lo0);
    philox_mulhilo(0xCD9E8D57u, counter.x[2], &hi1, &lo1);
    Philox4 next = {{hi1 ^ counter.x[1] ^ k0, lo1, hi0 ^ counter.x[3] ^ k1, lo0}};
    counter = next;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return counter;
}

// u = (x0 >> 8) * 2^-24 for counter (idx_lo, idx_hi, word2, word3) and a 64-bit key.
PF_HOST_DEVICE inline float philox_uniform(uint64_t index, uint32_t word2, uint32_t word3,
                                           uint64_t key) {
  Philox4 counter = {{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), word2,
                      word3}};
  Philox4 out = philox4x32_10(counter, static_cast<uint32_t>(key),
                              static_cast<uint32_t>(key >> 32));
  return static_cast<float>(out.x[0] >> 8) * (1.0f / 16777216.0f);
}

// dropout of one element already rounded to its dtype and held in float (or double).
template <typename C>
PF_HOST_DEVICE inline C dropout_element(C x, float p, uint64_t index, uint32_t rank_or_0,
                                        uint32_t site, uint64_t seed_plus_step) {
  float u = philox_uniform(index, rank_or_0, site, seed_plus_step);
  if (!(u >= p)) return C(0);
  float scale = 1.0f / (1.0f - p);
  return x * static_cast<C>(scale);
}

}  // namespace parafuse::ccn
