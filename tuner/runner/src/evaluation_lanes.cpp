#include "cutune/runner/evaluation_lanes.hpp"

#include <fmt/format.h>

#include <exception>
#include <stdexcept>

namespace cutune::runner {

using Clock = std::chrono::steady_clock;

LocalLane::LocalLane(const KernelProblem& problem, std::string problem_text, int ordinal,
                     const worker::MeasureOptions& options, std::uint64_t data_seed)
    : ordinal_(ordinal), worker_(problem, std::move(problem_text), ordinal, options, data_seed) {}

std::string LocalLane::name() const { return fmt::format("GPU {}", ordinal_); }

void LocalLane::submit(const worker::Evaluate& r) {
  worker_.submit(r.candidate.config, r.candidate.cubin, r.candidate.lowered_names, r.best_ms, r.thorough);
}

struct EvaluationLanes::Slot {
  std::size_t index = 0;
  LaneFactory factory;
  std::unique_ptr<Lane> lane;
  std::thread thread;
  // Guarded by the lanes' mutex:
  std::optional<DeviceIdentity> identity;
  bool ready = false, failed = false, lost = false, released = false, exited = false;
  std::exception_ptr error;
  std::string name;
  std::size_t restarts = 0;
  std::function<void(Lane&)> task;
  bool task_done = false;
  /// What it has in flight, oldest first, with when each became startable.
  struct InFlight {
    CompiledConfig compiled;
    Clock::time_point submitted;
  };
  std::deque<InFlight> in_flight;
  Clock::time_point last_answer{};
  std::uint64_t timeout_version = 0;
};

EvaluationLanes::EvaluationLanes(std::vector<LaneFactory> factories) {
  if (factories.empty()) throw std::logic_error("EvaluationLanes: no lane");
  for (std::size_t i = 0; i < factories.size(); ++i) {
    auto s = std::make_unique<Slot>();
    s->index = i;
    s->factory = std::move(factories[i]);
    s->released = i == 0;
    slots_.push_back(std::move(s));
  }
  for (auto& s : slots_) s->thread = std::thread([this, slot = s.get()] { run(*slot); });
}

EvaluationLanes::~EvaluationLanes() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  lanes_cv_.notify_all();
  for (auto& s : slots_)
    if (s->thread.joinable()) s->thread.join();
}

std::vector<DeviceIdentity> EvaluationLanes::identities() {
  std::unique_lock lock(mutex_);
  std::vector<DeviceIdentity> out;
  for (auto& s : slots_) {
    loop_cv_.wait(lock, [&] { return s->identity || s->failed; });
    if (s->error) std::rethrow_exception(s->error);
    out.push_back(*s->identity);
  }
  return out;
}

void EvaluationLanes::wait_ready() {
  std::unique_lock lock(mutex_);
  for (auto& s : slots_) {
    loop_cv_.wait(lock, [&] { return s->ready || s->failed; });
    if (s->error) std::rethrow_exception(s->error);
  }
}

const worker::Ready& EvaluationLanes::ready(std::size_t lane) const { return slots_.at(lane)->lane->ready(); }

std::string EvaluationLanes::name(std::size_t lane) const {
  std::lock_guard lock(mutex_);
  return slots_.at(lane)->name;
}

std::size_t EvaluationLanes::capacity() const {
  std::size_t n = 0;
  for (const auto& s : slots_) n += s->lane->capacity();  // made before its identity was published
  return n;
}

void EvaluationLanes::attach(CompilePool& pool) {
  {
    std::lock_guard lock(mutex_);
    pool_ = &pool;
  }
  lanes_cv_.notify_all();
}

void EvaluationLanes::fed() { lanes_cv_.notify_all(); }

void EvaluationLanes::set_best_ms(std::optional<double> best_ms) {
  std::lock_guard lock(mutex_);
  best_ms_ = best_ms;
}

void EvaluationLanes::set_timeout(std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  timeout_ = timeout;
  ++timeout_version_;
}

