#include "run_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "cutune/model/compiler.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/runner/run_once.hpp"

namespace cutune::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

/// numpy's name of the element type (bool travels as uint8; bfloat16 is ml_dtypes').
const char* numpy_dtype(ElementType t) {
  switch (t) {
    case ElementType::Int8: return "int8";
    case ElementType::UInt8: return "uint8";
    case ElementType::Int16: return "int16";
    case ElementType::UInt16: return "uint16";
    case ElementType::Int32: return "int32";
    case ElementType::UInt32: return "uint32";
    case ElementType::Int64: return "int64";
    case ElementType::UInt64: return "uint64";
    case ElementType::Float32: return "float32";
    case ElementType::Float64: return "float64";
    case ElementType::Float16: return "float16";
    case ElementType::BFloat16: return "bfloat16";
    case ElementType::Complex64: return "complex64";
    case ElementType::Complex128: return "complex128";
  }
  return "?";
}

/// The folder to write to: it exists, or its parent does (then it is made).
fs::path outputs_folder(const std::string& text) {
  const fs::path dir(text);
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return dir;
  if (fs::exists(dir, ec)) throw InputError(fmt::format("--outputs {}: not a directory", text));
  const fs::path parent = dir.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw InputError(fmt::format("--outputs {}: the directory {} does not exist (create it first)", text,
                                 parent.string()));
  return dir;
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(fmt::format("{}: cannot be written", path.string()));
}

/// The files of run_command.hpp; outputs.json last, so that its presence means the run's
/// files are all there.
void write_outputs(const fs::path& dir, const KernelProblem& p, const std::string& problem_key,
                   const runner::RunOnceResult& r) {
  fs::create_directories(dir);
  json args = json::array();
  for (std::size_t i = 0; i < p.arguments().size(); ++i) {
    const ArgumentSpec& spec = p.data()[p.data_for(r.config.index(), i)];  // a Tunable argument: the variant that ran
    const std::vector<char>& bytes = r.ran.arguments.at(i);
    const std::string file = fmt::format("{}.bin", i);
    write_bytes(dir / file, bytes);
    args.push_back(json{{"name", spec.name}, {"type", element_type_name(spec.type)},
                        {"dtype", numpy_dtype(spec.type)}, {"vector", spec.is_vector},
                        {"count", bytes.size() / element_size(spec.type)}, {"bytes", bytes.size()},
                        {"file", file}});
  }
  json doc{{"kernel", p.name()}, {"config", r.config.key()}, {"problem", problem_key},
           {"device", r.device.name}, {"compiler", r.compiler}, {"compile_ms", r.compile_ms},
           {"arguments", std::move(args)}};
  std::ofstream out(dir / "outputs.json");
  out << doc.dump(2) << '\n';
  if (!out) throw std::runtime_error(fmt::format("{}: cannot be written", (dir / "outputs.json").string()));
}

}  // namespace

CLI::App* add_run(CLI::App& app, RunArgs& a) {
  auto* run = app.add_subcommand(
      "run", "Run one configuration once, unverified and untimed, and write every argument's contents after "
             "it (Kernel Tuner's run_kernel)");
  run->add_option("KERNEL", a.kernel, "Built-in template name or T1 .json file")->required();
  run->add_option("--problem", a.problem, "Problem variables, e.g. n=2**24 (default: the kernel's defaults)");
  run->add_option("--config", a.config, "k=v,... (others take their default)");
  run->add_option("--device", a.device, "GPU ordinal");
  run->add_option("--outputs", a.outputs,
                  "Folder for outputs.json and one <i>.bin per argument (made if its parent exists)")
      ->required();
  run->add_option("--compiler", a.compiler, "nvrtc, nvcc or auto (default: the file's cutune.Compiler, else auto)")
      ->check(CLI::IsMember({"auto", "nvrtc", "nvcc"}));
  return run;
}

int cmd_run(const RunArgs& a) {
  const fs::path dir = outputs_folder(a.outputs);
  KernelProblem p = KernelProblem::load(resolve_kernel(a.kernel));
  for (const auto& w : p.warnings()) std::cerr << "warning: " << w << '\n';
  if (!a.compiler.empty()) p.set_compiler(*parse_compiler(a.compiler));  // checked by the option
  const runner::RunOnceResult r = runner::run_once(p, a.problem, a.config, a.device);
  if (r.ran.status != Status::Ok) {
    std::cerr << fmt::format("cutune: run: {} ({}): {} failure ({}): {}\n", p.name(), r.config.key(),
                             status_name(r.ran.status), r.compiler, r.ran.error);
    return kFailure;
  }
  if (r.ran.arguments.size() != p.arguments().size())
    throw std::runtime_error(fmt::format("GPU worker: {} arguments back for {}", r.ran.arguments.size(),
                                         p.arguments().size()));
  write_outputs(dir, p, p.instantiate(a.problem).key(), r);
  std::cout << fmt::format("{} ({}): ran once on {} ({}); {} argument(s) written to {}\n", p.name(), r.config.key(),
                           r.device.name, r.compiler, p.arguments().size(), (dir / "outputs.json").string());
  return kOk;
}

}  // namespace cutune::cli
