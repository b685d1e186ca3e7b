#include "cutune/runner/gpu_worker.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cutune/cuda/driver.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/worker_executable.hpp"

namespace cutune::runner {

GpuWorker::GpuWorker(const KernelProblem& problem, std::string problem_text, int ordinal,
                     const worker::MeasureOptions& options, std::uint64_t data_seed)
    : problem_(problem), problem_text_(std::move(problem_text)), ordinal_(ordinal), options_(options),
      data_seed_(data_seed) {
  start();
}

GpuWorker::~GpuWorker() = default;

void GpuWorker::start() {
  // Spawned from the calling thread: PR_SET_PDEATHSIG follows the thread that forked, so
  // this must be a thread that lives as long as the worker (never a short-lived helper).
  proc_ = std::make_unique<process::Subprocess>(std::vector<std::string>{worker_executable(), "gpu"});
  ready_ = false;
  identified_.reset();
  setup_sent_ = worker::send(
      *proc_, worker::encode(worker::Setup{problem_.json_file().string(), problem_text_, ordinal_, data_seed_, options_}));
}

void raise_worker_error(const worker::WorkerError& e, const std::string& where) {
  const std::string prefix = where.empty() ? "" : where + ": ";
  if (e.no_driver) throw cuda::NoDriver(prefix + e.message);
  if (e.input_error) throw InputError(prefix + e.message);
  throw std::runtime_error(prefix + "GPU worker: " + e.message);
}

const DeviceIdentity& GpuWorker::wait_identified() {
  if (identified_) return *identified_;
  std::optional<worker::Envelope> reply;
  if (setup_sent_) reply = worker::receive(*proc_);
  if (!reply) throw std::runtime_error(fmt::format("GPU worker ({}) died while starting: {}", worker_executable(),
                                                   proc_->exit_description()));
  auto answer = worker::decode_one_of<worker::Identified, worker::WorkerError>(*reply);
  if (const auto* e = std::get_if<worker::WorkerError>(&answer)) raise_worker_error(*e);
  identified_ = std::move(std::get<worker::Identified>(answer).device);
  return *identified_;
}

void GpuWorker::wait_ready() {
  if (ready_) return;
  (void)wait_identified();
  // Setting up may compute a large CPU reference: no timeout.
  std::optional<worker::Envelope> reply = worker::receive(*proc_);
  if (!reply) throw std::runtime_error(fmt::format("GPU worker ({}) died while setting up: {}", worker_executable(),
                                                   proc_->exit_description()));
  auto answer = worker::decode_one_of<worker::Ready, worker::WorkerError>(*reply);
  if (const auto* e = std::get_if<worker::WorkerError>(&answer)) raise_worker_error(*e);
  setup_ = std::move(std::get<worker::Ready>(answer));
  verification_source_ = setup_.verification.describe(problem_);
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& [name, ms] : setup_.setup_ms) phases[name] = ms;
  setup_ms_json_ = phases.dump();
  ready_ = true;
  if (reference_) establish_reference();
}

void GpuWorker::establish_reference() {
  // Re-establish the answer an earlier worker (or another GPU's) learned from the first
  // configuration.
  std::optional<worker::Envelope> evaluated;
  if (worker::send(*proc_, worker::encode(worker::Evaluate{*reference_, std::nullopt, false})))
    evaluated = worker::receive(*proc_, timeout_);
  const auto ok = [&] {
    if (!evaluated) return false;
    const auto r = worker::decode_one_of<worker::Evaluated, worker::WorkerError>(*evaluated);
    const auto* e = std::get_if<worker::Evaluated>(&r);
    return e && e->evaluation.status == Status::Ok;
  };
  if (!ok())
    throw std::runtime_error("GPU worker: the configuration that defines the expected outputs failed on this worker");
}

void GpuWorker::adopt_reference(worker::Candidate candidate) {
  if (!pending_.empty()) throw std::logic_error("GpuWorker::adopt_reference: evaluations in flight");
  if (reference_) return;
  reference_ = std::move(candidate);
  if (ready_) establish_reference();
}

void GpuWorker::restart() {
  ++restarts_;
  proc_.reset();
  start();
  wait_ready();
}

template <class Reply>
std::optional<Reply> GpuWorker::call(const worker::Envelope& request, std::chrono::milliseconds timeout,
                                     GpuEvaluation& failure) {
  // The answer read next must be this request's.
  if (!pending_.empty()) throw std::logic_error("GpuWorker: a request while evaluations are in flight");
  const bool sent = send(request);
  return await<Reply>(sent, std::chrono::steady_clock::now() + timeout, timeout, failure);
}

bool GpuWorker::send(const worker::Envelope& request) {
  wait_ready();
  return worker::send(*proc_, request);
}

template <class Reply>
std::optional<Reply> GpuWorker::await(bool sent, std::chrono::steady_clock::time_point deadline,
                                      std::chrono::milliseconds timeout, GpuEvaluation& failure) {
  try {
    std::optional<worker::Envelope> reply;
    if (sent)
      reply = worker::receive(*proc_, std::max(std::chrono::milliseconds(0),
                                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                                   deadline - std::chrono::steady_clock::now())));
    if (reply) {
      auto answer = worker::decode_one_of<Reply, worker::WorkerError>(*reply);
      if (auto* r = std::get_if<Reply>(&answer)) return std::move(*r);
      // The worker gave up (something its GPU stage did not turn into a status) and exits.
      failure.status = Status::Runtime;
      failure.error = std::get<worker::WorkerError>(answer).message;
    } else if (proc_->timed_out()) {
      proc_->kill();
      failure.status = Status::Timeout;
      failure.error = fmt::format("no answer within {:.1f} s: worker killed", static_cast<double>(timeout.count()) / 1e3);
    } else {
      failure.status = Status::Runtime;
      failure.error = fmt::format("GPU worker died: {}", proc_->exit_description());
    }
  } catch (const worker::ProtocolError& e) {
    // An answer that cannot be read: the conversation with this worker is over.
    failure.status = Status::Runtime;
    failure.error = e.what();
  }
  restart();
  return std::nullopt;
}

