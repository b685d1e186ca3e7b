#include "cutune/runner/compile_pool.hpp"

#include <atomic>

#include <fmt/format.h>

#include <signal.h>

#include <algorithm>

#include "cutune/model/errors.hpp"
#include "cutune/process/subprocess.hpp"
#include "cutune/runner/worker_executable.hpp"
#include "cutune/worker/protocol.hpp"

namespace cutune::runner {

CompilePoolOptions::Mode parse_compile_mode(const std::string& text) {
  if (text == "process") return CompilePoolOptions::Mode::Process;
  if (text == "thread") return CompilePoolOptions::Mode::Thread;
  throw InputError(fmt::format("--mode {}: must be process or thread", text));
}

std::size_t default_compile_workers() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
}

std::size_t tuning_compile_workers() { return std::max<std::size_t>(1, default_compile_workers() * 3 / 4); }

struct CompilePool::Slot {
  std::thread thread;
  std::unique_ptr<process::Subprocess> proc;  ///< Mode::Process: started on first use
  /// proc's pid while it runs, 0 otherwise: abandon() kills it from another thread, which
  /// must not touch proc itself (the slot's thread resets it).
  std::atomic<pid_t> pid{0};
};

CompilePool::CompilePool(const KernelProblem& problem, std::string arch, CompilePoolOptions options)
    : problem_(problem), arch_(std::move(arch)), options_(std::move(options)), nvrtc_version_(jit::nvrtc_version()) {
  if (options_.workers == 0) options_.workers = default_compile_workers();
  if (options_.capacity == 0) options_.capacity = 4 * options_.workers;
  if (options_.cache_dir) cache_.emplace(*options_.cache_dir);
  for (std::size_t i = 0; i < options_.workers; ++i) slots_.push_back(std::make_unique<Slot>());
  for (auto& s : slots_) s->thread = std::thread([this, slot = s.get()] { work(*slot); });
}

CompilePool::~CompilePool() { shutdown(); }

void CompilePool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& s : slots_) s->thread.join();
  // SIGKILL to every worker first, then reap: one process exit's time, not one per worker.
  for (auto& s : slots_)
    if (s->proc) ::kill(s->proc->pid(), SIGKILL);
  for (auto& s : slots_) s->proc.reset();
}

void CompilePool::drop_pending() {
  {
    std::lock_guard lock(mutex_);
    if (stop_) return;
    stop_ = true;
  }
  work_cv_.notify_all();
  // Compiles in progress end now: their threads see the worker die and return.
  for (auto& s : slots_)
    if (const pid_t pid = s->pid.load(); pid > 0) ::kill(pid, SIGKILL);
  for (auto& s : slots_) s->thread.join();
  for (auto& s : slots_) s->proc.reset();  // a fresh worker on the next compile
  {
    // Nothing submitted so far comes out of next(): the pool starts over, empty.
    std::lock_guard lock(mutex_);
    todo_.clear();
    done_.clear();
    in_flight_.clear();
    next_out_ = next_in_;
    busy_ = 0;
    stop_ = false;
  }
  done_cv_.notify_all();  // a next() waiting for what was dropped returns nullopt
  for (auto& s : slots_) s->thread = std::thread([this, slot = s.get()] { work(*slot); });
}

void CompilePool::submit(const Config& config) {
  {
    std::lock_guard lock(mutex_);
    todo_.emplace_back(next_in_++, config);
  }
  work_cv_.notify_one();
}

std::size_t CompilePool::pending() const {
  std::lock_guard lock(mutex_);
  return todo_.size() + busy_ + done_.size();
}

CompilePool::Stats CompilePool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::optional<CompiledConfig> CompilePool::next() {
  std::unique_lock lock(mutex_);
  // The first submission (the default configuration: the speedup's baseline and, without a
  // reference, the definition of a correct output) comes out first; after it, whichever is
  // compiled, lowest submission first. Strict submission order left the GPU waiting behind
  // one slow compile: 54 configurations compiled and 6 evaluated in 30 s of a convolution
  // whose compiles took up to 16 s (Kernel Tuner's example on an H100).
  const bool first = next_out_ == 0;
  done_cv_.wait(lock, [&] {
    return (first ? done_.count(0) > 0 : !done_.empty()) || (todo_.empty() && busy_ == 0 && done_.empty());
  });
  auto it = first ? done_.find(0) : done_.begin();
  if (it == done_.end()) return std::nullopt;
  CompiledConfig c = std::move(it->second);
  done_.erase(it);
  ++next_out_;
  lock.unlock();
  work_cv_.notify_one();  // room for one more result
  return c;
}

