#pragma once
// The NVRTC request for one configuration of a problem. One definition for the tuner's
// compile pool and the loader: the cubin cache is keyed by compile_key(request), so the
// two must build byte-identical requests for a kernel the tuner compiled to be a cache
// hit in an application (issue 8).
#include <string>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/model/problem.hpp"

namespace cutune::jit {

CompileRequest compile_request(const KernelProblem& problem, const Config& config, const std::string& arch);

}  // namespace cutune::jit
