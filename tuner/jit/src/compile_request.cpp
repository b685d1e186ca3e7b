#include "cutune/jit/compile_request.hpp"

namespace cutune::jit {

CompileRequest compile_request(const KernelProblem& problem, const Config& config, const std::string& arch) {
  CompileRequest r;
  r.source = problem.configured_source(config);
  r.source_name = problem.kernel_file().filename().string();
  r.kernel_names = problem.kernel_names();
  r.options = problem.compiler_options();
  r.arch = arch;
  r.headers = problem.local_headers();
  return r;
}

}  // namespace cutune::jit
