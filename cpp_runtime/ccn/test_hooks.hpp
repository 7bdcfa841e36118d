// Test hooks of the runner, compiled into every runner (docs/ccn.md): the tests use
// them to check that a failing rank aborts every rank.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <cstdlib>
#include <stdexcept>

#include "ccn/mpi_util.hpp"

namespace parafuse::ccn {

// PARAFUSE_FAIL_RANK=r makes rank r fail inside its first step.
inline void test_hook_fail_rank(MPI_Comm comm) {
  const char* text = std::getenv("PARAFUSE_FAIL_RANK");
  if (text && std::atoi(text) == comm_rank(comm)) {
    throw std::runtime_error("failure injected by PARAFUSE_FAIL_RANK");
  }
}

}  // namespace parafuse::ccn
