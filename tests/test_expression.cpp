// Tests of the Python-expression evaluator. Expected values were produced by python3 (3.11)
// from the same expression text; the tests themselves do not run Python.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cutune/model/expression.hpp"

using cutune::Expression;
using cutune::ExpressionError;
using cutune::Scope;
using cutune::Value;
using cutune::ValueList;

namespace {

class MapScope : public Scope {
 public:
  MapScope() = default;
  MapScope(std::initializer_list<std::pair<const std::string, Value>> init) : values_(init) {}
  const Value* lookup(std::string_view name) const override {
    ++lookups;
    const auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  void set(const std::string& name, Value v) { values_[name] = std::move(v); }
  mutable long lookups = 0;

 private:
  std::map<std::string, Value, std::less<>> values_;
};

MapScope standard_scope() {
  return MapScope{{"x", 4},
                  {"y", 2.5},
                  {"s", "abc"},
                  {"L", ValueList{1, 2, 3}},
                  {"ProblemSize", ValueList{1024, 512}},
                  {"filter_width", ValueList{3, 5, 7}},
                  {"block_size_x", 128},
                  {"use_padding", 0},
                  {"neg", -7}};
}

Value eval(const std::string& text, const Scope& scope) {
  return Expression::parse(text).evaluate(scope);
}
Value eval(const std::string& text) { return eval(text, standard_scope()); }
std::string repr_of(const std::string& text) { return eval(text).repr(); }

}  // namespace

TEST_CASE("expressions evaluate as python3 does", "[expression]") {
  const MapScope scope = standard_scope();
  // {expression, repr(eval(expression)) in python3; tuples and ranges shown as lists}
  const std::vector<std::pair<std::string, std::string>> cases{
      {"1+2*3", "7"},
      {"(1+2)*3", "9"},
      {"-2**2", "-4"},
      {"2**-1", "0.5"},
      {"2**3**2", "512"},
      {"-7//2", "-4"},
      {"-7%3", "2"},
      {"7%-3", "-2"},
      {"7//-2", "-4"},
      {"-7.5//2", "-4.0"},
      {"-7.5%2", "0.5"},
      {"7.5%-2", "-0.5"},
      {"-0.0", "-0.0"},
      {"1/3", "0.3333333333333333"},
      {"0.1+0.2", "0.30000000000000004"},
      {"1e-5", "1e-05"},
      {"1e16", "1e+16"},
      {"1e15", "1000000000000000.0"},
      {"123456789012345678", "123456789012345678"},
      {"2.0", "2.0"},
      {"1e22", "1e+22"},
      {"1.5e-7", "1.5e-07"},
      {"0.0001", "0.0001"},
      {"10/4", "2.5"},
      {"10//4", "2"},
      {"3 < x <= 8", "True"},
      {"1 < x < 3", "False"},
      {"x == 4.0", "True"},
      {"x == True", "False"},
      {"True == 1", "True"},
      {"True + True", "2"},
      {"-True", "-1"},
      {"~5", "-6"},
      {"~True", "-2"},
      {"True & False", "False"},
      {"True | 2", "3"},
      {"6 ^ 3", "5"},
      {"1 << 10", "1024"},
      {"-1 >> 3", "-1"},
      {"0 and 5", "0"},
      {"3 and 5", "5"},
      {"0 or []", "[]"},
      {"'' or 'b'", "'b'"},
      {"[] or 0", "0"},
      {"None or 3", "3"},
      {"x if x > 2 else -1", "4"},
      {"[32*i for i in range(1,33)]",
       "[32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480, 512, 544, 576, "
       "608, 640, 672, 704, 736, 768, 800, 832, 864, 896, 928, 960, 992, 1024]"},
      {"[i*j for i in range(3) for j in range(i)]", "[0, 0, 2]"},
      {"[i for i in range(10) if i % 2 if i > 3]", "[5, 7, 9]"},
      {"[(i, j) for i, j in [[1, 2], [3, 4]]]", "[[1, 2], [3, 4]]"},
      {"[x for x in L]", "[1, 2, 3]"},
      {"x", "4"},
      {"[x for x in range(3)] + [x]", "[0, 1, 2, 4]"},
      {"range(5)", "[0, 1, 2, 3, 4]"},
      {"range(2, 10, 3)", "[2, 5, 8]"},
      {"range(10, 0, -3)", "[10, 7, 4, 1]"},
      {"range(0)", "[]"},
      {"len(L)", "3"},
      {"len(s)", "3"},
      {"len(range(7))", "7"},
      {"min(L)", "1"},
      {"max(L)", "3"},
      {"max(3, 7, 5)", "7"},
      {"min(3.5, 2)", "2"},
      {"max([1, 2.0, 2])", "2.0"},
      {"max(2, 2.0)", "2"},
      {"abs(-3)", "3"},
      {"abs(-3.5)", "3.5"},
      {"abs(True)", "1"},
      {"int(3.9)", "3"},
      {"int(-3.9)", "-3"},
      {"int('  42 ')", "42"},
      {"int('-1_000')", "-1000"},
      {"int('ff', 16)", "255"},
      {"int('0x1f', 0)", "31"},
      {"float('1e-3')", "0.001"},
      {"float(' inf ')", "inf"},
      {"float('-nan')", "nan"},
      {"round(2.5)", "2"},
      {"round(3.5)", "4"},
      {"round(-2.5)", "-2"},
      {"round(2.675, 2)", "2.67"},
      {"round(1234.5, -2)", "1200.0"},
      {"round(1250, -2)", "1200"},
      {"round(1350, -2)", "1400"},
      {"round(-1250, -2)", "-1200"},
      {"round(0.5)", "0"},
      {"round(1.5)", "2"},
      {"round(2.5, 0)", "2.0"},
      {"round(150.0, -2)", "200.0"},
      {"round(50.0, -2)", "0.0"},
      {"round(51.0, -2)", "100.0"},
      {"sum(L)", "6"},
      {"sum([0.1]*10)", "0.9999999999999999"},
      {"sum([[1],[2]], [])", "[1, 2]"},
      {"list('ab')", "['a', 'b']"},
      {"str(2.5)", "'2.5'"},
      {"str(1e-5)", "'1e-05'"},
      {"str([1, 'a', 2.0, None, True])", "\"[1, 'a', 2.0, None, True]\""},
      {"bool([])", "False"},
      {"bool('x')", "True"},
      {"pow(2, 10)", "1024"},
      {"pow(2, -2)", "0.25"},
      {"pow(3, 4, 5)", "1"},
      {"pow(-3, 3, 5)", "3"},
      {"pow(3, 3, -5)", "-3"},
      {"'ab' + 'cd'", "'abcd'"},
      {"'ab' * 3", "'ababab'"},
      {"[1, 2] * 2", "[1, 2, 1, 2]"},
      {"3 * [0]", "[0, 0, 0]"},
      {"[1, 2] + [3]", "[1, 2, 3]"},
      {"2 in L", "True"},
      {"5 not in L", "True"},
      {"'b' in s", "True"},
      {"'bc' in s", "True"},
      {"'z' not in s", "True"},
      {"ProblemSize[0]+max(filter_width)-1", "1030"},
      {"L[-1]", "3"},
      {"L[-3]", "1"},
      {"s[1]", "'b'"},
      {"s[-1]", "'c'"},
      {"use_padding==0 or (block_size_x % 32 != 0)", "True"},
      {"1 < 2 == 2", "True"},
      {"1 < 3 > 2", "True"},
      {"(1 < 3) > 2", "False"},
      {"not 1 == 2", "True"},
      {"not x", "False"},
      {"-x ** 2", "-16"},
      {"(-x) ** 2", "16"},
      {"2 ** 0.5", "1.4142135623730951"},
      {"(-8) ** 2", "64"},
      {"10 ** 18", "1000000000000000000"},
      {"2 ** 62", "4611686018427387904"},
      {"4.0 ** 0.5", "2.0"},
      {"1 if 0 else 2 if 0 else 3", "3"},
      {"[1, 2] == [1, 2.0]", "True"},
      {"[1, 2] < [1, 3]", "True"},
      {"[1, 2] < [1, 2, 0]", "True"},
      {"'abc' < 'abd'", "True"},
      {"1 == 1.0 == True", "True"},
      {"None == 0", "False"},
      {"None is None", "True"},
      {"x is not None", "True"},
      {"0.1 * 3", "0.30000000000000004"},
      {"1e308 * 10", "inf"},
      {"-1e308 * 10", "-inf"},
      {"float('inf') - float('inf')", "nan"},
      {"2**53 + 1 == 2.0**53", "False"},
      {"2**53 == 2.0**53", "True"},
      {"9007199254740993 < 9007199254740992.0", "False"},
      {"9007199254740993 > 9007199254740992.0", "True"},
      {"7 / 2", "3.5"},
      {"-7 / 2", "-3.5"},
      {"6 / 3", "2.0"},
      {"1.0 // 0.3", "3.0"},
      {"-1e-300 // 1e300", "-1.0"},
      {"5 % 2.5", "0.0"},
      {"-5 % 2.5", "0.0"},
      {"0.0 % -1", "-0.0"},
      {"round(-0.4)", "0"},
      {"str(-0.0)", "'-0.0'"},
      {"x // 0.5", "8.0"},
      {"(1, 2)", "[1, 2]"},
      {"(1,)", "[1]"},
      {"()", "[]"},
      {"[]", "[]"},
      {"[[1, 2], [3]]", "[[1, 2], [3]]"},
      {"'it''s'", "'its'"},
      {"\"it's\"", "\"it's\""},
      {"'say \"hi\"'", "'say \"hi\"'"},
      {"'a\\tb'", "'a\\tb'"},
      {"'\\x41\\u00e9'", "'Aé'"},
      {"len('\\u00e9a')", "2"},
      {"1_000_000", "1000000"},
      {"0x1F", "31"},
      {"0o17", "15"},
      {"0b101", "5"},
      {".5", "0.5"},
      {"5.", "5.0"},
      {"1E3", "1000.0"},
      {"str(1e100)", "'1e+100'"},
      {"1e-7", "1e-07"},
      {"123.456", "123.456"},
      {"1/7", "0.14285714285714285"},
      {"2**0.5 * 2**0.5", "2.0000000000000004"},
      {"100.0", "100.0"},
      {"1e+16 - 1", "1e+16"},
      {"9999999999999998.0", "9999999999999998.0"},
      {"0.00001234", "1.234e-05"},
      {"sum(i for i in range(5))", "10"},
      {"max(i % 3 for i in range(5))", "2"},
      {"any([0, 0, 1])", "True"},
      {"all([1, 2, 0])", "False"},
      {"x > 3 and y < 3", "True"},
      {"[y for y in [y * 2 for y in range(3)]]", "[0, 2, 4]"},
      {"[[j for j in range(i)] for i in range(3)]", "[[], [0], [0, 1]]"},
      {"min('bca')", "'a'"},
      {"list(range(3)) == [0, 1, 2]", "True"},
  };
  for (const auto& [text, expected] : cases) {
    INFO("expression: " << text);
    CHECK(eval(text, scope).repr() == expected);
  }
}

TEST_CASE("operator precedence and associativity", "[expression]") {
  CHECK(eval("-2**2").as_int() == -4);
  CHECK(eval("2**-1").as_float() == 0.5);
  CHECK(eval("2**3**2").as_int() == 512);  // right-associative
  CHECK(eval("(2**3)**2").as_int() == 64);
  CHECK(eval("100 // 10 // 3").as_int() == 3);  // left-associative
  CHECK(eval("2 - 3 - 4").as_int() == -5);
  CHECK(eval("1 + 2 * 3 ** 2").as_int() == 19);
  CHECK(eval("not 1 == 2").as_bool());         // not binds looser than ==
  CHECK(eval("1 | 2 ^ 3 & 4").as_int() == 3);  // & before ^ before |
  CHECK(eval("1 + 1 << 2").as_int() == 8);     // + before <<
  CHECK(eval("1 if 0 else 2 if 0 else 3").as_int() == 3);
  CHECK(eval("0 or 1 and 2").as_int() == 2);  // and before or
  CHECK(eval("-x ** 2").as_int() == -16);
  CHECK(eval("- - 3").as_int() == 3);
  CHECK(eval("~-1").as_int() == 0);
}

TEST_CASE("floor division and modulo follow python on negatives", "[expression]") {
  CHECK(eval("-7 // 2").as_int() == -4);
  CHECK(eval("7 // -2").as_int() == -4);
  CHECK(eval("-7 // -2").as_int() == 3);
  CHECK(eval("-7 % 3").as_int() == 2);
  CHECK(eval("7 % -3").as_int() == -2);
  CHECK(eval("-7 % -3").as_int() == -1);
  CHECK(eval("-7.5 // 2").as_float() == -4.0);
  CHECK(eval("-7.5 % 2").as_float() == 0.5);
  CHECK(eval("7.5 % -2").as_float() == -0.5);
  CHECK(eval("1.0 // 0.3").as_float() == 3.0);
  CHECK(eval("0.0 % -1").str() == "-0.0");
  CHECK(eval("7 / 2").as_float() == 3.5);
  CHECK(eval("6 / 3").is_float());  // / always gives a float
  CHECK(eval("2 ** -2").as_float() == 0.25);
  CHECK(eval("(-9223372036854775807 - 1) % -1").as_int() == 0);
}

TEST_CASE("chained comparisons", "[expression]") {
  MapScope scope{{"x", 4}};
  CHECK(eval("1 < x <= 8", scope).as_bool());
  CHECK_FALSE(eval("1 < x <= 3", scope).as_bool());
  CHECK(eval("1 < 3 > 2").as_bool());
  CHECK_FALSE(eval("(1 < 3) > 2").as_bool());
  CHECK(eval("1 == 1.0 == True").as_bool());
  // A false link short-circuits: the type error on the right is never reached.
  CHECK_FALSE(eval("3 < 2 < 'a'").as_bool());
  CHECK_THROWS_AS(eval("1 < 2 < 'a'"), ExpressionError);
  // The middle operand is evaluated once.
  MapScope counting{{"m", 5}};
  CHECK(eval("1 < m < 10", counting).as_bool());
  CHECK(counting.lookups == 1);
}

TEST_CASE("and/or return an operand and short-circuit", "[expression]") {
  CHECK(eval("0 and 5").as_int() == 0);
  CHECK(eval("3 and 5").as_int() == 5);
  CHECK(eval("0 or []").repr() == "[]");
  CHECK(eval("'' or 'b'").as_string() == "b");
  CHECK(eval("None or 3").as_int() == 3);
  CHECK(eval("[] and 1").repr() == "[]");
  CHECK(eval("0.0 or 0").is_int());
  MapScope scope{{"x", 1}};
  CHECK(eval("x > 0 or undefined_name", scope).as_bool());
  CHECK(eval("x < 0 and undefined_name", scope).is_bool());
  CHECK_THROWS_WITH(eval("x > 0 and undefined_name", scope), Catch::Contains("undefined_name"));
  // Folded constants must not hoist errors out of an unevaluated branch.
  CHECK(eval("x > 0 or 1 / 0", scope).as_bool());
  scope.set("x", 0);
  CHECK_THROWS_WITH(eval("x > 0 or 1 / 0", scope), Catch::Contains("ZeroDivisionError"));
}

TEST_CASE("membership and identity", "[expression]") {
  MapScope scope{{"vec", 4}, {"name", "alg_2"}, {"n", Value()}};
  CHECK(eval("vec in [1,2,4]", scope).as_bool());
  CHECK_FALSE(eval("vec not in [1,2,4]", scope).as_bool());
  CHECK(eval("4.0 in [1, 2, 4]").as_bool());
  CHECK(eval("'g_2' in name", scope).as_bool());
  CHECK_FALSE(eval("'x' in name", scope).as_bool());
  CHECK(eval("[1, 2] in [[1, 2], 3]").as_bool());
  CHECK(eval("n is None", scope).as_bool());
  CHECK_FALSE(eval("vec is None", scope).as_bool());
  CHECK(eval("vec is not None", scope).as_bool());
  CHECK_FALSE(eval("1 is True").as_bool());
  CHECK_THROWS_WITH(eval("1 in 5"), Catch::Contains("not iterable"));
  CHECK_THROWS_WITH(eval("1 in 'abc'"), Catch::Contains("requires string as left operand"));
}

TEST_CASE("list comprehensions", "[expression]") {
  CHECK(repr_of("[32*i for i in range(1,33)]").substr(0, 20) == "[32, 64, 96, 128, 16");
  CHECK(eval("[32*i for i in range(1,33)]").as_list().size() == 32);
  CHECK(eval("[32*i for i in range(1,33)]").as_list().back().as_int() == 1024);
  CHECK(repr_of("[i*j for i in range(3) for j in range(i)]") == "[0, 0, 2]");
  CHECK(repr_of("[i for i in range(10) if i % 2 if i > 3]") == "[5, 7, 9]");
  CHECK(repr_of("[a + b for a, b in [[1, 2], [3, 4]]]") == "[3, 7]");
  CHECK(repr_of("[a for (a, b) in [(1, 2), (3, 4)]]") == "[1, 3]");
  CHECK(repr_of("[[j for j in range(i)] for i in range(3)]") == "[[], [0], [0, 1]]");
  CHECK(repr_of("[c for c in 'ab']") == "['a', 'b']");
  CHECK(repr_of("sum(i for i in range(5))") == "10");
  CHECK(repr_of("[i for i in range(3) if i in L]") == "[1, 2]");
}

TEST_CASE("comprehension variables shadow outer names", "[expression]") {
  MapScope scope{{"i", 100}, {"n", 3}};
  CHECK(repr_of("[i for i in range(3)]") == "[0, 1, 2]");
  CHECK(eval("[i for i in range(n)] + [i]", scope).repr() == "[0, 1, 2, 100]");
  // The first iterable is evaluated in the enclosing scope (Python 3 rule).
  CHECK(eval("[i for i in range(i - 98)]", scope).repr() == "[0, 1]");
  // The innermost binding wins; the outer comprehension's i is restored afterwards.
  CHECK(eval("[[i for i in range(2)] + [i] for i in [7, 8]]", scope).repr() ==
        "[[0, 1, 7], [0, 1, 8]]");
  // Many comprehension variables (more than the small inline frame).
  CHECK(
      repr_of("[a+b+c+d+e+f+g+h+k for a in [1] for b in [1] for c in [1] for d in [1] for e in [1] "
              "for f in [1] for g in [1] for h in [1] for k in [x]]") == "[12]");
}

TEST_CASE("range and builtins", "[expression]") {
  CHECK(repr_of("range(5)") == "[0, 1, 2, 3, 4]");
  CHECK(repr_of("range(2, 10, 3)") == "[2, 5, 8]");
  CHECK(repr_of("range(10, 0, -3)") == "[10, 7, 4, 1]");
  CHECK(repr_of("range(3, 3)") == "[]");
  CHECK(repr_of("range(-9223372036854775807 - 1, -9223372036854775807 + 1)") ==
        "[-9223372036854775808, -9223372036854775807]");
  CHECK(repr_of("len(range(7))") == "7");
  CHECK(repr_of("len('\\u00e9a')") == "2");  // code points, not bytes
  CHECK(repr_of("max(3, 7, 5)") == "7");
  CHECK(repr_of("max([1, 2.0, 2])") == "2.0");  // the first of equal maxima
  CHECK(repr_of("min(3.5, 2)") == "2");
  CHECK(repr_of("min('bca')") == "'a'");
  CHECK(repr_of("abs(-3)") == "3");
  CHECK(repr_of("abs(-3.5)") == "3.5");
  CHECK(repr_of("int(-3.9)") == "-3");
  CHECK(repr_of("int('0x1f', 0)") == "31");
  CHECK(repr_of("float('1e-3')") == "0.001");
  CHECK(repr_of("round(2.5)") == "2");
  CHECK(repr_of("round(-2.5)") == "-2");
  CHECK(repr_of("round(2.675, 2)") == "2.67");
  CHECK(repr_of("round(1250, -2)") == "1200");
  CHECK(repr_of("round(1350, -2)") == "1400");
  CHECK(repr_of("round(150.0, -2)") == "200.0");
  CHECK(repr_of("sum([0.1]*10)") == "0.9999999999999999");
  CHECK(repr_of("sum([[1], [2]], [])") == "[1, 2]");
  CHECK(repr_of("list('ab')") == "['a', 'b']");
  CHECK(repr_of("str(1e-5)") == "'1e-05'");
  CHECK(repr_of("bool([])") == "False");
  CHECK(repr_of("pow(2, 10)") == "1024");
  CHECK(repr_of("pow(-3, 3, 5)") == "3");
  CHECK(repr_of("any([0, 0, 1])") == "True");
  CHECK(repr_of("all([1, 2, 0])") == "False");
  CHECK(repr_of("ProblemSize[0]+max(filter_width)-1") == "1030");
}

TEST_CASE("literals", "[expression]") {
  CHECK(eval("9223372036854775807").as_int() == INT64_MAX);
  CHECK(eval("-9223372036854775808").as_int() == INT64_MIN);
  CHECK(eval("-9223372036854775808 // 2").as_int() == INT64_MIN / 2);
  CHECK_THROWS_WITH(Expression::parse("-9223372036854775808 ** 1"), Catch::Contains("too large"));
  CHECK_THROWS_WITH(Expression::parse("9223372036854775808"), Catch::Contains("too large"));
  CHECK(eval("1e-5").as_float() == 1e-5);
  CHECK(eval("1_000").as_int() == 1000);
  CHECK(eval("0b101").as_int() == 5);
  CHECK(eval("0o17").as_int() == 15);
  CHECK(eval("0xff").as_int() == 255);
  CHECK(eval(".5").as_float() == 0.5);
  CHECK(eval("1e400").str() == "inf");
  CHECK(eval("1e-400").str() == "0.0");
  CHECK(eval("'it''s'").as_string() == "its");
  CHECK(eval("\"it's\"").as_string() == "it's");
  CHECK(eval("'a\\tb'").as_string() == "a\tb");
  CHECK(eval("r'a\\tb'").as_string() == "a\\tb");
  CHECK(eval("'''x'y'''").as_string() == "x'y");
  CHECK(eval("True").as_bool());
  CHECK(eval("None").is_none());
  CHECK(eval("(1, 2)").repr() == "[1, 2]");  // tuples are lists
  CHECK(eval("1, 2").repr() == "[1, 2]");
  CHECK(eval("()").repr() == "[]");
  CHECK(eval("[1, 2, ]").repr() == "[1, 2]");
}

TEST_CASE("integer overflow is an error, not undefined behaviour", "[expression]") {
  for (const char* text :
       {"2**63", "9223372036854775807 + 1", "-9223372036854775807 - 2", "4611686018427387904 * 2",
        "-(-9223372036854775807 - 1)", "abs(-9223372036854775807 - 1)",
        "(-9223372036854775807 - 1) // -1", "1 << 63", "int(1e19)", "3 ** 40"}) {
    INFO(text);
    CHECK_THROWS_WITH(eval(text), Catch::Contains("OverflowError"));
  }
  CHECK(eval("2**62").as_int() == 4611686018427387904);
  CHECK(eval("(-2)**63").as_int() == INT64_MIN);
  CHECK(eval("-9223372036854775807 - 1").as_int() == INT64_MIN);
}

TEST_CASE("evaluation errors", "[expression]") {
  CHECK_THROWS_WITH(eval("1 / 0"), Catch::Contains("ZeroDivisionError"));
  CHECK_THROWS_WITH(eval("1 // 0"), Catch::Contains("ZeroDivisionError"));
  CHECK_THROWS_WITH(eval("1 % 0"), Catch::Contains("ZeroDivisionError"));
  CHECK_THROWS_WITH(eval("1.5 % 0.0"), Catch::Contains("ZeroDivisionError"));
  CHECK_THROWS_WITH(eval("x / (x - 4)"), Catch::Contains("ZeroDivisionError"));
  CHECK_THROWS_WITH(eval("0 ** -1"), Catch::Contains("ZeroDivisionError"));
  CHECK_THROWS_WITH(eval("\"a\" - 1"),
                    Catch::Contains("unsupported operand type(s) for -: 'str' and 'int'"));
  CHECK_THROWS_WITH(eval("s < 1"),
                    Catch::Contains("'<' not supported between instances of 'str' and 'int'"));
  CHECK_THROWS_WITH(eval("-s"), Catch::Contains("bad operand type for unary -: 'str'"));
  CHECK_THROWS_WITH(eval("L[3]"), Catch::Contains("IndexError"));
  CHECK_THROWS_WITH(eval("L[1.0]"), Catch::Contains("TypeError"));
  CHECK_THROWS_WITH(eval("x[0]"), Catch::Contains("not subscriptable"));
  CHECK_THROWS_WITH(eval("len(5)"), Catch::Contains("has no len()"));
  CHECK_THROWS_WITH(eval("max([])"), Catch::Contains("empty sequence"));
  CHECK_THROWS_WITH(eval("range(0, 5, 0)"), Catch::Contains("must not be zero"));
  CHECK_THROWS_WITH(eval("range(1.5)"), Catch::Contains("cannot be interpreted as an integer"));
  CHECK_THROWS_WITH(eval("int('abc')"), Catch::Contains("invalid literal for int()"));
  CHECK_THROWS_WITH(eval("[a for a, b in [[1, 2, 3]]]"),
                    Catch::Contains("too many values to unpack"));
  CHECK_THROWS_WITH(eval("(-8) ** 0.5"), Catch::Contains("fractional power"));
  CHECK_THROWS_WITH(eval("10.0 ** 400"), Catch::Contains("OverflowError"));
  CHECK_THROWS_WITH(eval("len(range(10**9))"), Catch::Contains("MemoryError"));
  CHECK_THROWS_WITH(eval("[0] * 10**9"), Catch::Contains("MemoryError"));
  // The message is one line and names the expression.
  CHECK_THROWS_WITH(eval("\"a\" - 1"), Catch::StartsWith("expression '\"a\" - 1': TypeError"));
  CHECK_THROWS_WITH(eval("1 +\n s"), !Catch::Contains("\n"));
}

TEST_CASE("unknown names are reported by name", "[expression]") {
  const Expression e = Expression::parse("block_size_x * tile_size_y <= 1024");
  MapScope scope{{"block_size_x", 32}};
  CHECK_THROWS_WITH(e.evaluate(scope), Catch::Contains("name 'tile_size_y' is not defined"));
  scope.set("tile_size_y", 8);
  CHECK(e.evaluate(scope).as_bool());
  scope.set("tile_size_y", 64);
  CHECK_FALSE(e.evaluate(scope).as_bool());
  CHECK_THROWS_WITH(Expression().evaluate(scope), Catch::Contains("empty"));
}

TEST_CASE("parse errors name the expression and the column", "[expression]") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"1 +", "column 4"},    {"(1 + 2", "column 7"},    {"[1, 2", "column 6"},
      {"1 2", "column 3"},    {"a = 2", "column 3"},     {"x.y", "column 2"},
      {"foo(1)", "column 1"}, {"x[1:2]", "column 4"},    {"'abc", "column 1"},
      {"012", "column 1"},    {"1 $ 2", "column 3"},     {"", "column 1"},
      {"   ", "column 4"},    {"lambda: 1", "column 1"}, {"[x for in y]", "column 8"},
      {"1 if 2", "column 7"}, {"len(1, 2)", "column 1"}, {"round()", "column 1"},
      {"3j", "column 1"},     {"f'x'", "column 1"},      {"max(x for x in L, 1)", "column 17"},
  };
  for (const auto& [text, column] : cases) {
    INFO("expression: " << text);
    CHECK_THROWS_AS(Expression::parse(text), ExpressionError);
    CHECK_THROWS_WITH(Expression::parse(text),
                      Catch::Contains(column) && Catch::Contains("'" + text + "'"));
  }
  CHECK_THROWS_WITH(Expression::parse("a\n+"), Catch::Contains("'a +'") && !Catch::Contains("\n"));
}

