#include <fmt/format.h>
#include <sched.h>
#include <sys/sysinfo.h>

#include <cstdlib>
#include <string>

#include "cutune/cluster/world.hpp"

namespace cutune::cluster {

namespace {
int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  try {
    return std::stoi(v);
  } catch (const std::exception&) {
    return fallback;
  }
}
}  // namespace

bool launched_as_ranks() {
  // Open MPI's mpirun, then PMI/PMIx launchers (srun --mpi=pmix, MPICH's hydra).
  return env_int("OMPI_COMM_WORLD_SIZE", 1) > 1 || env_int("PMI_SIZE", 1) > 1 ||
         (std::getenv("PMIX_RANK") && env_int("SLURM_NTASKS", 1) > 1);
}

std::string binding_warning() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "";
  const int bound = CPU_COUNT(&set), cores = get_nprocs();
  if (bound >= cores) return "";
  return fmt::format("this rank may use {} of the node's {} cores (mpirun binds ranks to cores): its compile pool and "
                     "CPU reference outputs get only those; start it with mpirun --bind-to none (srun --cpu-bind=none)",
                     bound, cores);
}

int node_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"})
    if (const int v = env_int(name, -1); v >= 0) return v;
  return 0;
}

}  // namespace cutune::cluster
