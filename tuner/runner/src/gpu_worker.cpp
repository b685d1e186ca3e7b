#include "cutune/runner/gpu_worker.hpp"

#include <fmt/format.h>

#include "cutune/model/errors.hpp"
#include "cutune/runner/worker_protocol.hpp"

namespace cutune::runner {

GpuWorker::GpuWorker(const KernelProblem& problem, std::string problem_text, int ordinal,
                     const MeasureOptions& options, std::uint64_t data_seed)
    : problem_(problem), problem_text_(std::move(problem_text)), ordinal_(ordinal), options_(options),
      data_seed_(data_seed) {
  start();
}

GpuWorker::~GpuWorker() = default;

void GpuWorker::start() {
  // Spawned from the calling thread: PR_SET_PDEATHSIG follows the thread that forked, so
  // this must be a thread that lives as long as the worker (never a short-lived helper).
  proc_ = std::make_unique<process::Subprocess>(std::vector<std::string>{protocol::worker_executable(), "gpu"});
  ready_ = false;
  const nlohmann::json init{{"problem_json", problem_.json_file().string()},
                            {"problem", problem_text_},
                            {"device", ordinal_},
                            {"data_seed", data_seed_},
                            {"measure", protocol::to_json(options_)}};
  init_sent_ = proc_->send(init.dump());
}

void GpuWorker::wait_ready() {
  if (ready_) return;
  // Setting up may compute a large CPU reference: no timeout.
  std::optional<process::Frame> reply;
  if (init_sent_) reply = proc_->receive();
  if (!reply) throw std::runtime_error(fmt::format("GPU worker ({}) died while setting up: {}",
                                                   protocol::worker_executable(), proc_->exit_description()));
  const auto j = nlohmann::json::parse(*reply);
  if (j.contains("input_error")) throw InputError(j["input_error"].get<std::string>());
  if (j.contains("error")) throw std::runtime_error("GPU worker: " + j["error"].get<std::string>());
  verification_source_ = j.at("verification").get<std::string>();
  l2_method_ = j.at("l2_method").get<std::string>();
  total_argument_bytes_ = j.at("total_argument_bytes").get<std::size_t>();
  setup_ms_json_ = j.value("setup_ms", nlohmann::json::object()).dump();
  ready_ = true;
  if (reference_) {
    // Re-establish the answer the earlier worker learned from the first configuration.
    const nlohmann::json header{
        {"op", "evaluate"}, {"config", problem_.space().key(reference_->config)}, {"thorough", false},
        {"lowered_names", reference_->lowered_names}};
    std::optional<process::Frame> answer;
    if (proc_->send(header.dump()) && proc_->send(process::Frame(reference_->cubin.begin(), reference_->cubin.end())))
      answer = proc_->receive(timeout_);
    if (!answer || nlohmann::json::parse(*answer).value("status", "") != "ok")
      throw std::runtime_error("GPU worker: the configuration that defines the expected outputs failed after a restart");
  }
}

std::optional<nlohmann::json> GpuWorker::call(const nlohmann::json& header,
                                              const std::vector<const std::vector<char>*>& cubins,
                                              std::chrono::milliseconds timeout, GpuEvaluation& failure) {
  // The answer read next must be this request's.
  if (!pending_.empty()) throw std::logic_error("GpuWorker: a request while evaluations are in flight");
  const bool sent = send(header, cubins);
  return await(sent, std::chrono::steady_clock::now() + timeout, timeout, failure);
}

bool GpuWorker::send(const nlohmann::json& header, const std::vector<const std::vector<char>*>& cubins) {
  wait_ready();
  bool sent = proc_->send(header.dump());
  for (const auto* c : cubins) sent = sent && proc_->send(process::Frame(c->begin(), c->end()));
  return sent;
}

std::optional<nlohmann::json> GpuWorker::await(bool sent, std::chrono::steady_clock::time_point deadline,
                                               std::chrono::milliseconds timeout, GpuEvaluation& failure) {
  std::optional<process::Frame> reply;
  if (sent)
    reply = proc_->receive(std::max(std::chrono::milliseconds(0), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                      deadline - std::chrono::steady_clock::now())));
  if (reply) {
    auto j = nlohmann::json::parse(*reply);
    if (!j.contains("fatal")) return j;
    failure.status = Status::Runtime;
    failure.error = j["fatal"].get<std::string>();
  } else if (proc_->timed_out()) {
    proc_->kill();
    failure.status = Status::Timeout;
    failure.error = fmt::format("no answer within {:.1f} s: worker killed", static_cast<double>(timeout.count()) / 1e3);
  } else {
    failure.status = Status::Runtime;
    failure.error = fmt::format("GPU worker died: {}", proc_->exit_description());
  }
  ++restarts_;
  proc_.reset();
  start();
  wait_ready();
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
  nlohmann::json header{{"op", "evaluate"},
                        {"config", problem_.space().key(config)},
                        {"thorough", thorough},
                        {"lowered_names", lowered_names}};
  if (best_ms) header["best_ms"] = *best_ms;
  Pending p{std::move(header), cubin, config, lowered_names, false, {}, timeout_};
  p.sent = send(p.header, {&p.cubin});
  p.timeout = timeout_;
  // Behind another: its deadline is set when that one's answer arrives (collect()).
  p.deadline = std::chrono::steady_clock::time_point::max();
  if (pending_.empty()) p.deadline = std::chrono::steady_clock::now() + timeout_;
  pending_.push_back(std::move(p));
}

