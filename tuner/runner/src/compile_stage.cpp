#include "cutune/runner/compile_stage.hpp"

namespace cutune::runner {

jit::CompileRequest compile_request(const KernelProblem& problem, const Config& config,
                                    const std::string& arch) {
  jit::CompileRequest r;
  r.source = problem.configured_source(config);
  r.source_name = problem.kernel_file().filename().string();
  r.kernel_names = problem.kernel_names();
  r.options = problem.compiler_options();
  r.arch = arch;
  return r;
}

CompileStage::CompileStage(const KernelProblem& problem, std::string arch, std::size_t capacity)
    : problem_(problem), arch_(std::move(arch)), capacity_(capacity == 0 ? 1 : capacity) {
  worker_ = std::thread([this] { work(); });
}

CompileStage::~CompileStage() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void CompileStage::submit(const Config& config) {
  {
    std::lock_guard lock(mutex_);
    todo_.push_back(config);
  }
  cv_.notify_all();
}

std::size_t CompileStage::pending() const {
  std::lock_guard lock(mutex_);
  return todo_.size() + done_.size() + (busy_ ? 1 : 0);
}

std::optional<CompiledConfig> CompileStage::next() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return !done_.empty() || (todo_.empty() && !busy_); });
  if (done_.empty()) return std::nullopt;
  CompiledConfig c = std::move(done_.front());
  done_.pop_front();
  lock.unlock();
  cv_.notify_all();  // room for the worker again
  return c;
}

void CompileStage::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || (!todo_.empty() && done_.size() < capacity_); });
    if (stop_) return;
    Config config = todo_.front();
    todo_.pop_front();
    busy_ = true;
    lock.unlock();
    CompiledConfig out{config, {}};
    try {
      out.result = jit::compile(compile_request(problem_, config, arch_));
    } catch (const std::exception& e) {
      out.result.ok = false;
      out.result.error = e.what();
    }
    lock.lock();
    busy_ = false;
    done_.push_back(std::move(out));
    cv_.notify_all();
  }
}

}  // namespace cutune::runner