// The tokenizer reports its own errors: the column is the offending character's (an escape's
// backslash, a number's underscore), or the start of the literal it cannot read, counted in
// bytes from 1, also when the literal follows other tokens.
TEST_CASE("tokenizer errors point at the offending character", "[expression]") {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"'\\x4'", "column 2", "truncated \\x escape"},
      {"'a\\N{DASH}'", "column 3", "\\N{...} escapes are not supported"},
      {"'\\U00110000'", "column 2", "illegal Unicode character"},
      {"1__0", "column 2", "invalid underscore in number"},
      {"x + 0b2", "column 5", "invalid number literal"},
      {"x + 9223372036854775808", "column 5", "integer literal too large"},
      {"a \\ b", "column 3", "unexpected character '\\'"},
      {"(a := 1)", "column 4", "unsupported operator ':='"},
      {"x = 1", "column 3", "assignment is not allowed"},
      {"1 + \"ab\ncd\"", "column 5", "unterminated string literal"},
      {"1 + b'x'", "column 5", "bytes literals are not supported"},
  };
  for (const auto& [text, column, message] : cases) {
    INFO("expression: " << text);
    CHECK_THROWS_WITH(Expression::parse(text),
                      Catch::Contains("SyntaxError at " + column + ": " + message));
  }
  // The one literal the tokenizer lets through out of range: the parser accepts it only
  // after a unary minus.
  CHECK(eval("-9223372036854775808").as_int() == INT64_MIN);
  CHECK_THROWS_WITH(Expression::parse("x - 9223372036854775808"),
                    Catch::Contains("column 5: integer literal too large"));
}