void GpuWorker::resend_pending() {
  const auto now = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    Pending& p = pending_[i];
    p.sent = send(p.header, {&p.cubin});
    p.deadline = i == 0 ? now + p.timeout : std::chrono::steady_clock::time_point::max();
  }
}

GpuEvaluation GpuWorker::collect() {
  if (pending_.empty()) throw std::logic_error("GpuWorker::collect: nothing in flight");
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  GpuEvaluation failure;
  const std::size_t restarts_before = restarts_;
  auto j = await(p.sent, p.deadline, p.timeout, failure);
  GpuEvaluation ev = j ? protocol::evaluation_from_json(*j) : failure;
  if (j && ev.context_lost) {
    // The worker exits after a sticky error; a fresh one takes the requests behind it.
    ++restarts_;
    proc_.reset();
    start();
    wait_ready();
    ev.context_lost = false;
  }
  if (restarts_ != restarts_before) {
    resend_pending();
  } else if (!pending_.empty()) {
    pending_.front().deadline = std::chrono::steady_clock::now() + pending_.front().timeout;
  }
  // No CPU reference: the first configuration that ran correctly defines the answer, and a
  // restarted worker learns it again from this one.
  if (!reference_ && verification_source_.find("default configuration") != std::string::npos &&
      ev.status == Status::Ok)
    reference_ = GpuStage::Candidate{p.config, std::move(p.cubin), std::move(p.lowered_names)};
  return ev;
}

void GpuWorker::release() {
  if (proc_) proc_->detach();
  proc_.reset();
}

std::vector<GpuEvaluation> GpuWorker::remeasure(const std::vector<GpuStage::Candidate>& candidates) {
  nlohmann::json header{{"op", "remeasure"}, {"configs", nlohmann::json::array()},
                        {"lowered_names", nlohmann::json::array()}};
  std::vector<const std::vector<char>*> cubins;
  for (const auto& c : candidates) {
    header["configs"].push_back(problem_.space().key(c.config));
    header["lowered_names"].push_back(c.lowered_names);
    cubins.push_back(&c.cubin);
  }
  // Each candidate may run to the thorough time cap, plus an energy window.
  const double per = options_.thorough.time_cap_s + options_.energy_window_s + 1.0;
  const auto timeout = std::max(timeout_, std::chrono::milliseconds(static_cast<std::int64_t>(
                                              2e3 * per * static_cast<double>(candidates.size()))));
  GpuEvaluation failure;
  auto j = call(header, cubins, timeout, failure);
  if (!j) return std::vector<GpuEvaluation>(candidates.size(), failure);
  std::vector<GpuEvaluation> out;
  for (const auto& e : j->at("evaluations")) out.push_back(protocol::evaluation_from_json(e));
  return out;
}

double GpuWorker::copy_bandwidth_gbps(std::size_t bytes) {
  GpuEvaluation failure;
  auto j = call({{"op", "copy_bandwidth"}, {"bytes", bytes}}, {}, std::max(timeout_, std::chrono::milliseconds(60000)),
                failure);
  return j ? j->at("gbps").get<double>() : 0.0;
}

}  // namespace cutune::runner
