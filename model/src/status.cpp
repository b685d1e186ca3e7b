#include "cutune/model/status.hpp"

namespace cutune {

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Compile: return "compile";
    case Status::Runtime: return "runtime";
    case Status::Correctness: return "correctness";
    case Status::Constraints: return "constraints";
    case Status::Timeout: return "timeout";
  }
  return "unknown";
}

std::optional<Status> parse_status(std::string_view name) {
  for (Status s : {Status::Ok, Status::Compile, Status::Runtime, Status::Correctness, Status::Constraints,
                   Status::Timeout})
    if (name == status_name(s)) return s;
  return std::nullopt;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Screening: return "screening";
    case Verdict::Separated: return "separated";
    case Verdict::Tie: return "tie";
  }
  return "unknown";
}

std::optional<Verdict> parse_verdict(std::string_view name) {
  for (Verdict v : {Verdict::Screening, Verdict::Separated, Verdict::Tie})
    if (name == verdict_name(v)) return v;
  return std::nullopt;
}

}  // namespace cutune