TEST_CASE("hostile nesting is rejected, not a stack overflow", "[expression]") {
  const auto repeat = [](const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
  };
  CHECK(eval(repeat("(", 150) + "x" + repeat(")", 150)).as_int() == 4);
  CHECK(eval(repeat("-", 150) + "1").as_int() == 1);
  CHECK_THROWS_WITH(Expression::parse(repeat("(", 1000) + "1" + repeat(")", 1000)),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(Expression::parse(repeat("[", 100000)), Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(Expression::parse(repeat("-", 100000) + "1"),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(Expression::parse(repeat("not ", 100000) + "1"),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(Expression::parse("2" + repeat("**2", 100000)),
                    Catch::Contains("nested too deeply"));
  CHECK_THROWS_WITH(Expression::parse("x" + repeat("+x", 100000)), Catch::Contains("too deeply"));
  CHECK_THROWS_WITH(Expression::parse("1" + repeat(" if 1 else 1", 100000)),
                    Catch::Contains("too deeply"));
  // Flat chains stay flat: long and/or/comparison chains and lists are fine.
  CHECK(eval("x" + repeat(" and x", 5000)).as_int() == 4);
  CHECK(eval("1" + repeat(" < 2", 5000)).is_bool());
  CHECK(eval("[" + repeat("x, ", 5000) + "x]").as_list().size() == 5001);
  CHECK(eval("x" + repeat("+x", 300)).as_int() == 4 * 301);
}

TEST_CASE("names() lists free names in order of first appearance", "[expression]") {
  CHECK(Expression::parse("ProblemSize[0]+max(filter_width)-1").names() ==
        std::vector<std::string>{"ProblemSize", "filter_width"});
  CHECK(Expression::parse("b * a + b * c").names() == std::vector<std::string>{"b", "a", "c"});
  CHECK(Expression::parse("[x*i for i in range(n) if i > lo]").names() ==
        std::vector<std::string>{"x", "n", "lo"});
  CHECK(Expression::parse("[i for i in L] + [i]").names() == std::vector<std::string>{"L", "i"});
  CHECK(Expression::parse("[32*i for i in range(1,33)]").names().empty());
  CHECK(Expression::parse("len(x) + len").names() == std::vector<std::string>{"x", "len"});
  CHECK(Expression::parse("True and None is not False").names().empty());
  CHECK(Expression::parse("a if b else c").names() == std::vector<std::string>{"a", "b", "c"});
  const Expression e = Expression::parse("  vec in [1,2,4] ");
  CHECK(e.text() == "  vec in [1,2,4] ");
  CHECK(e.names() == std::vector<std::string>{"vec"});
}

TEST_CASE("an expression is parsed once and evaluated many times", "[expression]") {
  const Expression restriction = Expression::parse("block_size_x*elements_per_thread <= 4096");
  const Expression copy = restriction;  // shares the tree
  MapScope scope;
  int accepted = 0;
  for (int bx = 32; bx <= 1024; bx *= 2) {
    for (int ept = 1; ept <= 16; ++ept) {
      scope.set("block_size_x", bx);
      scope.set("elements_per_thread", ept);
      if (copy.evaluate(scope).truthy()) ++accepted;
    }
  }
  int expected = 0;
  for (int bx = 32; bx <= 1024; bx *= 2) {
    for (int ept = 1; ept <= 16; ++ept) expected += (bx * ept <= 4096) ? 1 : 0;
  }
  CHECK(accepted == expected);
  CHECK(accepted == 76);
  CHECK(copy.text() == restriction.text());
}

TEST_CASE("values of several types flow through names", "[expression]") {
  MapScope scope{
      {"alg", "alg_2"}, {"f", 0.5}, {"on", true}, {"sizes", ValueList{1, ValueList{2, 3}}}};
  CHECK(eval("alg == 'alg_2' and on", scope).as_bool());
  CHECK(eval("f * 2 == 1", scope).as_bool());
  CHECK(eval("on + on", scope).as_int() == 2);
  CHECK(eval("sizes[1][-1]", scope).as_int() == 3);
  CHECK(eval("str(sizes)", scope).as_string() == "[1, [2, 3]]");
  CHECK(eval("alg[-1]", scope).as_string() == "2");
  CHECK(eval("alg * 2", scope).as_string() == "alg_2alg_2");
}
