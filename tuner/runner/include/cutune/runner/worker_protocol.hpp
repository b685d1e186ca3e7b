#pragma once
// What the tuner and its worker processes say to each other (issue 5): JSON headers and
// raw cubins as frames over pipes (cutune::process). One request, one answer; the
// worker executable is `cutune-worker compile` or `cutune-worker gpu`.
#include <nlohmann/json.hpp>
#include <string>

#include "cutune/jit/nvrtc_compiler.hpp"
#include "cutune/runner/gpu_stage.hpp"

namespace cutune::runner::protocol {

nlohmann::json to_json(const jit::CompileRequest& r);
jit::CompileRequest compile_request_from_json(const nlohmann::json& j);
/// Everything but the cubin, which travels as its own frame.
nlohmann::json to_json(const jit::CompileResult& r);
jit::CompileResult compile_result_from_json(const nlohmann::json& j);

nlohmann::json to_json(const MeasureOptions& o);
MeasureOptions measure_options_from_json(const nlohmann::json& j);

/// Lossless: the parent rebuilds the same GpuEvaluation the worker produced.
nlohmann::json to_json(const GpuEvaluation& e);
GpuEvaluation evaluation_from_json(const nlohmann::json& j);

/// The path of the worker executable: $CUTUNE_WORKER, else `cutune-worker` beside the
/// running executable, else the one in the build tree this library was built in.
std::string worker_executable();

}  // namespace cutune::runner::protocol
