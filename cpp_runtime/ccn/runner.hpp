// The runner contract of docs/ccn-language.md section 10, shared by every generated P_run:
//   mpirun -np R P_run --size N=... [--schedule S] [--inputs IN] [--outputs OUT]
//          [--param k=v ...] [--seed S] [--iters K] [--warmup W] [--random] [--json]
//   P_run --help    (the usage, on stdout, exit code 0)
// Bad input is found by every rank before any step; rank 0 prints one line and
// every rank exits non-zero without writing anything.
#pragma once
#include "ccn/namespace.hpp"
#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ccn/program.hpp"
#include "ccn/runner_options.hpp"

namespace parafuse::ccn {

using Factory = std::function<std::unique_ptr<ScheduleImpl>(
    MPI_Comm, const std::vector<int64_t>&, const std::string&,
    const std::map<std::string, std::string>&)>;

// The whole run of a generated P_run's main (ccn/sources/runner_main.cpp, a source of
// every runner): `make` builds the program of the parsed options on each rank.
int run_main(int argc, char** argv, const ProgramInfo& info, const Factory& make);

}  // namespace parafuse::ccn
