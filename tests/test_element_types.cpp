// Every element type Kernel Tuner passes to a CUDA kernel (numpy's int8..uint64, bool, float16,
// ml_dtypes' bfloat16, float32, float64, complex64, complex128): read from T1, sized, filled,
// passed as scalars by their bytes, poisoned, and compared as numpy.allclose compares them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cutune/model/element_check.hpp"
#include "cutune/model/element_types.hpp"
#include "cutune/model/errors.hpp"
#include "cutune/model/host_data.hpp"
#include "cutune/model/problem.hpp"
#include "test_paths.hpp"

using namespace cutune;
using Catch::Matchers::Contains;
using cutune::testing::TempDir;

namespace {

template <class T>
void write_raw(const std::filesystem::path& file, const std::vector<T>& values) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
}

/// A T1 problem whose arguments are `arguments` (a JSON list), kernel `k` in k.cu.
std::filesystem::path write_problem(const TempDir& dir, const std::string& arguments,
                                    const std::string& references = "") {
  dir.write("k.cu", "extern \"C\" __global__ void k() {}\n");
  return dir.write("p.json", R"({
  "General": {"BenchmarkName": "types", "OutputFormat": "JSON"},
  "ConfigurationSpace": {"TuningParameters": [{"Name": "block_size_x", "Type": "int", "Values": [32]}],
                         "Conditions": []},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu", "ProblemSize": 4,
    "Arguments": )" + arguments + (references.empty() ? "" : ",\n    \"ReferenceArguments\": " + references) +
                                     "}}");
}

template <class T>
HostArgument host_of(const ArgumentSpec& spec, const std::vector<T>& v) {
  HostArgument a{&spec, static_cast<std::int64_t>(v.size()), {}};
  a.bytes.resize(v.size() * sizeof(T));
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}

ArgumentSpec output_spec(ElementType t) {
  ArgumentSpec s;
  s.name = "out";
  s.type = t;
  s.output = true;
  return s;
}

template <class N>
std::vector<N> narrow(const std::vector<std::uint16_t>& bits) {
  std::vector<N> out;
  for (auto b : bits) out.push_back(N{b});
  return out;
}

}  // namespace

TEST_CASE("element types: every dtype Kernel Tuner passes has its T1 name, numpy's size and alignment",
          "[element_types]") {
  struct Row {
    const char* name;
    ElementType type;
    std::size_t size, alignment;
  };
  const Row rows[] = {{"int8", ElementType::Int8, 1, 1},          {"uint8", ElementType::UInt8, 1, 1},
                      {"bool", ElementType::UInt8, 1, 1},         {"int16", ElementType::Int16, 2, 2},
                      {"uint16", ElementType::UInt16, 2, 2},      {"int32", ElementType::Int32, 4, 4},
                      {"uint32", ElementType::UInt32, 4, 4},      {"int64", ElementType::Int64, 8, 8},
                      {"uint64", ElementType::UInt64, 8, 8},      {"half", ElementType::Float16, 2, 2},
                      {"bfloat16", ElementType::BFloat16, 2, 2},  {"float", ElementType::Float32, 4, 4},
                      {"float32", ElementType::Float32, 4, 4},    {"double", ElementType::Float64, 8, 8},
                      {"float64", ElementType::Float64, 8, 8},    {"float2", ElementType::Complex64, 8, 4},
                      {"complex64", ElementType::Complex64, 8, 4}, {"double2", ElementType::Complex128, 16, 8},
                      {"complex128", ElementType::Complex128, 16, 8}};
  for (const Row& r : rows) {
    INFO(r.name);
    const auto t = parse_element_type(r.name);
    REQUIRE(t);
    CHECK(*t == r.type);
    CHECK(element_size(*t) == r.size);
    CHECK(element_alignment(*t) == r.alignment);
    CHECK(parse_element_type(element_type_name(*t)) == t);  // the T1 spelling reads back
  }
  CHECK_FALSE(parse_element_type("float16"));  // T1's float16 is a vector of 16 floats
  CHECK(is_floating(ElementType::Float16));
  CHECK(is_floating(ElementType::BFloat16));
  CHECK(is_complex(ElementType::Complex128));
  CHECK_FALSE(is_complex(ElementType::Float64));
}

