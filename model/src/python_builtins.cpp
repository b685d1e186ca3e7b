#include "python_builtins.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "python_number_text.hpp"
#include "python_semantics.hpp"

namespace cutune::detail {

namespace {

using Kind = Value::Kind;

constexpr std::array<BuiltinInfo, 16> kBuiltins{{
    {"range", Builtin::Range, 1, 3},
    {"len", Builtin::Len, 1, 1},
    {"min", Builtin::Min, 1, kManyArgs},
    {"max", Builtin::Max, 1, kManyArgs},
    {"abs", Builtin::Abs, 1, 1},
    {"int", Builtin::Int, 0, 2},
    {"float", Builtin::Float, 0, 1},
    {"round", Builtin::Round, 1, 2},
    {"sum", Builtin::Sum, 1, 2},
    {"list", Builtin::List, 0, 1},
    {"tuple", Builtin::Tuple, 0, 1},
    {"str", Builtin::Str, 0, 1},
    {"bool", Builtin::Bool, 0, 1},
    {"pow", Builtin::Pow, 2, 3},
    {"any", Builtin::Any, 1, 1},
    {"all", Builtin::All, 1, 1},
}};

std::int64_t str_len(const std::string& s) {
  charge(static_cast<std::int64_t>(s.size()));
  if (is_ascii(s)) return static_cast<std::int64_t>(s.size());
  return static_cast<std::int64_t>(code_points(s).size());
}

std::int64_t index_arg(const Value& v, const char* fn) {
  if (!int_like(v)) {
    fail(std::string("TypeError: ") + fn + "(): '" + v.type_name() +
         "' object cannot be interpreted as an integer");
  }
  return int_of(v);
}

Value builtin_range(const Value* args, std::size_t n) {
  std::int64_t start = 0;
  std::int64_t stop = 0;
  std::int64_t step = 1;
  if (n == 1) {
    stop = index_arg(args[0], "range");
  } else {
    start = index_arg(args[0], "range");
    stop = index_arg(args[1], "range");
    if (n == 3) step = index_arg(args[2], "range");
  }
  if (step == 0) fail("ValueError: range() arg 3 must not be zero");
  __int128 count = 0;
  const __int128 s = step;
  if (step > 0 && start < stop) count = (static_cast<__int128>(stop) - start - 1) / s + 1;
  if (step < 0 && start > stop) count = (static_cast<__int128>(start) - stop - 1) / -s + 1;
  if (count > kMaxSequence) check_sequence_size(kMaxSequence + 1);
  charge(static_cast<std::int64_t>(count));
  ValueList out;
  out.reserve(static_cast<std::size_t>(count));
  for (__int128 i = 0; i < count; ++i) out.emplace_back(static_cast<std::int64_t>(start + i * s));
  return out;
}

Value builtin_minmax(const Value* args, std::size_t n, bool is_max) {
  const char* fname = is_max ? "max" : "min";
  const Value* best = nullptr;
  Value best_holder;
  auto consider = [&](const Value& item) {
    // Python keeps the first of equal extremes: replace only on strict improvement.
    if (best == nullptr || compare(is_max ? CmpOp::Gt : CmpOp::Lt, item, *best)) {
      best_holder = charged_copy(item);
      best = &best_holder;
    }
  };
  if (n == 1) {
    for_each_item(args[0], consider);
    if (best == nullptr) fail(std::string("ValueError: ") + fname + "() arg is an empty sequence");
  } else {
    for (std::size_t i = 0; i < n; ++i) consider(args[i]);
  }
  return best_holder;
}

std::string strip(std::string_view s) {
  const auto ws = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::int64_t float_to_int(double d) {
  if (std::isnan(d)) fail("ValueError: cannot convert float NaN to integer");
  if (std::isinf(d)) fail("OverflowError: cannot convert float infinity to integer");
  const double t = std::trunc(d);
  if (t >= 9223372036854775808.0 || t < -9223372036854775808.0) int_overflow("int()");
  return static_cast<std::int64_t>(t);
}

Value builtin_int(const Value* args, std::size_t n) {
  if (n == 0) return std::int64_t{0};
  const Value& v = args[0];
  if (n == 2) {
    if (!v.is_string()) fail("TypeError: int() can't convert non-string with explicit base");
    const std::int64_t base = index_arg(args[1], "int");
    if (base != 0 && (base < 2 || base > 36))
      fail("ValueError: int() base must be >= 2 and <= 36, or 0");
    std::int64_t out = 0;
    bool overflow = false;
    charge(static_cast<std::int64_t>(v.as_string().size()));
    if (!parse_int_text(strip(v.as_string()), static_cast<int>(base), out, overflow)) {
      fail("ValueError: invalid literal for int() with base " + std::to_string(base) + ": " +
           v.repr());
    }
    if (overflow) int_overflow("int()");
    return out;
  }
  switch (v.kind()) {
    case Kind::Bool:
    case Kind::Int:
      return int_of(v);
    case Kind::Float:
      return float_to_int(v.as_float());
    case Kind::String: {
      std::int64_t out = 0;
      bool overflow = false;
      charge(static_cast<std::int64_t>(v.as_string().size()));
      if (!parse_int_text(strip(v.as_string()), 10, out, overflow)) {
        fail("ValueError: invalid literal for int() with base 10: " + v.repr());
      }
      if (overflow) int_overflow("int()");
      return out;
    }
    default:
      break;
  }
  fail("TypeError: int() argument must be a string or a real number, not '" + v.type_name() + "'");
}

Value builtin_float(const Value* args, std::size_t n) {
  if (n == 0) return 0.0;
  const Value& v = args[0];
  if (v.is_number()) return v.to_double();
  if (v.is_string()) {
    double out = 0;
    charge(static_cast<std::int64_t>(v.as_string().size()));
    if (!parse_float_text(strip(v.as_string()), out)) {
      fail("ValueError: could not convert string to float: " + v.repr());
    }
    return out;
  }
  fail("TypeError: float() argument must be a string or a real number, not '" + v.type_name() +
       "'");
}

// round(x, n) for a float: Python rounds the exact binary value to n decimal digits,
// ties to even, and returns the nearest double to that decimal.
double round_float_digits(double x, std::int64_t ndigits) {
  if (!std::isfinite(x) || x == 0.0) return x;
  if (ndigits > 330) return x;  // more digits than a double has: unchanged
  if (ndigits < -330) return std::copysign(0.0, x);
  char buf[512];
  if (ndigits >= 0) {
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed,
                                   static_cast<int>(ndigits));
    double out = 0;
    std::from_chars(buf, res.ptr, out);
    return out == 0.0 ? std::copysign(0.0, x) : out;
  }
  // Negative ndigits: keep (decimal exponent + ndigits + 1) significant digits.
  const auto sci = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view s(buf, static_cast<std::size_t>(sci.ptr - buf));
  int exp10 = 0;
  {
    std::string_view e = s.substr(s.find('e') + 1);
    const bool eneg = e.front() == '-';
    e.remove_prefix(1);
    std::from_chars(e.data(), e.data() + e.size(), exp10);
    if (eneg) exp10 = -exp10;
  }
  const long sig = static_cast<long>(exp10) + ndigits + 1;
  if (sig >= 1) {
    const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific,
                                   static_cast<int>(sig - 1));
    double out = 0;
    std::from_chars(buf, res.ptr, out);
    return out;
  }
  if (sig < 0) return std::copysign(0.0, x);
  // sig == 0: |x| < 10**k with k = -ndigits; the result is 0 or +-10**k, ties to 0 (even).
  const auto res =
      std::to_chars(buf, buf + sizeof buf, std::fabs(x), std::chars_format::scientific, 40);
  const std::string_view m(buf, static_cast<std::size_t>(res.ptr - buf));
  const char lead = m.front();
  bool up = lead > '5';
  if (lead == '5') {
    const std::string_view rest = m.substr(2, m.find('e') - 2);
    up = rest.find_first_not_of('0') != std::string_view::npos;
  }
  if (!up) return std::copysign(0.0, x);
  double out = 0;
  const std::string p = "1e" + std::to_string(-ndigits);
  std::from_chars(p.data(), p.data() + p.size(), out);
  return std::copysign(out, x);
}

Value builtin_round(const Value* args, std::size_t n) {
  const Value& x = args[0];
  const bool has_digits = n == 2 && !args[1].is_none();
  if (int_like(x)) {
    const std::int64_t v = int_of(x);
    if (!has_digits) return v;
    const std::int64_t nd = index_arg(args[1], "round");
    if (nd >= 0) return v;
    if (nd < -18) return std::int64_t{0};
    std::int64_t p = 1;
    for (std::int64_t i = 0; i < -nd; ++i) p *= 10;
    // Floor-divide then round half to even, in 128 bits so nothing overflows midway.
    const __int128 q0 = v / p;
    __int128 q = q0;
    __int128 r = v - q0 * p;
    if (r < 0) {
      r += p;
      --q;
    }
    if (2 * r > p || (2 * r == p && (q & 1) != 0)) ++q;
    const __int128 out = q * p;
    if (out > std::numeric_limits<std::int64_t>::max() ||
        out < std::numeric_limits<std::int64_t>::min()) {
      int_overflow("round()");
    }
    return static_cast<std::int64_t>(out);
  }
  if (!x.is_float()) fail("TypeError: type " + x.type_name() + " doesn't define __round__ method");
  const double d = x.as_float();
  if (has_digits) return round_float_digits(d, index_arg(args[1], "round"));
  if (std::isnan(d)) fail("ValueError: cannot convert float NaN to integer");
  if (std::isinf(d)) fail("OverflowError: cannot convert float infinity to integer");
  return float_to_int(std::nearbyint(d));  // default rounding mode: ties to even
}

Value builtin_pow(const Value* args, std::size_t n) {
  if (n == 2) return binary(BinOp::Pow, args[0], args[1]);
  if (!int_like(args[0]) || !int_like(args[1]) || !int_like(args[2])) {
    fail("TypeError: pow() 3rd argument not allowed unless all arguments are integers");
  }
  std::int64_t base = int_of(args[0]);
  std::int64_t exp = int_of(args[1]);
  const std::int64_t mod = int_of(args[2]);
  if (mod == 0) fail("ValueError: pow() 3rd argument cannot be 0");
  if (exp < 0) fail("ValueError: pow() with a negative exponent and a modulus is not supported");
  const __int128 m = mod;
  __int128 b = base % m;
  __int128 r = 1 % m;
  while (exp > 0) {
    if (exp & 1) r = (r * b) % m;
    b = (b * b) % m;
    exp >>= 1;
  }
  if (r != 0 && ((r < 0) != (m < 0))) r += m;
  return static_cast<std::int64_t>(r);
}

// Charges the length of str(v) before it is built: a list that holds one big list many
// times over is cheap to build but huge to print.
void charge_print(const Value& v) {
  if (!v.is_list()) {
    charge(copy_cost(v));
    return;
  }
  for (const Value& item : v.as_list()) {
    charge(2);  // ", "
    charge_print(item);
  }
}

}  // namespace

