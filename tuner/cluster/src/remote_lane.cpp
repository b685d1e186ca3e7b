#include "cutune/cluster/remote_lane.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cutune/cuda/driver.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/worker/protocol.hpp"

namespace cutune::cluster {

namespace {
template <class M>
std::vector<char> bytes_of(const M& m) {
  return worker::to_bytes(worker::encode(m));
}
[[noreturn]] void raise(const worker::WorkerError& e, const std::string& where) {
  if (e.no_driver) throw cuda::NoDriver(where + ": " + e.message);
  if (e.input_error) throw InputError(where + ": " + e.message);
  throw std::runtime_error(where + ": GPU worker: " + e.message);
}
}  // namespace

RemoteLane::RemoteLane(World& world, int rank, int index, std::chrono::milliseconds silence)
    : world_(world), rank_(rank), index_(index), silence_(silence) {}

std::string RemoteLane::name() const {
  return gpu_.empty() ? fmt::format("rank {} lane {}", rank_, index_) : fmt::format("rank {} {}", rank_, gpu_);
}

const DeviceIdentity& RemoteLane::wait_identified() {
  if (identity_) return *identity_;
  // The relay sends the GPU's ordinal on its node first, then the worker's Identified.
  gpu_ = fmt::format("GPU {}", world_.receive_int(rank_, kLaneBase + index_));
  const auto m = world_.receive(rank_, kLaneBase + index_);
  const auto answer = worker::decode_one_of<worker::Identified, worker::WorkerError>(worker::from_bytes(m->data(), m->size()));
  if (const auto* e = std::get_if<worker::WorkerError>(&answer)) raise(*e, name());
  identity_ = std::get<worker::Identified>(answer).device;
  return *identity_;
}

void RemoteLane::wait_ready() {
  if (is_ready_) return;
  (void)wait_identified();
  const auto m = world_.receive(rank_, kLaneBase + index_);
  const auto answer = worker::decode_one_of<worker::Ready, worker::WorkerError>(worker::from_bytes(m->data(), m->size()));
  if (const auto* e = std::get_if<worker::WorkerError>(&answer)) raise(*e, name());
  ready_ = std::get<worker::Ready>(answer);
  is_ready_ = true;
}

void RemoteLane::submit(const worker::Evaluate& request) {
  // Throws when the rank takes nothing for as long as it may stay silent: the lane is lost.
  world_.send(rank_, kLaneBase + index_, bytes_of(request), std::chrono::steady_clock::now() + timeout_ + silence_);
  ++in_flight_;
}

std::optional<GpuEvaluation> RemoteLane::collect() {
  if (in_flight_ == 0) throw std::logic_error("RemoteLane::collect: nothing in flight");
  // The relay's worker kills a hung evaluation after timeout_ and answers; the ones queued
  // before it each may take as long.
  const auto deadline = std::chrono::steady_clock::now() + timeout_ * static_cast<int>(in_flight_) + silence_;
  const auto m = world_.receive(rank_, kLaneBase + index_, deadline);
  if (!m) return std::nullopt;  // the rank stopped answering
  --in_flight_;
  const auto answer =
      worker::decode_one_of<worker::Evaluated, worker::WorkerError>(worker::from_bytes(m->data(), m->size()));
  if (std::holds_alternative<worker::WorkerError>(answer)) return std::nullopt;  // its relay gave up
  GpuEvaluation ev = std::get<worker::Evaluated>(answer).evaluation;
  // The relay's GpuWorker restarted its worker after this one (a crash, a hang, a sticky
  // error): counted here as the local lane counts its own.
  if (ev.status == Status::Timeout || ev.error.starts_with("GPU worker died") || ev.context_lost) ++restarts_;
  ev.context_lost = false;
  return ev;
}

void RemoteLane::adopt_reference(const worker::Candidate& candidate) {
  world_.send(rank_, kLaneBase + index_, bytes_of(worker::AdoptReference{candidate}),
              std::chrono::steady_clock::now() + timeout_ + silence_);
}

void RemoteLane::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  world_.send(rank_, kLaneBase + index_, bytes_of(worker::SetTimeout{timeout.count()}),
              std::chrono::steady_clock::now() + silence_);
}

void RemoteLane::release() {
  if (released_) return;
  released_ = true;
  try {
    world_.send(rank_, kLaneBase + index_, bytes_of(worker::Shutdown{}), std::chrono::steady_clock::now() + silence_);
  } catch (const std::exception&) {
    // A rank already gone needs no shutdown.
  }
}

}  // namespace cutune::cluster
