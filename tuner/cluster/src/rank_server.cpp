#include "cutune/cluster/rank_server.hpp"

#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "cutune/cluster/remote_lane.hpp"
#include "cutune/cuda/driver.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/worker/protocol.hpp"

namespace cutune::cluster {

namespace {

template <class M>
std::vector<char> bytes_of(const M& m) {
  return worker::to_bytes(worker::encode(m));
}

/// One GPU worker of this rank, relayed to rank 0 on its lane's tag until Shutdown. Runs on
/// a thread of its own, which started the worker (and restarts it).
void relay(World& world, int index, const KernelProblem& problem, const worker::Setup& setup, int device) {
  const int tag = kLaneBase + index;
  world.send_int(0, tag, device);
  std::optional<runner::GpuWorker> gpu;
  try {
    gpu.emplace(problem, setup.problem, device, setup.measure, setup.data_seed);
    world.send(0, tag, bytes_of(worker::Identified{gpu->wait_identified()}));
    gpu->wait_ready();
    world.send(0, tag, bytes_of(gpu->setup()));
  } catch (const cuda::NoDriver& e) {
    world.send(0, tag, bytes_of(worker::WorkerError{false, true, e.what()}));
    gpu.reset();
  } catch (const InputError& e) {
    world.send(0, tag, bytes_of(worker::WorkerError{true, false, e.what()}));
    gpu.reset();
  } catch (const std::exception& e) {
    world.send(0, tag, bytes_of(worker::WorkerError{false, false, e.what()}));
    gpu.reset();
  }
  while (true) {
    // Take requests while the worker has room (waiting for one only when it holds none),
    // else hand back the oldest answer.
    std::optional<std::vector<char>> m;
    const std::size_t held = gpu ? gpu->in_flight() : 0;
    if (held == 0) m = world.receive(0, tag);
    else if (held < runner::GpuWorker::kMaxInFlight) m = world.try_receive(0, tag);
    if (m) {
      const auto request = worker::decode_one_of<worker::Evaluate, worker::SetTimeout, worker::AdoptReference,
                                                 worker::Shutdown>(worker::from_bytes(m->data(), m->size()));
      if (std::holds_alternative<worker::Shutdown>(request)) break;
      if (!gpu) continue;  // set-up failed: rank 0 knows and sends nothing but Shutdown
      if (const auto* t = std::get_if<worker::SetTimeout>(&request)) {
        gpu->set_timeout(std::chrono::milliseconds(t->ms));
      } else if (const auto* a = std::get_if<worker::AdoptReference>(&request)) {
        gpu->adopt_reference(a->candidate);
      } else {
        const auto& e = std::get<worker::Evaluate>(request);
        gpu->submit(e.candidate.config, e.candidate.cubin, e.candidate.lowered_names, e.best_ms, e.thorough);
      }
      continue;
    }
    world.send(0, tag, bytes_of(worker::Evaluated{gpu->collect()}));
  }
  if (gpu) gpu->release();
}

}  // namespace

int serve_rank(World& world, const std::vector<int>& devices) {
  const auto m = world.receive(0, kControl);
  const auto start = worker::decode_one_of<worker::Setup, worker::Shutdown>(worker::from_bytes(m->data(), m->size()));
  if (std::holds_alternative<worker::Shutdown>(start)) return 0;  // rank 0 refused its input
  const worker::Setup setup = std::get<worker::Setup>(start);
  // The same problem file at the same path on every node (a shared file system), as the
  // job's command line names it.
  const KernelProblem problem = KernelProblem::load(setup.problem_json);
  world.send_int(0, kControl, static_cast<std::int64_t>(devices.size()));
  std::vector<std::thread> lanes;
  for (std::size_t i = 0; i < devices.size(); ++i)
    lanes.emplace_back([&, i] {
      try {
        relay(world, static_cast<int>(i), problem, setup, devices[i]);
      } catch (const std::exception& e) {
        std::cerr << fmt::format("rank {} GPU {}: {}\n", world.rank(), devices[i], e.what());
      }
    });
  for (auto& t : lanes) t.join();
  return 0;
}

std::vector<std::function<std::unique_ptr<runner::Lane>()>> start_ranks(World& world, const worker::Setup& setup,
                                                                         std::chrono::milliseconds silence) {
  std::vector<std::function<std::unique_ptr<runner::Lane>()>> lanes;
  for (int r = 1; r < world.size(); ++r) world.send(r, kControl, bytes_of(setup));
  for (int r = 1; r < world.size(); ++r) {
    const std::int64_t n = world.receive_int(r, kControl);
    for (std::int64_t i = 0; i < n; ++i)
      lanes.push_back(
          [&world, r, i, silence] { return std::make_unique<RemoteLane>(world, r, static_cast<int>(i), silence); });
  }
  return lanes;
}

void refuse_ranks(World& world) {
  for (int r = 1; r < world.size(); ++r) world.send(r, kControl, bytes_of(worker::Shutdown{}));
}

}  // namespace cutune::cluster
