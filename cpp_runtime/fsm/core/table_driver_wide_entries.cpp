// parafuse boostfsm: the table-driven driver's schemes for tables of 2- and 4-byte entries,
// compiled in parallel with fsm/core/table_driver.cpp, which declares them extern.
#include "fsm/auto/choice.hpp"

namespace parafuse::fsm {
template RunResult run_typed<uint16_t>(const Tables&, const uint8_t*, size_t, const RunOptions&,
                                       int, size_t);
template RunResult run_typed<uint32_t>(const Tables&, const uint8_t*, size_t, const RunOptions&,
                                       int, size_t);
}  // namespace parafuse::fsm