jit::CompileResult CompilePool::compile_in(Slot& slot, const jit::CompileRequest& request, bool& worker_failure) {
  if (options_.mode == CompilePoolOptions::Mode::Thread) return jit::compile(request);
  auto failed = [&](const std::string& why) {
    worker_failure = true;
    jit::CompileResult r;
    r.error = why;
    slot.pid.store(0);
    slot.proc.reset();
    std::lock_guard lock(mutex_);
    ++stats_.worker_restarts;
    return r;
  };
  if (!slot.proc) {
    slot.proc = std::make_unique<process::Subprocess>(std::vector<std::string>{worker_executable(), "compile"});
    slot.pid.store(slot.proc->pid());
  }
  if (!worker::send(*slot.proc, worker::encode(worker::Compile{request})))
    return failed(fmt::format("compile worker died before the request: {}", slot.proc->exit_description()));
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options_.timeout);
  try {
    const auto reply = worker::receive(*slot.proc, timeout);
    if (reply) return worker::decode<worker::Compiled>(*reply).result;
  } catch (const worker::ProtocolError& e) {
    slot.proc->kill();
    return failed(fmt::format("compile worker: {}", e.what()));
  }
  if (slot.proc->timed_out()) {
    slot.proc->kill();
    return failed(fmt::format("compile timed out after {} s (worker killed)", options_.timeout.count()));
  }
  return failed(fmt::format("compile worker died: {}", slot.proc->exit_description()));
}

void CompilePool::work(Slot& slot) {
  std::unique_lock lock(mutex_);
  while (true) {
    work_cv_.wait(lock, [&] { return stop_ || (!todo_.empty() && busy_ + done_.size() < options_.capacity); });
    if (stop_) return;
    auto [seq, config] = std::move(todo_.front());
    todo_.pop_front();
    ++busy_;
    lock.unlock();

    CompiledConfig out{config, {}, {}, false};
    try {
      const jit::CompileRequest request = compile_request(problem_, config, arch_);
      out.key = jit::compile_key(request, nvrtc_version_);
      std::shared_future<jit::CompileResult> earlier;
      std::promise<jit::CompileResult> mine;
      {
        std::lock_guard guard(mutex_);
        if (auto it = in_flight_.find(out.key); it != in_flight_.end()) earlier = it->second;
        else in_flight_.emplace(out.key, mine.get_future().share());
      }
      if (earlier.valid()) {
        out.result = earlier.get();
        out.shared = true;
        std::lock_guard guard(mutex_);
        ++stats_.shared;
      } else {
        std::optional<jit::CompileResult> cached;
        if (cache_) cached = cache_->get(out.key);
        if (cached) {
          out.result = std::move(*cached);
        } else {
          bool worker_failure = false;
          try {
            out.result = compile_in(slot, request, worker_failure);
          } catch (const std::exception& e) {  // e.g. the worker cannot start
            out.result = jit::CompileResult{};
            out.result.error = e.what();
            worker_failure = true;
          }
          // A worker that died or timed out says nothing about the source: not cached.
          if (cache_ && !worker_failure) cache_->put(out.key, out.result);
        }
        {
          std::lock_guard guard(mutex_);
          if (cached) ++stats_.cache_hits;
          else {
            ++stats_.compiled;
            stats_.compile_ms += out.result.compile_ms;
          }
          in_flight_.erase(out.key);
        }
        mine.set_value(out.result);
      }
    } catch (const std::exception& e) {
      out.result = jit::CompileResult{};
      out.result.error = e.what();
    }

    lock.lock();
    --busy_;
    done_.emplace(seq, std::move(out));
    done_cv_.notify_one();  // only next() waits for results
  }
}

}  // namespace cutune::runner
