#include "cutune/cluster/remote_lane.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "cutune/runner/gpu_worker.hpp"
#include "typed_messages.hpp"

namespace cutune::cluster {

namespace {
using Clock = std::chrono::steady_clock;
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
  const auto answer = *receive_message<worker::Identified, worker::WorkerError>(world_, rank_, kLaneBase + index_);
  if (const auto* e = std::get_if<worker::WorkerError>(&answer)) runner::raise_worker_error(*e, name());
  identity_ = std::get<worker::Identified>(answer).device;
  return *identity_;
}

void RemoteLane::wait_ready() {
  if (is_ready_) return;
  (void)wait_identified();
  const auto answer = *receive_message<worker::Ready, worker::WorkerError>(world_, rank_, kLaneBase + index_);
  if (const auto* e = std::get_if<worker::WorkerError>(&answer)) runner::raise_worker_error(*e, name());
  ready_ = std::get<worker::Ready>(answer);
  is_ready_ = true;
}

void RemoteLane::submit(const worker::Evaluate& request) {
  // Throws when the rank takes nothing for as long as it may stay silent: the lane is lost.
  send_message(world_, rank_, kLaneBase + index_, request, Clock::now() + timeout_ + silence_, pace_.longest_pause());
  ++in_flight_;
}

std::optional<GpuEvaluation> RemoteLane::collect() {
  if (in_flight_ == 0) throw std::logic_error("RemoteLane::collect: nothing in flight");
  // The relay's worker kills a hung evaluation after timeout_ and answers; the ones queued
  // before it each may take as long.
  const auto answer = receive_message<worker::Evaluated, worker::WorkerError>(
      world_, rank_, kLaneBase + index_, Clock::now() + timeout_ * static_cast<int>(in_flight_) + silence_,
      pace_.longest_pause());
  if (!answer) return std::nullopt;  // the rank stopped answering
  pace_.answered(Clock::now());
  --in_flight_;
  if (std::holds_alternative<worker::WorkerError>(*answer)) return std::nullopt;  // its relay gave up
  GpuEvaluation ev = std::get<worker::Evaluated>(*answer).evaluation;
  // The relay's GpuWorker restarted its worker after this one (a crash, a hang, a sticky
  // error): counted here as the local lane counts its own.
  if (ev.status == Status::Timeout || ev.error.starts_with("GPU worker died") || ev.context_lost) ++restarts_;
  ev.context_lost = false;
  return ev;
}

void RemoteLane::adopt_reference(const worker::Candidate& candidate) {
  send_message(world_, rank_, kLaneBase + index_, worker::AdoptReference{candidate}, Clock::now() + timeout_ + silence_);
}

void RemoteLane::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  send_message(world_, rank_, kLaneBase + index_, worker::SetTimeout{timeout.count()}, Clock::now() + silence_);
}

void RemoteLane::release() {
  if (released_) return;
  released_ = true;
  try {
    send_message(world_, rank_, kLaneBase + index_, worker::Shutdown{}, Clock::now() + silence_);
  } catch (const std::exception&) {
    // A rank already gone needs no shutdown.
  }
}

}  // namespace cutune::cluster