const BuiltinInfo* find_builtin(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

Value call_builtin(Builtin fn, const Value* args, std::size_t n) {
  switch (fn) {
    case Builtin::Range:
      return builtin_range(args, n);
    case Builtin::Len: {
      const Value& v = args[0];
      if (v.is_list()) return static_cast<std::int64_t>(v.as_list().size());
      if (v.is_string()) return str_len(v.as_string());
      fail("TypeError: object of type '" + v.type_name() + "' has no len()");
    }
    case Builtin::Min:
      return builtin_minmax(args, n, false);
    case Builtin::Max:
      return builtin_minmax(args, n, true);
    case Builtin::Abs: {
      const Value& v = args[0];
      if (int_like(v)) {
        const std::int64_t i = int_of(v);
        if (i == std::numeric_limits<std::int64_t>::min()) int_overflow("abs()");
        return i < 0 ? -i : i;
      }
      if (v.is_float()) return std::fabs(v.as_float());
      fail("TypeError: bad operand type for abs(): '" + v.type_name() + "'");
    }
    case Builtin::Int:
      return builtin_int(args, n);
    case Builtin::Float:
      return builtin_float(args, n);
    case Builtin::Round:
      return builtin_round(args, n);
    case Builtin::Sum: {
      Value total = n == 2 ? args[1] : Value(std::int64_t{0});
      if (total.is_string()) fail("TypeError: sum() can't sum strings [use ''.join(seq) instead]");
      for_each_item(args[0], [&](const Value& item) { total = binary(BinOp::Add, total, item); });
      return total;
    }
    case Builtin::List:
    case Builtin::Tuple:
      return n == 0 ? Value(ValueList{}) : to_list(args[0]);
    case Builtin::Str:
      if (n == 0) return std::string();
      charge_print(args[0]);
      return args[0].str();
    case Builtin::Bool:
      return n == 0 ? false : args[0].truthy();
    case Builtin::Pow:
      return builtin_pow(args, n);
    case Builtin::Any:
    case Builtin::All: {
      const bool want = fn == Builtin::Any;
      bool found = false;
      for_each_item(args[0], [&](const Value& item) {
        if (!found && item.truthy() == want) found = true;
      });
      return want ? found : !found;
    }
  }
  return Value();
}

}  // namespace cutune::detail