TEST_CASE("element types: float16 and bfloat16 convert as numpy and ml_dtypes do", "[element_types]") {
  CHECK(float16_from_double(1.0).bits == 0x3c00);
  CHECK(float16_from_double(0.1).bits == 0x2e66);      // numpy.float16(0.1).view(numpy.uint16)
  CHECK(float16_from_double(65504.0).bits == 0x7bff);  // the largest
  CHECK(float16_from_double(65520.0).bits == 0x7c00);  // the tie above it rounds to infinity
  CHECK(float16_from_double(-0.0).bits == 0x8000);
  CHECK(float16_from_double(0x1p-24).bits == 0x0001);   // the smallest subnormal
  CHECK(float16_from_double(0x1p-25).bits == 0x0000);   // the tie below it rounds to even: zero
  CHECK(float16_from_double(1 + 0x1p-11 + 0x1p-40).bits == 0x3c01);  // straight from the double
  CHECK(float16_from_double(1e-5).bits == 168);  // numpy: float16(1e-5) (rtol) is the subnormal 168
  CHECK(to_float(Float16{0x0001}) == 0x1p-24f);
  CHECK(to_float(Float16{0x3555}) == 0.333251953125f);
  CHECK(to_float(Float16{0x7e00}) != to_float(Float16{0x7e00}));  // NaN
  CHECK(to_float(BFloat16{0x3fc0}) == 1.5f);
  CHECK(bfloat16_from_double(1 + 0x1p-8 + 0x1p-20).bits == 0x3f81);
  CHECK(bfloat16_from_double(1 + 0x1p-8 + 0x1p-40).bits == 0x3f80);  // via float32, as ml_dtypes
  CHECK(bfloat16_from_float(std::numeric_limits<float>::infinity()).bits == 0x7f80);
}

TEST_CASE("element types: T1 arguments of every type are sized, filled and passed by their bytes",
          "[element_types]") {
  TempDir dir;
  write_raw(dir.path() / "z.bin", std::vector<double>{1.25, -3.5});                 // one complex128 scalar
  write_raw(dir.path() / "h.bin", std::vector<std::uint16_t>{0x3c00, 0xc000, 0x7bff, 0x0001});
  const KernelProblem p = KernelProblem::load(write_problem(dir, R"([
    {"Name": "h", "Type": "half", "MemoryType": "Vector", "FillType": "Constant", "FillValue": 1.5, "Size": 4},
    {"Name": "b", "Type": "bfloat16", "MemoryType": "Vector", "FillType": "Generator", "DataSource": "i * 0.5", "Size": 4},
    {"Name": "c", "Type": "float2", "MemoryType": "Vector", "FillType": "Random", "FillValue": 2.0, "Size": 4},
    {"Name": "d", "Type": "double2", "MemoryType": "Vector", "FillType": "Constant", "FillValue": 2.5, "Size": 4},
    {"Name": "raw", "Type": "half", "MemoryType": "Vector", "FillType": "BinaryRaw", "DataSource": "h.bin", "Size": 4},
    {"Name": "flag", "Type": "bool", "MemoryType": "Vector", "FillType": "Constant", "FillValue": 1, "Size": 4},
    {"Name": "sh", "Type": "half", "MemoryType": "Scalar", "FillValue": 0.1},
    {"Name": "sb", "Type": "bfloat16", "MemoryType": "Scalar", "FillValue": 1.5},
    {"Name": "sc", "Type": "complex64", "MemoryType": "Scalar", "FillValue": 2.5},
    {"Name": "sz", "Type": "complex128", "MemoryType": "Scalar", "FillType": "BinaryRaw", "DataSource": "z.bin"}
  ])"));
  const std::vector<HostArgument> a = make_host_arguments(p, p.instantiate(), 7);
  REQUIRE(a.size() == 10);
  for (const HostArgument& x : a) {
    INFO(x.spec->name);
    CHECK(x.bytes.size() == static_cast<std::size_t>(x.count) * element_size(x.spec->type));
    // cuLaunchKernel copies a scalar's element_size bytes from this pointer: aligned for any type.
    CHECK(reinterpret_cast<std::uintptr_t>(x.bytes.data()) % 16 == 0);
  }
  for (int i = 0; i < 4; ++i) {
    INFO(i);
    CHECK(a[0].data<Float16>()[i].bits == 0x3e00);                    // 1.5
    CHECK(to_float(a[1].data<BFloat16>()[i]) == 0.5f * static_cast<float>(i));
    const Complex<float> c = a[2].data<Complex<float>>()[i];
    CHECK((c.re >= 0.0f && c.re < 2.0f && c.im >= 0.0f && c.im < 2.0f));
    CHECK(c.re != c.im);  // two draws: both parts random
    CHECK(a[3].data<Complex<double>>()[i].re == 2.5);
    CHECK(a[3].data<Complex<double>>()[i].im == 0.0);
    CHECK(a[5].data<std::uint8_t>()[i] == 1);
  }
  CHECK(a[4].data<std::uint16_t>()[2] == 0x7bff);  // BinaryRaw: the bytes as they are
  CHECK(a[6].count == 1);
  CHECK(a[6].bytes.size() == 2);
  CHECK(a[6].data<Float16>()->bits == 0x2e66);  // numpy.float16(0.1)
  CHECK(a[7].data<BFloat16>()->bits == 0x3fc0);
  CHECK(a[8].bytes.size() == 8);
  CHECK(a[8].data<Complex<float>>()->re == 2.5f);
  CHECK(a[8].data<Complex<float>>()->im == 0.0f);
  REQUIRE(a[9].bytes.size() == 16);  // a complex128 scalar: 16 bytes by value
  CHECK(a[9].data<Complex<double>>()->re == 1.25);
  CHECK(a[9].data<Complex<double>>()->im == -3.5);

  SECTION("a scalar file of the wrong size names the file and the sizes") {
    write_raw(dir.path() / "z.bin", std::vector<double>{1.25});
    try {
      (void)make_host_arguments(p, p.instantiate(), 7);
      FAIL("no InputError for an 8-byte complex128 scalar");
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Contains("Arguments[9].DataSource") && Contains("z.bin") && Contains("8 bytes") &&
                               Contains("16 (1 x double2)"));
    }
  }
}

