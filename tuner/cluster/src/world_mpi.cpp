#include <mpi.h>

#include <fmt/format.h>

#include <memory>
#include <stdexcept>
#include <thread>

#include "cutune/cluster/world.hpp"

namespace cutune::cluster {

namespace {
void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int n = 0;
  MPI_Error_string(rc, text, &n);
  throw std::runtime_error(fmt::format("{}: {}", call, std::string(text, static_cast<std::size_t>(n))));
}
}  // namespace

bool built_with_mpi() { return true; }

World::World() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    throw std::runtime_error("this MPI library gives no MPI_THREAD_MULTIPLE: each GPU worker's lane talks on its own thread");
  }
  // Errors come back as codes (and become exceptions here) rather than aborting the job from
  // inside a lane's thread.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

World::~World() { MPI_Finalize(); }

void World::send(int dest, int tag, std::vector<char> bytes,
                 std::optional<std::chrono::steady_clock::time_point> deadline, std::chrono::microseconds longest_pause) {
  // MPI keeps the message order per (source, tag), so a lane's requests arrive in the order
  // they were sent. Non-blocking and polled, so that a receiver that stopped (a hung node)
  // fails the send at `deadline` instead of blocking the lane for ever.
  auto buffer = std::make_unique<std::vector<char>>(std::move(bytes));  // MPI may read it until the send completes
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Isend(buffer->data(), static_cast<int>(buffer->size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request),
        "MPI_Isend");
  auto pause = std::min(std::chrono::microseconds(5), longest_pause);
  while (true) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (deadline && std::chrono::steady_clock::now() >= *deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, longest_pause);
  }
  // Given up: the request is freed, and its buffer left to it (a rank that wakes up may
  // still read the message).
  MPI_Cancel(&request);
  MPI_Request_free(&request);
  (void)buffer.release();
  throw std::runtime_error(fmt::format("rank {} took no message within the deadline", dest));
}

std::optional<std::vector<char>> World::try_receive(int source, int tag) {
  int flag = 0;
  MPI_Status status;
  check(MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
  if (!flag) return std::nullopt;
  int count = 0;
  check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count");
  std::vector<char> out(static_cast<std::size_t>(count));
  check(MPI_Recv(out.data(), count, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return out;
}

std::optional<std::vector<char>> World::receive(int source, int tag,
                                                std::optional<std::chrono::steady_clock::time_point> deadline,
                                                std::chrono::microseconds longest_pause) {
  // Polling, with sleeps growing to longest_pause: a blocking MPI_Recv spins a core in Open
  // MPI, and cannot give up at a deadline.
  auto pause = std::min(std::chrono::microseconds(20), longest_pause);
  while (true) {
    if (auto m = try_receive(source, tag)) return m;
    if (deadline && std::chrono::steady_clock::now() >= *deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, longest_pause);
  }
}

void World::send_int(int dest, int tag, std::int64_t value) {
  check(MPI_Send(&value, 1, MPI_INT64_T, dest, tag, MPI_COMM_WORLD), "MPI_Send");
}

std::int64_t World::receive_int(int source, int tag) {
  std::int64_t v = 0;
  check(MPI_Recv(&v, 1, MPI_INT64_T, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return v;
}

}  // namespace cutune::cluster
