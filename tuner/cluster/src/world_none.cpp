#include <stdexcept>

#include "cutune/cluster/world.hpp"

namespace cutune::cluster {

bool built_with_mpi() { return false; }

World::World() {
  throw std::runtime_error("this cutune was built without MPI (install libopenmpi-dev and rebuild)");
}
World::~World() = default;
void World::send(int, int, std::vector<char>, std::optional<std::chrono::steady_clock::time_point>,
                 std::chrono::microseconds) {}
std::optional<std::vector<char>> World::receive(int, int, std::optional<std::chrono::steady_clock::time_point>,
                                                std::chrono::microseconds) {
  return std::nullopt;
}
std::optional<std::vector<char>> World::try_receive(int, int) { return std::nullopt; }
void World::send_int(int, int, std::int64_t) {}
std::int64_t World::receive_int(int, int) { return 0; }

}  // namespace cutune::cluster
