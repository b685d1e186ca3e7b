#include "cutune/jit/compile_request.hpp"

#include <algorithm>
#include <cctype>

namespace cutune::jit {

std::string replace_parameter_names(const std::string& text, const std::vector<std::pair<std::string, Value>>& params) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!word(text[i])) {
      out.push_back(text[i++]);
      continue;
    }
    std::size_t e = i;
    while (e < text.size() && word(text[e])) ++e;
    const std::string token = text.substr(i, e - i);
    auto it = std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.first == token; });
    out += it == params.end() ? token : it->second.str();
    i = e;
  }
  return out;
}

CompileRequest compile_request(const KernelProblem& problem, const Config& config, const std::string& arch) {
  CompileRequest r;
  r.source = problem.configured_source(config);
  r.source_name = problem.kernel_file().filename().string();
  const auto params = problem.space().assignments(config);
  for (const auto& name : problem.kernel_names()) r.kernel_names.push_back(replace_parameter_names(name, params));
  r.options = problem.compiler_options();
  r.arch = arch;
  r.headers = problem.local_headers();
  return r;
}

}  // namespace cutune::jit
