#include "cutune/cluster/rank_server.hpp"

#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "cutune/cluster/remote_lane.hpp"
#include "cutune/cuda/driver.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "typed_messages.hpp"

namespace cutune::cluster {

namespace {

/// One GPU worker of this rank, relayed to rank 0 on its lane's tag until Shutdown. Runs on
/// a thread of its own, which started the worker (and restarts it).
void relay(World& world, int index, const KernelProblem& problem, const worker::Setup& setup, int device) {
  const int tag = kLaneBase + index;
  world.send_int(0, tag, device);
  std::optional<runner::GpuWorker> gpu;
  try {
    gpu.emplace(problem, setup.problem, device, setup.measure, setup.data_seed);
    send_message(world, 0, tag, worker::Identified{gpu->wait_identified()});
    gpu->wait_ready();
    send_message(world, 0, tag, gpu->setup());
  } catch (const cuda::NoDriver& e) {
    send_message(world, 0, tag, worker::WorkerError{false, true, e.what()});
    gpu.reset();
  } catch (const InputError& e) {
    send_message(world, 0, tag, worker::WorkerError{true, false, e.what()});
    gpu.reset();
  } catch (const std::exception& e) {
    send_message(world, 0, tag, worker::WorkerError{false, false, e.what()});
    gpu.reset();
  }
  // The GPU idles while this thread sleeps waiting for a request or for rank 0 to take an
  // answer: the sleeps are paced by how often the worker answers (PollPace).
  PollPace pace;
  while (true) {
    // Take requests while the worker has room (waiting for one only when it holds none),
    // else hand back the oldest answer.
    using Request = std::variant<worker::Evaluate, worker::SetTimeout, worker::AdoptReference, worker::Shutdown>;
    std::optional<Request> m;
    const std::size_t held = gpu ? gpu->in_flight() : 0;
    if (held == 0)
      m = receive_message<worker::Evaluate, worker::SetTimeout, worker::AdoptReference, worker::Shutdown>(
          world, 0, tag, std::nullopt, pace.longest_pause());
    else if (held < runner::GpuWorker::kMaxInFlight)
      m = try_receive_message<worker::Evaluate, worker::SetTimeout, worker::AdoptReference, worker::Shutdown>(world, 0,
                                                                                                             tag);
    if (m) {
      const Request& request = *m;
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
    worker::Evaluated answer{gpu->collect()};
    pace.answered(std::chrono::steady_clock::now());
    send_message(world, 0, tag, answer, std::nullopt, pace.longest_pause());
  }
  if (gpu) gpu->release();
}

}  // namespace

int serve_rank(World& world, const std::vector<int>& devices) {
  const auto start = *receive_message<worker::Setup, worker::Shutdown>(world, 0, kControl);
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

Ranks::~Ranks() {
  // Rank 0 ended before the others were started (bad input): they stop too.
  if (!started_) refuse();
}

std::vector<std::function<std::unique_ptr<runner::Lane>()>> Ranks::start(const worker::Setup& setup,
                                                                         std::chrono::milliseconds silence) {
  started_ = true;
  std::vector<std::function<std::unique_ptr<runner::Lane>()>> lanes;
  for (int r = 1; r < world_.size(); ++r) send_message(world_, r, kControl, setup);
  for (int r = 1; r < world_.size(); ++r) {
    const std::int64_t n = world_.receive_int(r, kControl);
    for (std::int64_t i = 0; i < n; ++i)
      lanes.push_back([this, r, i, silence] {
        return std::make_unique<RemoteLane>(world_, r, static_cast<int>(i), silence);
      });
  }
  return lanes;
}

void Ranks::refuse() {
  started_ = true;
  for (int r = 1; r < world_.size(); ++r) {
    try {
      send_message(world_, r, kControl, worker::Shutdown{});
    } catch (const std::exception&) {
      // A rank already gone needs no shutdown.
    }
  }
}

}  // namespace cutune::cluster
