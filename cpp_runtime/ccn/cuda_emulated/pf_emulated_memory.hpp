// Device memory of the emulated device (pf_emulated_device.hpp), and what it counts.
//
// Each allocation is its own mapping, inaccessible (PROT_NONE) to the host. While an
// operation of a stream runs (a kernel, a copy, a memset, a collective, a GEMM), the first
// access to each page faults and the fault handler opens that page, for reading or for
// writing as the access asks, and counts it; when the operation ends its pages close again.
// So a host dereference of device memory outside the device's operations faults (and the
// handler names it), and every operation's device-memory traffic is counted page by page:
// the bytes it read and the bytes it wrote (a page read and written counts in both).
// Freed memory is unmapped, so later reads of it fault too.
// PF_EMU_COUNTS=FILE writes the counts of the process to FILE.rank<R> as JSON at exit.
#pragma once
#include "ccn/namespace.hpp"
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace parafuse::ccn::emulated {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "cuda emulation: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

// What the device did: device-memory bytes its operations read and wrote (page granular),
// operations queued on streams, runtime calls (operations, event records, synchronisations,
// allocations and frees), allocations and frees alone, and host synchronisations.
struct Counts {
  uint64_t read = 0, written = 0, operations = 0, calls = 0, allocations = 0, syncs = 0;
};
inline Counts counts_now;

struct CountsReport {  // PF_EMU_COUNTS=FILE: the counts to FILE.rank<R> when the process ends
  ~CountsReport() {
    const char* path = std::getenv("PF_EMU_COUNTS");
    if (!path) return;
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    std::string file = std::string(path) + ".rank" + (rank ? rank : "0");
    if (FILE* out = std::fopen(file.c_str(), "w")) {
      const Counts& c = counts_now;
      std::fprintf(out,
                   "{\"read\": %llu, \"written\": %llu, \"operations\": %llu, \"calls\": %llu, "
                   "\"allocations\": %llu, \"syncs\": %llu}\n",
                   (unsigned long long)c.read, (unsigned long long)c.written,
                   (unsigned long long)c.operations, (unsigned long long)c.calls,
                   (unsigned long long)c.allocations, (unsigned long long)c.syncs);
      std::fclose(out);
    }
  }
};
inline CountsReport counts_report;

constexpr unsigned char kPoison = 0xff;
enum PageState : unsigned char { kClosed = 0, kRead = 1, kWritten = 2 };

struct Allocation {
  size_t bytes = 0;
  std::vector<unsigned char> pages;  // PageState of each page while an operation runs
  std::vector<size_t> opened;        // pages opened by the running operation (reserved)
};

inline std::map<uintptr_t, Allocation>& allocations() {
  static std::map<uintptr_t, Allocation> all;
  return all;
}

inline size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

inline size_t mapped_size(size_t bytes) {
  return (std::max<size_t>(bytes, 1) + page_size() - 1) / page_size() * page_size();
}

inline int& device_open() {  // how many operations of the device are running (nested)
  static int depth = 0;
  return depth;
}

// The allocation holding `at`, or nullptr (no allocation of memory: the fault handler calls it).
inline std::pair<const uintptr_t, Allocation>* allocation_of(uintptr_t at) {
  auto next = allocations().upper_bound(at);
  if (next == allocations().begin()) return nullptr;
  --next;
  return at < next->first + mapped_size(next->second.bytes) ? &*next : nullptr;
}

inline void close_opened_pages() {
  for (auto& [base, allocation] : allocations()) {
    for (size_t page : allocation.opened) {
      mprotect(reinterpret_cast<void*>(base + page * page_size()), page_size(), PROT_NONE);
      allocation.pages[page] = kClosed;
    }
    allocation.opened.clear();
  }
}

// While one lives, an operation of the device runs: its accesses open pages and are counted.
struct DeviceAccess {
  DeviceAccess() { ++device_open(); }
  ~DeviceAccess() {
    if (--device_open() == 0) close_opened_pages();
  }
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

inline bool is_write_fault(void* context, unsigned char state) {
#if defined(__x86_64__)
  (void)state;
  return (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
  (void)context;
  return state == kRead;  // elsewhere a write first opens the page for reading, then faults again
#endif
}

inline void on_fault(int, siginfo_t* info, void* context) {
  auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  auto* found = allocation_of(at);
  if (found && device_open() > 0) {  // an operation of the device touches a page
    Allocation& allocation = found->second;
    size_t page = (at - found->first) / page_size();
    unsigned char& state = allocation.pages[page];
    bool write = is_write_fault(context, state);
    if (state == kWritten || (state == kRead && !write)) {
      signal(SIGSEGV, SIG_DFL);  // not ours to explain
      return;
    }
    if (state == kClosed) allocation.opened.push_back(page);  // capacity reserved
    (write ? counts_now.written : counts_now.read) += page_size();
    state = write ? kWritten : kRead;
    mprotect(reinterpret_cast<void*>(found->first + page * page_size()), page_size(),
             write ? PROT_READ | PROT_WRITE : PROT_READ);
    return;
  }
  if (found) {
    const char message[] =
        "cuda emulation: the host dereferenced device memory (outside a kernel or copy)\n";
    ssize_t written = write(2, message, sizeof message - 1);
    (void)written;
  }
  signal(SIGSEGV, SIG_DFL);  // the access faults again, now with the default action
}

inline void install_fault_handler() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGSEGV, &action, nullptr) == 0;
  }();
  (void)installed;
}

inline void* allocate(size_t bytes) {
  install_fault_handler();
  ++counts_now.allocations;
  ++counts_now.calls;
  const size_t mapped = mapped_size(bytes);
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::memset(p, kPoison, mapped);
  mprotect(p, mapped, PROT_NONE);
  Allocation& allocation = allocations()[reinterpret_cast<uintptr_t>(p)];
  allocation.bytes = bytes;
  allocation.pages.assign(mapped / page_size(), kClosed);
  allocation.opened.reserve(mapped / page_size());
  return p;
}

// Freed memory is unmapped: a later read of it faults, on the host or the device.
inline void release(void* p) {
  auto found = allocations().find(reinterpret_cast<uintptr_t>(p));
  if (found == allocations().end()) fail("free of a pointer that is not device memory");
  munmap(p, mapped_size(found->second.bytes));
  allocations().erase(found);
}

// Is [p, p + bytes) inside one device allocation?
inline bool is_device(const void* p, size_t bytes = 0) {
  auto at = reinterpret_cast<uintptr_t>(p);
  auto* found = allocation_of(at);
  return found && at + bytes <= found->first + std::max<size_t>(found->second.bytes, 1);
}

inline void require_device(const void* p, size_t bytes, const char* what) {
  if (bytes > 0 && !is_device(p, bytes)) {
    fail(std::string(what) + ": " + std::to_string(bytes) +
         " bytes that are not inside one device allocation");
  }
}

}  // namespace parafuse::ccn::emulated