void EvaluationLanes::stop_taking() {
  {
    std::lock_guard lock(mutex_);
    stop_taking_ = true;
    retry_.clear();
  }
  lanes_cv_.notify_all();
}

std::size_t EvaluationLanes::restarts(std::size_t lane) const {
  std::lock_guard lock(mutex_);
  return slots_.at(lane)->restarts;
}

bool EvaluationLanes::lost(std::size_t lane) const {
  std::lock_guard lock(mutex_);
  return slots_.at(lane)->lost;
}

bool EvaluationLanes::idle_locked() const {
  if (taking_ || !outcomes_.empty()) return false;
  for (const auto& s : slots_)
    if (!s->in_flight.empty()) return false;
  return stop_taking_ || (retry_.empty() && (!pool_ || pool_->pending() == 0));
}

std::optional<LaneOutcome> EvaluationLanes::next(std::optional<Clock::time_point> deadline) {
  std::unique_lock lock(mutex_);
  auto ready = [&] {
    bool any_alive = false;
    for (const auto& s : slots_) any_alive = any_alive || !(s->failed || s->lost);
    return !outcomes_.empty() || idle_locked() || !any_alive;
  };
  if (deadline) {
    if (!loop_cv_.wait_until(lock, *deadline, ready)) return std::nullopt;
  } else {
    loop_cv_.wait(lock, ready);
  }
  if (outcomes_.empty()) {
    for (const auto& s : slots_)
      if (!(s->failed || s->lost)) return std::nullopt;
    for (const auto& s : slots_)
      if (s->error) std::rethrow_exception(s->error);
    throw std::runtime_error("every GPU worker was lost");
  }
  LaneOutcome out = std::move(outcomes_.front());
  outcomes_.pop_front();
  return out;
}

void EvaluationLanes::run_on(std::size_t lane, const std::function<void(Lane&)>& task) {
  Slot& s = *slots_.at(lane);
  std::unique_lock lock(mutex_);
  if (s.failed || s.lost || s.exited) throw std::runtime_error(fmt::format("{} is gone", s.name));
  s.task = task;
  s.task_done = false;
  lanes_cv_.notify_all();
  loop_cv_.wait(lock, [&] { return s.task_done; });
  if (s.error) std::rethrow_exception(s.error);
}

void EvaluationLanes::release_others_locked(const std::optional<worker::Candidate>& reference) {
  if (others_released_) return;
  others_released_ = true;
  reference_ = reference;
  for (auto& s : slots_) s->released = true;
  lanes_cv_.notify_all();
}

