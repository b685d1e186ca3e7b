#pragma once
// Where the built-in templates are, and how a kernel name becomes a T1 file. Shared by the
// cutune tool, the benchmarks and the tests, so that they all find the same files.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace cutune::templates {

/// Folders searched, in order: `explicit_dir` when given (and then only it);
/// $CUTUNE_TEMPLATE_DIR; a kernel_templates/ (or share/cutune/kernel_templates/) folder
/// beside or above the running executable (a build tree inside the checkout, an install
/// prefix, the staged binaries on the lent GPU); the source tree cutune was built from.
std::vector<std::filesystem::path> template_dirs(const std::filesystem::path& explicit_dir = {});

/// Every T1 file in the template folders of the first directory that has any, by name:
/// reduction/reduction.json is "reduction", reduction/reduction_int32.json "reduction_int32".
std::map<std::string, std::filesystem::path> builtin_templates(
    const std::filesystem::path& explicit_dir = {});

/// A built-in template name, or a path to a T1 .json file. Throws InputError naming the
/// unknown kernel and listing the built-in ones.
std::filesystem::path resolve_template(const std::string& kernel,
                                       const std::filesystem::path& explicit_dir = {});

}  // namespace cutune::templates