GpuEvaluation GpuWorker::evaluate(const Config& config, const std::vector<char>& cubin,
                                  const std::vector<std::string>& lowered_names, std::optional<double> best_ms,
                                  bool thorough) {
  if (!pending_.empty()) throw std::logic_error("GpuWorker::evaluate: evaluations in flight; collect() them first");
  submit(config, cubin, lowered_names, best_ms, thorough);
  return collect();
}

void GpuWorker::submit(const Config& config, const std::vector<char>& cubin,
                       const std::vector<std::string>& lowered_names, std::optional<double> best_ms, bool thorough) {
  if (pending_.size() >= kMaxInFlight)
    throw std::logic_error("GpuWorker::submit: already " + std::to_string(kMaxInFlight) + " evaluations in flight");
  Pending p{worker::Evaluate{worker::Candidate{config, cubin, lowered_names}, best_ms, thorough}, false, {}, timeout_};
  p.sent = send(worker::encode(p.request));
  // Behind another: its deadline is set when that one's answer arrives (collect()).
  p.deadline = std::chrono::steady_clock::time_point::max();
  if (pending_.empty()) p.deadline = std::chrono::steady_clock::now() + timeout_;
  pending_.push_back(std::move(p));
}

void GpuWorker::resend_pending() {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    p.sent = send(worker::encode(p.request));
    p.deadline = i == 0 ? now + p.timeout : std::chrono::steady_clock::time_point::max();
  }
}

GpuEvaluation GpuWorker::collect() {
  if (pending_.empty()) throw std::logic_error("GpuWorker::collect: nothing in flight");
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  GpuEvaluation failure;
  const std::size_t restarts_before = restarts_;
  auto answer = await<worker::Evaluated>(p.sent, p.deadline, p.timeout, failure);
  GpuEvaluation ev = answer ? std::move(answer->evaluation) : failure;
  if (answer && ev.context_lost) {
    // The worker exits after a sticky error; a fresh one takes the requests behind it.
    restart();
    ev.context_lost = false;
  }
  if (restarts_ != restarts_before) {
    resend_pending();
  } else if (!pending_.empty()) {
    pending_.front().deadline = std::chrono::steady_clock::now() + pending_.front().timeout;
  }
  // No reference for some output: this configuration defined its expected output in the
  // worker, and a restarted worker learns it again from this one.
  if (!reference_ && ev.defined_expected && ev.status == Status::Ok) reference_ = std::move(p.request.candidate);
  return ev;
}

void GpuWorker::release() {
  if (proc_) {
    (void)worker::send(*proc_, worker::encode(worker::Shutdown{}));  // a worker already gone needs none
    proc_->detach();
  }
  proc_.reset();
}

std::vector<GpuEvaluation> GpuWorker::remeasure(const std::vector<worker::Candidate>& candidates) {
  // Each candidate may run to the thorough time cap, plus an energy window.
  const double per = options_.thorough.time_cap_s + options_.energy_window_s + 1.0;
  const auto timeout = std::max(timeout_, std::chrono::milliseconds(static_cast<std::int64_t>(
                                              2e3 * per * static_cast<double>(candidates.size()))));
  GpuEvaluation failure;
  auto answer = call<worker::Remeasured>(worker::encode(worker::Remeasure{candidates}), timeout, failure);
  if (!answer) return std::vector<GpuEvaluation>(candidates.size(), failure);
  if (answer->evaluations.size() != candidates.size())
    throw std::runtime_error(fmt::format("GPU worker: {} evaluations for {} candidates", answer->evaluations.size(),
                                         candidates.size()));
  return std::move(answer->evaluations);
}

double GpuWorker::back_to_back_ms(const worker::Candidate& candidate, std::size_t launches) {
  GpuEvaluation failure;
  auto answer = call<worker::BackToBackTimed>(worker::encode(worker::BackToBack{candidate, launches}),
                                              std::max(timeout_, std::chrono::milliseconds(60000)), failure);
  return answer ? answer->ms_per_launch : 0.0;
}

worker::RanOnce GpuWorker::run_once(const worker::Candidate& candidate) {
  GpuEvaluation failure;
  auto answer = call<worker::RanOnce>(worker::encode(worker::RunOnce{candidate}), timeout_, failure);
  if (!answer) {  // the worker died (a crash, a sticky error) or timed out: a status, as for evaluate
    worker::RanOnce out;
    out.status = failure.status;
    out.error = failure.error;
    return out;
  }
  return std::move(*answer);
}

double GpuWorker::copy_bandwidth_gbps(std::size_t bytes) {
  GpuEvaluation failure;
  auto answer = call<worker::CopyBandwidthMeasured>(worker::encode(worker::CopyBandwidth{bytes}),
                                                    std::max(timeout_, std::chrono::milliseconds(60000)), failure);
  return answer ? answer->gbps : 0.0;
}

}  // namespace cutune::runner
