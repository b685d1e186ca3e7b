#pragma once
// Reading a compiler's log, for NVRTC and nvcc alike: the first error line, and the warning
// that the kernel redefines a macro of the configuration prefix.
#include <string>
#include <vector>

namespace cutune::jit::detail {

/// The log's first error line, for the one-line summary; "" when it has none.
std::string first_error_line(const std::string& log);
std::vector<std::string> log_lines(const std::string& log);
std::string trim(std::string s);
/// The log line saying that the kernel redefines a macro the configuration prefix of `source`
/// defined; "" when there is none.
std::string redefined_parameter(const std::string& source, const std::string& log);

}  // namespace cutune::jit::detail
