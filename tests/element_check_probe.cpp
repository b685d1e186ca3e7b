// The element test and the element conversions, driven from files, so that
// test_element_check_numpy.py can hold them against numpy (and ml_dtypes) on data it makes:
//   element_check_probe check TYPE ATOL RTOL EXPECTED.bin GOT.bin
//     prints one character per element, 1 where the test passes, 0 where it fails;
//   element_check_probe round TYPE DOUBLES.bin
//     prints the bits of each float64 of the file rounded to TYPE (half, bfloat16) in hex,
//     one a line: the rounding of a Python float (fill values, atol, rtol);
//   element_check_probe host T1.json
//     loads the problem as cutune tune does and prints, one a line, each argument's host data
//     ("NAME TYPE COUNT HEX") and then each reference ("reference NAME TYPE COUNT HEX").
// TYPE is a T1 spelling (element_type_name). Exit 2 on bad input.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cutune/model/element_check.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"

namespace {

std::vector<char> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

template <class T>
int check(const std::vector<char>& e, const std::vector<char>& g, double atol, double rtol) {
  if (e.size() != g.size() || e.size() % sizeof(T) != 0) {
    std::fprintf(stderr, "element_check_probe: files of %zu and %zu bytes\n", e.size(), g.size());
    return 2;
  }
  std::string out;
  for (std::size_t at = 0; at < e.size(); at += sizeof(T)) {
    T x, y;
    std::memcpy(&x, e.data() + at, sizeof(T));
    std::memcpy(&y, g.data() + at, sizeof(T));
    out += cutune::element_check::check_element(x, y, false, atol, rtol).ok ? '1' : '0';
  }
  std::printf("%s\n", out.c_str());
  return 0;
}

int check_as(cutune::ElementType t, const std::vector<char>& e, const std::vector<char>& g, double atol, double rtol) {
  using cutune::ElementType;
  switch (t) {
    case ElementType::Int8: return check<std::int8_t>(e, g, atol, rtol);
    case ElementType::UInt8: return check<std::uint8_t>(e, g, atol, rtol);
    case ElementType::Int16: return check<std::int16_t>(e, g, atol, rtol);
    case ElementType::UInt16: return check<std::uint16_t>(e, g, atol, rtol);
    case ElementType::Int32: return check<std::int32_t>(e, g, atol, rtol);
    case ElementType::UInt32: return check<std::uint32_t>(e, g, atol, rtol);
    case ElementType::Int64: return check<std::int64_t>(e, g, atol, rtol);
    case ElementType::UInt64: return check<std::uint64_t>(e, g, atol, rtol);
    case ElementType::Float32: return check<float>(e, g, atol, rtol);
    case ElementType::Float64: return check<double>(e, g, atol, rtol);
    case ElementType::Float16: return check<cutune::Float16>(e, g, atol, rtol);
    case ElementType::BFloat16: return check<cutune::BFloat16>(e, g, atol, rtol);
    case ElementType::Complex64: return check<cutune::Complex<float>>(e, g, atol, rtol);
    case ElementType::Complex128: return check<cutune::Complex<double>>(e, g, atol, rtol);
  }
  return 2;
}

int round_as(cutune::ElementType t, const std::vector<char>& doubles) {
  for (std::size_t at = 0; at + 8 <= doubles.size(); at += 8) {
    double d;
    std::memcpy(&d, doubles.data() + at, 8);
    if (t == cutune::ElementType::Float16) std::printf("%04x\n", cutune::float16_from_double(d).bits);
    else if (t == cutune::ElementType::BFloat16) std::printf("%04x\n", cutune::bfloat16_from_double(d).bits);
    else return 2;
  }
  return 0;
}

void print_host(const char* what, const cutune::HostArgument& a) {
  std::printf("%s%s %s %lld ", what, a.spec->name.c_str(), cutune::element_type_name(a.spec->type),
              static_cast<long long>(a.count));
  for (std::byte b : a.bytes) std::printf("%02x", static_cast<unsigned>(b));
  std::printf("\n");
}

int host(const char* t1) {
  try {
    const cutune::KernelProblem p = cutune::KernelProblem::load(t1);
    const cutune::ProblemInstance instance = p.instantiate();
    for (const auto& a : cutune::make_host_arguments(p, instance, 1)) print_host("", a);
    for (const auto& r : cutune::reference_outputs(p, instance))
      if (!r.bytes.empty()) print_host("reference ", r);
    return 0;
  } catch (const cutune::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const auto type = argc > 2 ? cutune::parse_element_type(argv[2]) : std::nullopt;
  if (mode == "check" && argc == 7 && type)
    return check_as(*type, read_file(argv[5]), read_file(argv[6]), std::stod(argv[3]), std::stod(argv[4]));
  if (mode == "round" && argc == 4 && type) return round_as(*type, read_file(argv[3]));
  if (mode == "host" && argc == 3) return host(argv[2]);
  std::fprintf(stderr, "usage: element_check_probe check TYPE ATOL RTOL EXPECTED.bin GOT.bin\n"
                       "       element_check_probe round half|bfloat16 DOUBLES.bin\n"
                       "       element_check_probe host T1.json\n");
  return 2;
}
