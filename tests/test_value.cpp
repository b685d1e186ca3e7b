// Tests of Value: Python's printing, equality and truthiness. Expected strings were produced
// by python3 (3.11).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "cutune/model/value.hpp"

using cutune::python_float_repr;
using cutune::Value;
using cutune::ValueList;

TEST_CASE("Value kinds and accessors", "[value]") {
  CHECK(Value().is_none());
  CHECK(Value(true).kind() == Value::Kind::Bool);
  CHECK(Value(3).kind() == Value::Kind::Int);
  CHECK(Value(std::int64_t{1} << 40).as_int() == std::int64_t{1} << 40);
  CHECK(Value(2.5).is_float());
  CHECK(Value("abc").is_string());  // not converted to bool
  CHECK(Value(std::string("abc")).as_string() == "abc");
  CHECK(Value(ValueList{1, 2}).as_list().size() == 2);
  CHECK(Value(true).is_number());
  CHECK_FALSE(Value("1").is_number());
}

TEST_CASE("python_float_repr matches python's repr", "[value]") {
  const std::vector<std::pair<double, std::string>> cases{
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {2.0, "2.0"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1.5e-7, "1.5e-07"},
      {1e22, "1e+22"},
      {1.2345e+20, "1.2345e+20"},
      {123.456, "123.456"},
      {1.0 / 3.0, "0.3333333333333333"},
      {2.0 / 3.0, "0.6666666666666666"},
      {0.1 + 0.2, "0.30000000000000004"},
      {9999999999999998.0, "9999999999999998.0"},
      {1e100, "1e+100"},
      {-2.5, "-2.5"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {123456789.0, "123456789.0"},
      {9.223372036854776e18, "9.223372036854776e+18"},
      {std::numeric_limits<double>::infinity(), "inf"},
      {-std::numeric_limits<double>::infinity(), "-inf"},
      {std::numeric_limits<double>::quiet_NaN(), "nan"},
  };
  for (const auto& [d, expected] : cases) {
    INFO(expected);
    CHECK(python_float_repr(d) == expected);
  }
}

TEST_CASE("str and repr follow python", "[value]") {
  CHECK(Value(128).str() == "128");
  CHECK(Value(-7).str() == "-7");
  CHECK(Value(2.45).str() == "2.45");
  CHECK(Value(1e-5).str() == "1e-05");
  CHECK(Value(true).str() == "True");
  CHECK(Value(false).str() == "False");
  CHECK(Value().str() == "None");
  CHECK(Value("alg_2").str() == "alg_2");
  CHECK(Value("alg_2").repr() == "'alg_2'");
  CHECK(Value("it's").repr() == "\"it's\"");
  CHECK(Value("say \"hi\" it's").repr() == "'say \"hi\" it\\'s'");
  CHECK(Value("a\tb\n\\").repr() == "'a\\tb\\n\\\\'");
  CHECK(Value(std::string("\x01", 1)).repr() == "'\\x01'");
  CHECK(Value(ValueList{1, "a", 2.0, Value(), true}).str() == "[1, 'a', 2.0, None, True]");
  CHECK(Value(ValueList{ValueList{1}, ValueList{}}).str() == "[[1], []]");
  CHECK(Value(ValueList{}).repr() == "[]");
  CHECK(Value(12.0).repr() == "12.0");
}

TEST_CASE("type names are python's", "[value]") {
  CHECK(Value().type_name() == "NoneType");
  CHECK(Value(true).type_name() == "bool");
  CHECK(Value(1).type_name() == "int");
  CHECK(Value(1.0).type_name() == "float");
  CHECK(Value("").type_name() == "str");
  CHECK(Value(ValueList{}).type_name() == "list");
}

TEST_CASE("equality is python's ==", "[value]") {
  CHECK(Value(1) == Value(1.0));
  CHECK(Value(1) == Value(true));
  CHECK(Value(1.0) == Value(true));
  CHECK(Value(0) == Value(false));
  CHECK_FALSE(Value(2) == Value(true));
  CHECK_FALSE(Value(1) == Value("1"));
  CHECK_FALSE(Value(0) == Value());
  CHECK(Value() == Value());
  CHECK(Value("a") == Value("a"));
  CHECK(Value(ValueList{1, 2}) == Value(ValueList{1.0, true + 1}));
  CHECK_FALSE(Value(ValueList{1, 2}) == Value(ValueList{1, 2, 3}));
  CHECK(Value(1) != Value(2));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(Value(nan) == Value(nan));
  // Exact int/float comparison: 2**53 + 1 is not 2.0**53.
  CHECK_FALSE(Value(std::int64_t{9007199254740993}) == Value(9007199254740992.0));
  CHECK(Value(std::int64_t{9007199254740992}) == Value(9007199254740992.0));
  CHECK_FALSE(Value(std::numeric_limits<std::int64_t>::max()) == Value(9223372036854775808.0));
  CHECK_FALSE(Value(3) == Value(3.5));
}

TEST_CASE("truthiness and conversions", "[value]") {
  CHECK_FALSE(Value().truthy());
  CHECK_FALSE(Value(0).truthy());
  CHECK_FALSE(Value(0.0).truthy());
  CHECK_FALSE(Value("").truthy());
  CHECK_FALSE(Value(ValueList{}).truthy());
  CHECK(Value(-1).truthy());
  CHECK(Value(std::numeric_limits<double>::quiet_NaN()).truthy());
  CHECK(Value("0").truthy());
  CHECK(Value(ValueList{0}).truthy());
  CHECK(Value(true).to_int() == 1);
  CHECK(Value(4.0).to_int() == 4);
  CHECK(Value(7).to_double() == 7.0);
  CHECK(Value(false).to_double() == 0.0);
  CHECK_THROWS_AS(Value(4.5).to_int(), std::runtime_error);
  CHECK_THROWS_AS(Value(1e30).to_int(), std::runtime_error);
  CHECK_THROWS_AS(Value("4").to_int(), std::runtime_error);
  CHECK_THROWS_WITH(Value("4").to_double(), Catch::Contains("str"));
  CHECK_THROWS_AS(Value().to_double(), std::runtime_error);
}
