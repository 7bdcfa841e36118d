// parafuse boostfsm runtime: run_machine for some entry widths alone. A pattern set's
// library (src/M.cpp) instantiates the schemes only for the widths of its engines' tables
// (emitters/fsm/project.py: entry_widths), as a machine's library does for its one width
// (run_machine_with); the test drivers, which load any blob, keep all three.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fsm/auto/choice.hpp"

namespace parafuse::fsm {
inline namespace v1 {

template <class... Entries>
struct EntryWidths {
  // run_machine's run, or std::logic_error for tables of a width not among Entries.
  static RunResult run(const Tables& t, const uint8_t* data, size_t n, const RunOptions& options) {
    int threads = 1;
    size_t chunks = 1;
    checked_run_shape(options, threads, chunks);
    RunResult result;
    const bool ran = ((t.entry_bytes == sizeof(Entries) &&
                       (result = run_typed<Entries>(t, data, n, options, threads, chunks), true)) ||
                      ...);
    if (!ran)
      throw std::logic_error("tables of " + std::to_string(t.entry_bytes) +
                             "-byte entries run by a library built for other widths");
    return result;
  }
};

using AllEntryWidths = EntryWidths<uint8_t, uint16_t, uint32_t>;

}  // namespace v1
}  // namespace parafuse::fsm
