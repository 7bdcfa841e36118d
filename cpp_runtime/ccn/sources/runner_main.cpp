// The runner contract of docs/ccn-language.md section 10 (ccn/runner.hpp declares it):
// options, inputs, warm-up, timed steps, outputs and the report of every generated
// P_run. One source, the same in every project, so that a compiler cache builds it once.
#include "ccn/namespace.hpp"
#include "ccn/runner.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <system_error>
#include <memory>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ccn/mpi_components.hpp"
#include "ccn/mpi_util.hpp"
#include "ccn/program.hpp"
#include "ccn/runner_inputs.hpp"
#include "ccn/runner_options.hpp"
#include "ccn/runner_report.hpp"
#include "ccn/test_hooks.hpp"

namespace parafuse::ccn {
namespace {

// Run `step` once per timed iteration; the time of a step is the largest over the ranks.
std::vector<double> timed_steps(ScheduleImpl& impl, const RunnerOptions& o, MPI_Comm comm) {
  std::vector<double> times;
  for (long k = 0; k < o.iters; ++k) {
    PF_MPI(MPI_Barrier(comm));
    if (k == 0) test_hook_fail_rank(comm);
    auto begin = std::chrono::steady_clock::now();
    impl.step(o.seed, static_cast<uint64_t>(k));
    impl.synchronize();  // a device's step returns once queued: time it done
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    double slowest = ms;
    PF_MPI(MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
    times.push_back(slowest);
  }
  return times;
}

// Warm-up steps whose effects are discarded: states are saved before and restored after.
void warm_up(ScheduleImpl& impl, const RunnerOptions& o) {
  if (o.warmup == 0) return;
  std::vector<std::vector<char>> saved;
  for (const Slot& s : impl.states()) {
    const char* data = static_cast<const char*>(s.data);
    saved.emplace_back(data, data + s.local.count * dtype_size(s.dtype));
  }
  for (long k = 0; k < o.warmup; ++k) impl.step(o.seed, 0);
  impl.synchronize();
  std::vector<Slot> states = impl.states();
  for (size_t i = 0; i < states.size(); ++i) std::memcpy(states[i].data, saved[i].data(), saved[i].size());
}

std::unique_ptr<ScheduleImpl> prepare(int argc, char** argv, const ProgramInfo& info,
                                             const Factory& make, RunnerOptions& o,
                                             std::vector<int64_t>& sizes, MPI_Comm comm) {
  int rank = comm_rank(comm), ranks = comm_size(comm);
  std::string problem;
  std::unique_ptr<ScheduleImpl> impl;
  try {
    o = parse_options(argc, argv);
    if (o.schedule.empty()) o.schedule = info.default_schedule;
    check_launch(info, o, ranks);
    sizes = resolve_sizes(info, o);
    if (o.inputs.empty() && !o.random) throw InputError("no inputs: pass --inputs DIR or --random");
    impl = make(comm, sizes, o.schedule, o.params);
    for (const Slot& slot : impl->inputs()) {
      if (o.random) random_slot(slot, o.seed, rank);
      else load_slot(o, slot, rank);
    }
    if (!o.outputs.empty() && rank == 0) {
      std::error_code failed;
      std::filesystem::create_directories(o.outputs, failed);
      if (failed)
        throw InputError("cannot create the output folder " + o.outputs + ": " + failed.message());
    }
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (agree_on_errors(problem, info.name, comm)) return nullptr;
  return impl;
}

// OpenMP threads per rank where OMP_NUM_THREADS is not set: the node's cores shared by
// its ranks (as `coconetc run` sets it). OpenMP's default, every core in every rank, put
// R x cores spinning threads on the cores: 2 ranks on 2 cores ran a step 7000x slower.
void share_cores_among_node_ranks(MPI_Comm comm) {
#ifdef _OPENMP
  if (std::getenv("OMP_NUM_THREADS")) return;
  MPI_Comm node;
  PF_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  const int node_ranks = comm_size(node);
  PF_MPI(MPI_Comm_free(&node));
  omp_set_num_threads(std::max(1, omp_get_num_procs() / std::max(1, node_ranks)));
#else
  (void)comm;
#endif
}

// Whether this process is rank 0 of its mpirun (or not under mpirun), from the launcher's
// environment, before MPI starts.
bool first_or_only_process() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"})
    if (const char* rank = std::getenv(name)) return std::strcmp(rank, "0") == 0;
  return true;
}

}  // namespace

int run_main(int argc, char** argv, const ProgramInfo& info, const Factory& make) {
  if (asks_for_help(argc, argv)) {  // without MPI; under mpirun, rank 0 alone prints it
    if (first_or_only_process()) std::fputs(runner_usage(info).c_str(), stdout);
    return 0;
  }
  select_one_node_mpi_components();
  PF_MPI(MPI_Init(&argc, &argv));
  MPI_Comm comm = MPI_COMM_WORLD;
  share_cores_among_node_ranks(comm);
  RunnerOptions o;
  std::vector<int64_t> sizes;
  std::unique_ptr<ScheduleImpl> impl = prepare(argc, argv, info, make, o, sizes, comm);
  if (!impl) {
    MPI_Finalize();
    return 1;
  }
  int rank = comm_rank(comm), ranks = comm_size(comm);
  try {
    warm_up(*impl, o);
    std::vector<double> times = timed_steps(*impl, o, comm);
    PF_MPI(MPI_Barrier(comm));
    test_hook_report_work(comm);
    if (!o.outputs.empty() && !write_results(o, *impl, info, rank, ranks, sizes, comm)) {
      impl.reset();
      MPI_Finalize();
      return 1;
    }
    std::sort(times.begin(), times.end());
    double median = times.size() % 2 ? times[times.size() / 2]
                                     : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
    if (rank == 0 && o.json) {
      std::printf("{\"program\": \"%s\", \"schedule\": \"%s\", \"backend\": \"%s\", "
                  "\"ranks\": %d, \"sizes\": %s, \"iters\": %ld, \"warmup\": %ld, "
                  "\"median_ms\": %.6f, \"min_ms\": %.6f, \"bytes_per_rank\": %.0f}\n",
                  info.name.c_str(), o.schedule.c_str(), info.backend.c_str(), ranks,
                  json_sizes(info, sizes).c_str(),
                  o.iters, o.warmup, median, times.front(), impl->bytes_per_rank());
    } else if (rank == 0) {
      std::printf("%s [%s] on %d rank(s), backend %s: %ld step(s), median %.3f ms\n",
                  info.name.c_str(), o.schedule.c_str(), ranks, info.backend.c_str(), o.iters, median);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s_run: error on rank %d: %s\n", info.name.c_str(), rank, e.what());
    MPI_Abort(comm, 2);
  }
  impl.reset();
  MPI_Finalize();
  return 0;
}

}  // namespace parafuse::ccn
