#include "cutune/runner/run_once.hpp"

#include "cutune/jit/compile_request.hpp"
#include "cutune/jit/compiler_choice.hpp"
#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/compiler.hpp"
#include "cutune/runner/gpu_worker.hpp"
#include "cutune/runner/runner.hpp"

namespace cutune::runner {

RunOnceResult run_once(const KernelProblem& problem, const std::string& problem_text, const std::string& config_text,
                       int device, std::uint64_t data_seed) {
  (void)problem.instantiate(problem_text);  // bad problem variables: said before a worker starts
  RunOnceResult r(parse_configs(problem.space(), {config_text}, "--config").front());
  // Nothing is verified or timed: no reference is computed, no L2 state prepared.
  worker::MeasureOptions options;
  options.cold_l2 = false;
  options.verify = {"none"};
  options.finalists = 0;
  GpuWorker gpu(problem, problem_text, device, options, data_seed);
  r.device = gpu.wait_identified();  // the worker says which GPU: the tuner process starts no driver
  const jit::CompilerDecision decision = jit::decide_compiler(problem, r.device.arch());
  r.compiler = compiler_name(decision.compiler);
  jit::CompileResult compiled =
      jit::compile(jit::compile_request_with(problem, r.config.index(), r.device.arch(), decision.compiler));
  r.compile_ms = compiled.compile_ms;
  if (!compiled.ok) {
    r.ran.status = Status::Compile;
    // The whole log, as the compiler's exception carries it in Kernel Tuner's run_kernel.
    r.ran.error = compiled.log.empty() ? compiled.error : compiled.error + "\n" + compiled.log;
    gpu.release();
    return r;
  }
  gpu.wait_ready();
  r.ran = gpu.run_once({r.config.index(), std::move(compiled.cubin), std::move(compiled.lowered_names)});
  gpu.release();
  return r;
}

}  // namespace cutune::runner
