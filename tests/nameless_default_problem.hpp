#pragma once
// A T1 problem that names no default (as a captured Kernel Tuner script): one parameter, one
// output without a reference. What a tuning evaluates first depends on how that output is
// verified, which both the runner's and the command line's tests check.
#include <string>

namespace cutune::testing {

/// The kernel file the problem names ("k.cu", beside the JSON).
inline constexpr const char* kNamelessKernelSource = "extern \"C\" __global__ void k(float* x, int n) {}\n";

/// The problem's JSON; `extra` is appended inside the top-level object (", \"cutune\": {...}").
inline std::string nameless_default_problem(const std::string& extra = "") {
  return R"({"General": {"BenchmarkName": "k"},
    "ConfigurationSpace": {"TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": "[32, 64]"}],
                           "Conditions": []},
    "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "GridDivX": ["block_size_x"],
      "ProblemSize": 100, "Arguments": [
        {"Name": "x", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "FillType": "Random",
         "Size": 100, "FillValue": 1.0, "Output": 1},
        {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "AccessType": "ReadOnly", "FillValue": 100}]})" +
         extra + "}";
}

}  // namespace cutune::testing