TEST_CASE("element types: ReferenceArguments of float16 and complex are read in the output's type",
          "[element_types]") {
  TempDir dir;
  write_raw(dir.path() / "answer.bin", std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});  // 4 complex64
  const std::string args = R"([
    {"Name": "out", "Type": "float2", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": 4},
    {"Name": "h", "Type": "half", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": 4}])";
  const KernelProblem p = KernelProblem::load(write_problem(dir, args, R"([
    {"Name": "a", "TargetName": "out", "FillType": "BinaryRaw", "DataSource": "answer.bin"},
    {"Name": "b", "TargetName": "h", "FillType": "Constant", "FillValue": 0.1}])"));
  const std::vector<HostArgument> refs = reference_outputs(p, p.instantiate());
  REQUIRE(refs.size() == 2);
  REQUIRE(refs[0].bytes.size() == 32);
  CHECK(refs[0].data<Complex<float>>()[3].re == 7.0f);
  CHECK(refs[0].data<Complex<float>>()[3].im == 8.0f);
  CHECK(refs[1].data<Float16>()[2].bits == 0x2e66);
  write_raw(dir.path() / "answer.bin", std::vector<float>{1, 2, 3, 4});  // half the size
  CHECK_THROWS_WITH(reference_outputs(p, p.instantiate()),
                    Contains("answer.bin") && Contains("16 bytes") && Contains("32 (4 x float2)"));
}

TEST_CASE("element types: verdicts are numpy.allclose's in the element's own precision", "[element_types][verify]") {
  // The vectors and verdicts below were computed with numpy 2.4.6 and ml_dtypes 0.7.0:
  // numpy.isclose(expected, got, rtol, atol) element by element (pairs one ulp apart around
  // the edge). test_element_check_numpy.py checks thousands more against numpy directly.
  auto verdicts = [](const HostArgument& e, const HostArgument& g, Tolerance t) {
    std::string out;
    for (std::int64_t i = 0; i < e.count; ++i) {
      HostArgument ei{e.spec, 1, {}}, gi{g.spec, 1, {}};
      const std::size_t size = element_size(e.spec->type);
      ei.bytes.assign(e.bytes.begin() + i * static_cast<std::int64_t>(size), e.bytes.begin() + (i + 1) * static_cast<std::int64_t>(size));
      gi.bytes.assign(g.bytes.begin() + i * static_cast<std::int64_t>(size), g.bytes.begin() + (i + 1) * static_cast<std::int64_t>(size));
      out += compare(ei, gi, t).ok ? '1' : '0';
    }
    return out;
  };
  SECTION("float16") {
    const ArgumentSpec s = output_spec(ElementType::Float16);
    const auto e = narrow<Float16>({0x4101, 0x4101, 0xc57f, 0xc57f, 0x4779, 0x4779, 0x45f1, 0x45f1, 0xc3e1, 0xc3e1,
                                    0xbc65, 0xbc65, 0x3c48, 0x3c48, 0x40e3, 0x40e3, 0xc5b2, 0xc5b2, 0xc890, 0xc890});
    const auto g = narrow<Float16>({0x4103, 0x4104, 0xc57d, 0xc57e, 0x477b, 0x477c, 0x45ef, 0x45f0, 0xc3e3, 0xc3e4,
                                    0xbc67, 0xbc68, 0x3c4a, 0x3c4b, 0x40e5, 0x40e6, 0xc5b0, 0xc5b1, 0xc891, 0xc892});
    CHECK(verdicts(host_of(s, e), host_of(s, g), Tolerance{1e-3, 1e-3}) == "00011001101010000110");
    const auto e2 = narrow<Float16>({0x34c4, 0x34c4, 0x412b, 0x412b, 0xac01, 0xac01, 0xc627, 0xc627, 0xc5fd, 0xc5fd,
                                     0x469a, 0x469a, 0xc4a6, 0xc4a6, 0x46f1, 0x46f1, 0x44d6, 0x44d6, 0x30f9, 0x30f9});
    const auto g2 = narrow<Float16>({0x35a2, 0x35a3, 0x4111, 0x4112, 0xaee4, 0xaee5, 0xc634, 0xc635, 0xc5f1, 0xc5f2,
                                     0x468e, 0x468f, 0xc499, 0xc49a, 0x46fe, 0x46ff, 0x44c9, 0x44ca, 0x2e82, 0x2e83});
    CHECK(verdicts(host_of(s, e2), host_of(s, g2), Tolerance{0.0, 0.05}) == "00011100111101000100");
    // Kernel Tuner's defaults (atol 1e-6, rtol 1e-5) in float16: one ulp off fails at 1 and
    // 1000, passes at 0.001 (numpy: [False, False, True]).
    const auto one = narrow<Float16>({0x3c00, 0x63d0, 0x1419}), next = narrow<Float16>({0x3c01, 0x63d1, 0x141a});
    CHECK(verdicts(host_of(s, one), host_of(s, next), Tolerance{1e-5, 1e-6}) == "001");
  }
  SECTION("bfloat16") {
    const ArgumentSpec s = output_spec(ElementType::BFloat16);
    const auto e = narrow<BFloat16>({0x4115, 0x3ef3, 0x3ef3, 0xc047, 0xc047, 0xc039, 0xc039, 0x40aa, 0x40aa, 0x410b,
                                     0x410b, 0x40a2, 0x40a2, 0xbfd0, 0xbfd0, 0xc11b, 0x3e85, 0x3e85, 0xc0af, 0xc0af});
    const auto g = narrow<BFloat16>({0x4114, 0x3f07, 0x3f08, 0xc04a, 0xc04b, 0xc036, 0xc037, 0x40ab, 0x40ac, 0x410c,
                                     0x410d, 0x40a3, 0x40a4, 0xbfc9, 0xbfca, 0xc11a, 0x3ea0, 0x3ea1, 0xc0b1, 0xc0b2});
    CHECK(verdicts(host_of(s, e), host_of(s, g), Tolerance{0.0, 0.05}) == "00010111000100100000");
  }
  SECTION("complex64 and complex128: |expected - got| as numpy's absolute") {
    const ArgumentSpec s64 = output_spec(ElementType::Complex64);
    const std::vector<Complex<float>> e{{-0x1.99de5p+2f, -0x1.8a6a4cp+1f}, {0x1.774ebap+0f, -0x1.98da46p+1f},
                                        {0x1.21a054p+3f, -0x1.1c96ecp+0f}, {0x1.3f25b8p-2f, 0x1.b08988p-2f}};
    const std::vector<Complex<float>> g{{-0x1.9a5c3cp+2f, -0x1.8a152cp+1f}, {0x1.7776a8p+0f, -0x1.996cfep+1f},
                                        {0x1.214e26p+3f, -0x1.1c4586p+0f}, {0x1.3de77ep-2f, 0x1.b17b7ap-2f}};
    CHECK(verdicts(host_of(s64, e), host_of(s64, g), Tolerance{1e-3, 1e-3}) == "0111");
    const ArgumentSpec s128 = output_spec(ElementType::Complex128);
    const std::vector<Complex<double>> e2{{0x1.3664461b0ff8cp+2, 0x1.9da39628e1181p+0},
                                          {0x1.e493a8011b0cep+2, -0x1.c56b31ad8a55fp+0},
                                          {-0x1.1454db2ea43aep+3, -0x1.66b892d9b7a6bp+0}};
    const std::vector<Complex<double>> g2{{0x1.36be0710d6f9cp+2, 0x1.9cf1525b88430p+0},
                                          {0x1.e4149907ba92cp+2, -0x1.c45f288c83138p+0},
                                          {-0x1.1405ad3cc23a4p+3, -0x1.666a835f099b8p+0}};
    CHECK(verdicts(host_of(s128, e2), host_of(s128, g2), Tolerance{1e-3, 1e-3}) == "010");
  }
  SECTION("complex NaN and infinity: a NaN in either part is a NaN; NaN answers match NaN results") {
    const ArgumentSpec s = output_spec(ElementType::Complex128);
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const std::vector<Complex<double>> e{{nan, 0}, {1, nan}, {inf, 1}, {inf, 1}, {1, 1}, {1, 2}};
    const std::vector<Complex<double>> g{{0, nan}, {1, 1}, {inf, 1}, {inf, 2}, {1, inf}, {1, 2}};
    // numpy.isclose(e, g, equal_nan=True): [True, False, True, False, False, True]
    CHECK(verdicts(host_of(s, e), host_of(s, g), Tolerance{1e-5, 1e-6}) == "101001");
  }
}

TEST_CASE("element types: the poison of 16-bit and complex outputs, and how a mismatch reads", "[element_types][verify]") {
  const Tolerance t{1e-5, 1e-6};
  SECTION("float16") {
    const ArgumentSpec s = output_spec(ElementType::Float16);
    HostArgument got = host_of(s, narrow<Float16>({0x3c00, 0x3c00, 0x3c00}));
    HostArgument p = got;
    poison(p);
    CHECK(p.data<Float16>()[1].bits == element_check::kPoisonFloat16);
    std::memcpy(got.bytes.data() + 2, p.bytes.data() + 2, 2);  // element 1 never written
    const auto nan = narrow<Float16>({0x3c00, 0x7e00, 0x3c00});   // even where the answer is NaN
    const VerifyResult r = compare(host_of(s, nan), got, t, /*poisoned=*/true);
    CHECK(r.failures == 1);
    CHECK_THAT(r.message, Contains("out[1] was never written"));
    CHECK(compare(host_of(s, nan), got, t, /*poisoned=*/false).ok);  // NaN == NaN otherwise
    const VerifyResult m = compare(host_of(s, narrow<Float16>({0x3c00, 0x3e00})), host_of(s, narrow<Float16>({0x3c00, 0x4000})), t);
    CHECK(m.message == "out[1] = 2, expected 1.5 (1 of 2 elements differ)");
    CHECK(m.max_error == 0.5);
  }
  SECTION("bfloat16") {
    const ArgumentSpec s = output_spec(ElementType::BFloat16);
    HostArgument p = host_of(s, narrow<BFloat16>({0, 0}));
    poison(p);
    CHECK(p.data<BFloat16>()[1].bits == element_check::kPoisonBFloat16);
    CHECK(holds_poison(ElementType::BFloat16, p.bytes.data()));
    CHECK_FALSE(holds_poison(ElementType::BFloat16, host_of(s, narrow<BFloat16>({0x7fc0})).bytes.data()));
  }
  SECTION("complex64 and complex128: both parts poisoned") {
    const ArgumentSpec s = output_spec(ElementType::Complex128);
    HostArgument p = host_of(s, std::vector<Complex<double>>{{1, 2}, {3, 4}});
    poison(p);
    CHECK(element_check::is_poison(p.data<Complex<double>>()[1]));
    const VerifyResult r = compare(host_of(s, std::vector<Complex<double>>{{1, 2}, {3, 4}}), p, t, true);
    CHECK(r.failures == 2);
    CHECK_THAT(r.message, Contains("out[0] was never written") && Contains("expected (1+2j)"));
    const ArgumentSpec s64 = output_spec(ElementType::Complex64);
    HostArgument q = host_of(s64, std::vector<Complex<float>>{{1, 2}});
    poison(q);
    CHECK(holds_poison(ElementType::Complex64, q.bytes.data()));
    const VerifyResult m = compare(host_of(s64, std::vector<Complex<float>>{{1, -2}}),
                                   host_of(s64, std::vector<Complex<float>>{{1, 2}}), t);
    CHECK(m.message == "out[0] = (1+2j), expected (1-2j) (1 of 1 elements differ)");
    CHECK(m.max_error == 4.0);
  }
}
