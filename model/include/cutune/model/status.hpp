#pragma once
// What became of one configuration, and what a tuning declared: typed inside every process;
// the names below are what the DB rows, the worker pipe and the files carry.
#include <optional>
#include <string_view>

namespace cutune {

/// Kernel Tuner's invalidity values, plus ok.
enum class Status { Ok, Compile, Runtime, Correctness, Constraints, Timeout };
const char* status_name(Status s);  ///< "ok", "compile", "runtime", ...
std::optional<Status> parse_status(std::string_view name);

/// How a winner was declared. Separated: the thorough re-measurement separated the
/// winner's median interval from every other finalist's; Tie: it did not; Screening: no
/// re-measurement (a single candidate, finalists disabled or failed, energy, imported).
enum class Verdict { Screening, Separated, Tie };
const char* verdict_name(Verdict v);  ///< "screening", "separated", "tie"
std::optional<Verdict> parse_verdict(std::string_view name);

}  // namespace cutune