void EvaluationLanes::run(Slot& slot) {
  try {
    slot.lane = slot.factory();
    const DeviceIdentity id = slot.lane->wait_identified();
    {
      std::lock_guard lock(mutex_);
      slot.identity = id;
      slot.name = slot.lane->name();
    }
    loop_cv_.notify_all();
    slot.lane->wait_ready();
    {
      std::lock_guard lock(mutex_);
      slot.ready = true;
    }
    loop_cv_.notify_all();
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      slot.error = std::current_exception();
      slot.failed = true;
    }
    if (slot.lane) slot.lane->release();
    loop_cv_.notify_all();
    return;
  }
  Lane& lane = *slot.lane;
  bool adopted = slot.index == 0;
  std::unique_lock lock(mutex_);
  while (true) {
    const auto can_take = [&] {
      return slot.released && !stop_taking_ && !taking_ && slot.in_flight.size() < lane.capacity() &&
             (!retry_.empty() || (pool_ && pool_->pending() > 0));
    };
    lanes_cv_.wait(lock, [&] {
      return stop_ || (slot.task && slot.in_flight.empty()) || can_take() || !slot.in_flight.empty();
    });
    if (stop_ && slot.in_flight.empty()) break;
    try {
      if (slot.task && slot.in_flight.empty()) {
        auto task = std::move(slot.task);
        slot.task = nullptr;
        lock.unlock();
        try {
          task(lane);
        } catch (...) {
          lock.lock();
          slot.error = std::current_exception();
          slot.task_done = true;
          loop_cv_.notify_all();
          continue;
        }
        lock.lock();
        slot.task_done = true;
        loop_cv_.notify_all();
        continue;
      }
      if (!adopted && slot.released) {
        // The configuration that defined a correct output on lane 0, first, once.
        adopted = true;
        if (reference_) {
          const worker::Candidate reference = *reference_;
          lock.unlock();
          lane.adopt_reference(reference);
          lock.lock();
          continue;
        }
      }
      if (can_take()) {
        std::optional<CompiledConfig> compiled;
        if (!retry_.empty()) {
          compiled = std::move(retry_.front());
          retry_.pop_front();
        } else {
          taking_ = true;
          lock.unlock();
          try {
            compiled = pool_->next();
          } catch (...) {
            lock.lock();
            taking_ = false;
            throw;
          }
          lock.lock();
          taking_ = false;
          lanes_cv_.notify_all();
          loop_cv_.notify_all();
        }
        if (!compiled) continue;
        if (!compiled->result.ok) {
          outcomes_.push_back(
              LaneOutcome{std::move(*compiled), std::nullopt, 0.0, slot.index, 0.0, 0.0, std::nullopt});
          loop_cv_.notify_all();
          continue;
        }
        if (timeout_ && slot.timeout_version != timeout_version_) {
          slot.timeout_version = timeout_version_;
          lane.set_timeout(*timeout_);
        }
        worker::Evaluate request{
            worker::Candidate{compiled->config, compiled->result.cubin, compiled->result.lowered_names}, best_ms_,
            false};
        // In flight before the lock is let go: the loop must not see the lanes idle while
        // this one is on its way to the worker (it ended a search one result short).
        slot.in_flight.push_back({std::move(*compiled), Clock::now()});
        lock.unlock();
        lane.submit(request);
        lock.lock();
        slot.in_flight.back().submitted = Clock::now();
        continue;
      }
      if (!slot.in_flight.empty()) {
        lock.unlock();
        std::optional<GpuEvaluation> ev = lane.collect();
        lock.lock();
        const auto now = Clock::now();
        auto done = std::move(slot.in_flight.front());
        slot.in_flight.pop_front();
        slot.restarts = lane.restarts();
        if (!ev) {
          // Lost (a rank that stopped answering): everything it held goes to the others.
          slot.lost = true;
          retry_.push_front(std::move(done.compiled));
          for (auto& f : slot.in_flight) retry_.push_back(std::move(f.compiled));
          slot.in_flight.clear();
          if (!others_released_) release_others_locked(std::nullopt);
          lanes_cv_.notify_all();
          loop_cv_.notify_all();
          break;
        }
        const double eval_ms =
            std::chrono::duration<double, std::milli>(now - std::max(done.submitted, slot.last_answer)).count();
        slot.last_answer = now;
        const bool defines = ev->status == Status::Ok && ev->defined_expected;
        const bool needs_reference = lane.ready().verification.any(VerifyMode::Default);
        std::optional<worker::Candidate> reference;
        if (defines)
          reference = worker::Candidate{done.compiled.config, std::move(done.compiled.result.cubin),
                                        std::move(done.compiled.result.lowered_names)};
        done.compiled.result.cubin.clear();
        if (!others_released_ && (!needs_reference || defines)) release_others_locked(reference);
        outcomes_.push_back(
            LaneOutcome{std::move(done.compiled), std::move(ev), eval_ms, slot.index, 0.0, 0.0, std::nullopt});
        loop_cv_.notify_all();
        continue;
      }
    } catch (...) {
      // A lane that cannot go on (its worker failed in a way GpuWorker does not recover
      // from): what it held goes to the others.
      if (!lock.owns_lock()) lock.lock();
      slot.error = std::current_exception();
      slot.lost = true;
      for (auto& f : slot.in_flight) retry_.push_back(std::move(f.compiled));
      slot.in_flight.clear();
      lanes_cv_.notify_all();
      loop_cv_.notify_all();
      break;
    }
  }
  slot.exited = true;
  lock.unlock();
  slot.lane->release();
  loop_cv_.notify_all();
}

}  // namespace cutune::runner
