// The T1 writer behind `cutune space KERNEL --t1 OUT.json`: a problem as Kernel
// Tuner's tune_kernel_T1 reads it.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cutune/formats/kt_interop.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/problem.hpp"
#include "interop_commands.hpp"

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace cutune::cli {


void write_t1(const KernelProblem& p, const ProblemInstance& inst, const fs::path& out) {
  // Start from the file cutune read, so every field Kernel Tuner reads (and those it reads
  // beyond the schema) stays as written; only what names cutune's problem variables, which
  // Kernel Tuner does not have, is replaced by the instance's values.
  std::ifstream in(p.json_file(), std::ios::binary);
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) throw InputError(fmt::format("{}: cannot be re-read", p.json_file().string()));
  doc.erase("cutune");
  json& spec = doc["KernelSpecification"];
  spec["KernelFile"] = fs::absolute(p.kernel_file()).string();
  spec["ProblemSize"] = inst.problem_size;
  if (spec.contains("GlobalSize") && spec["GlobalSize"].is_object()) {
    const char* axes[] = {"X", "Y", "Z"};
    for (std::size_t d = 0; d < 3; ++d)
      spec["GlobalSize"][axes[d]] = std::to_string(d < inst.problem_size.size() ? inst.problem_size[d] : 1);
  }
  if (spec.contains("Arguments") && spec["Arguments"].is_array()) {
    for (json& a : spec["Arguments"]) {
      const std::string name = a.value("Name", "");
      for (const auto& arg : p.arguments()) {
        if (arg.name != name) continue;
        // Kernel Tuner's T1 has no form for a Tunable argument, and without cutune.Configurations
        // nothing says which variant a configuration passes.
        if (!arg.variants.empty())
          throw InputError(fmt::format("{}: KernelSpecification.Arguments: '{}' has Variants (a Tunable argument), "
                                       "which a T1 file for Kernel Tuner cannot carry", p.json_file().string(), name));
        if (arg.is_vector) a["Size"] = p.argument_size(arg, inst);
        else if (arg.fill != FillType::BinaryRaw) a["FillValue"] = db::kt::value_json(p.argument_fill(arg, inst));
        // A BinaryRaw argument (a complex scalar's bytes too) keeps reading its file from anywhere.
        if (arg.fill == FillType::BinaryRaw) a["DataSource"] = fs::absolute(arg.data_source).string();
        if (arg.is_vector && a.contains("FillValue")) a["FillValue"] = db::kt::value_json(p.argument_fill(arg, inst));
      }
    }
  }
  if (spec.contains("ReferenceArguments") && spec["ReferenceArguments"].is_array())
    for (const auto& ref : p.reference_arguments())
      for (json& r : spec["ReferenceArguments"])
        if (r.value("Name", "") == ref.name && !ref.data_source.empty())
          r["DataSource"] = fs::absolute(ref.data_source).string();
  std::ofstream os(out, std::ios::binary);
  if (!os) throw InputError(fmt::format("--t1 {}: cannot be written", out.string()));
  os << doc.dump(4) << '\n';
  if (!os.flush()) throw InputError(fmt::format("--t1 {}: cannot be written", out.string()));
}

}  // namespace cutune::cli
