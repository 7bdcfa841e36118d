// parafuse boostfsm runtime: one match, as every scheme (CPU or GPU) reports it.
#pragma once

#include <cstdint>

namespace parafuse::fsm {
inline namespace v1 {

struct Match {
  uint64_t offset;  // bytes consumed when the tag was reported
  uint32_t tag;     // index into the machine's tags, in order of first appearance
};

}  // namespace v1
}  // namespace parafuse::fsm
