// Python's arithmetic, comparisons, membership, identity and subscripts on Values: the
// rules of CPython 3 for int (64-bit here, overflow is an error), float, str and list.
#include "python_semantics.hpp"

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

namespace cutune::detail {

void int_overflow(const char* what) {
  fail(std::string("OverflowError: integer overflow in ") + what + " (cutune integers are 64-bit)");
}

void float_divmod(double vx, double wx, double& floordiv, double& mod) {
  mod = std::fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0) {
    if ((wx < 0) != (mod < 0)) {
      mod += wx;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, wx);
  }
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
  } else {
    floordiv = std::copysign(0.0, vx / wx);
  }
}

namespace {

using Kind = Value::Kind;

const char* bin_symbol(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "**";
    case BinOp::LShift:
      return "<<";
    case BinOp::RShift:
      return ">>";
    case BinOp::And:
      return "&";
    case BinOp::Or:
      return "|";
    case BinOp::Xor:
      return "^";
  }
  return "?";
}

const char* cmp_symbol(CmpOp op) {
  switch (op) {
    case CmpOp::Lt:
      return "<";
    case CmpOp::Le:
      return "<=";
    case CmpOp::Gt:
      return ">";
    case CmpOp::Ge:
      return ">=";
    case CmpOp::Eq:
      return "==";
    case CmpOp::Ne:
      return "!=";
    case CmpOp::In:
      return "in";
    case CmpOp::NotIn:
      return "not in";
    case CmpOp::Is:
      return "is";
    case CmpOp::IsNot:
      return "is not";
  }
  return "?";
}

[[noreturn]] void unsupported_operands(const char* sym, const Value& a, const Value& b) {
  fail(std::string("TypeError: unsupported operand type(s) for ") + sym + ": '" + a.type_name() +
       "' and '" + b.type_name() + "'");
}

[[noreturn]] void zero_division(const char* msg) { fail(std::string("ZeroDivisionError: ") + msg); }

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) int_overflow("*");
  return r;
}

// CPython's float_pow, including its special cases and errors.
double float_pow(double iv, double iw) {
  if (iw == 0) return 1.0;
  if (std::isnan(iv)) return iv;
  if (std::isnan(iw)) return iv == 1.0 ? 1.0 : iw;
  if (std::isinf(iw)) {
    const double a = std::fabs(iv);
    if (a == 1.0) return 1.0;
    return ((iw > 0) == (a > 1.0)) ? std::fabs(iw) : 0.0;
  }
  const bool iw_is_odd = std::fmod(std::fabs(iw), 2.0) == 1.0;
  if (std::isinf(iv)) {
    if (iw > 0) return iw_is_odd ? iv : std::fabs(iv);
    return iw_is_odd ? std::copysign(0.0, iv) : 0.0;
  }
  if (iv == 0.0) {
    if (iw < 0) zero_division("0.0 cannot be raised to a negative power");
    return iw_is_odd ? iv : 0.0;
  }
  if (iv < 0 && iw != std::floor(iw)) {
    fail(
        "ValueError: negative number raised to a fractional power (complex results are not "
        "supported)");
  }
  const double r = std::pow(iv, iw);
  if (std::isinf(r)) fail("OverflowError: (34, 'Numerical result out of range')");
  return r;
}

Value int_pow(std::int64_t base, std::int64_t exp) {
  if (exp < 0) {
    if (base == 0) zero_division("0.0 cannot be raised to a negative power");
    return float_pow(static_cast<double>(base), static_cast<double>(exp));
  }
  std::int64_t result = 1;
  // If the base must be squared again it will be multiplied in later, so an overflow of the
  // square is an overflow of the result.
  while (exp > 0) {
    if (exp & 1) result = checked_mul(result, base);
    exp >>= 1;
    if (exp > 0) base = checked_mul(base, base);
  }
  return result;
}

Value int_binary(BinOp op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  switch (op) {
    case BinOp::Add:
      if (__builtin_add_overflow(a, b, &r)) int_overflow("+");
      return r;
    case BinOp::Sub:
      if (__builtin_sub_overflow(a, b, &r)) int_overflow("-");
      return r;
    case BinOp::Mul:
      return checked_mul(a, b);
    case BinOp::Div: {
      if (b == 0) zero_division("division by zero");
      // Exact for |a|, |b| <= 2**53; beyond that long double keeps the error tiny.
      constexpr std::int64_t exact = std::int64_t{1} << 53;
      if (a >= -exact && a <= exact && b >= -exact && b <= exact) {
        return static_cast<double>(a) / static_cast<double>(b);
      }
      return static_cast<double>(static_cast<long double>(a) / static_cast<long double>(b));
    }
    case BinOp::FloorDiv: {
      if (b == 0) zero_division("integer division or modulo by zero");
      if (b == -1) {
        if (a == std::numeric_limits<std::int64_t>::min()) int_overflow("//");
        return -a;
      }
      std::int64_t q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    }
    case BinOp::Mod: {
      if (b == 0) zero_division("integer modulo by zero");
      if (b == -1) return std::int64_t{0};
      std::int64_t m = a % b;
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      return m;
    }
    case BinOp::Pow:
      return int_pow(a, b);
    case BinOp::LShift:
      if (b < 0) fail("ValueError: negative shift count");
      if (a == 0) return std::int64_t{0};
      if (b >= 63) int_overflow("<<");
      return checked_mul(a, std::int64_t{1} << b);
    case BinOp::RShift:
      if (b < 0) fail("ValueError: negative shift count");
      if (b >= 63) return std::int64_t{a < 0 ? -1 : 0};
      return a >> b;
    case BinOp::And:
      return a & b;
    case BinOp::Or:
      return a | b;
    case BinOp::Xor:
      return a ^ b;
  }
  return Value();
}

Value repeat(const Value& seq, std::int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    // An empty sequence repeats to itself at once ('' * 10**18 used to loop 10**18 times).
    if (s.empty()) return std::string();
    check_sequence_size(n > kMaxSequence ? n : n * static_cast<std::int64_t>(s.size()));
    charge(n * static_cast<std::int64_t>(s.size()));
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) out += s;
    return out;
  }
  const ValueList& l = seq.as_list();
  if (l.empty()) return ValueList{};
  check_sequence_size(n > kMaxSequence ? n : n * static_cast<std::int64_t>(l.size()));
  const std::int64_t each = copy_cost(l);  // n <= kMaxSequence: the product cannot overflow
  charge(each > kMaxWork ? kMaxWork + 1 : n * each);
  ValueList out;
  out.reserve(l.size() * static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out.insert(out.end(), l.begin(), l.end());
  return out;
}

}  // namespace

Value binary(BinOp op, const Value& a, const Value& b) {
  if (int_like(a) && int_like(b)) {
    if (a.is_bool() && b.is_bool()) {
      if (op == BinOp::And) return a.as_bool() && b.as_bool();
      if (op == BinOp::Or) return a.as_bool() || b.as_bool();
      if (op == BinOp::Xor) return a.as_bool() != b.as_bool();
    }
    return int_binary(op, int_of(a), int_of(b));
  }
  if (a.is_number() && b.is_number()) {
    const double x = a.to_double();
    const double y = b.to_double();
    switch (op) {
      case BinOp::Add:
        return x + y;
      case BinOp::Sub:
        return x - y;
      case BinOp::Mul:
        return x * y;
      case BinOp::Div:
        if (y == 0) zero_division("float division by zero");
        return x / y;
      case BinOp::FloorDiv:
      case BinOp::Mod: {
        if (y == 0)
          zero_division(op == BinOp::Mod ? "float modulo" : "float floor division by zero");
        double q = 0;
        double m = 0;
        float_divmod(x, y, q, m);
        return op == BinOp::Mod ? m : q;
      }
      case BinOp::Pow:
        return float_pow(x, y);
      default:
        unsupported_operands(bin_symbol(op), a, b);
    }
  }
  switch (op) {
    case BinOp::Add:
      if (a.is_string() && b.is_string()) {
        charge(static_cast<std::int64_t>(a.as_string().size() + b.as_string().size()));
        return a.as_string() + b.as_string();
      }
      if (a.is_list() && b.is_list()) {
        check_sequence_size(static_cast<std::int64_t>(a.as_list().size() + b.as_list().size()));
        charge(copy_cost(a.as_list()) + copy_cost(b.as_list()));
        ValueList out = a.as_list();
        out.insert(out.end(), b.as_list().begin(), b.as_list().end());
        return out;
      }
      break;
    case BinOp::Mul:
      if ((a.is_string() || a.is_list()) && int_like(b)) return repeat(a, int_of(b));
      if (int_like(a) && (b.is_string() || b.is_list())) return repeat(b, int_of(a));
      if (a.is_string() || a.is_list() || b.is_string() || b.is_list()) {
        const Value& other = (a.is_string() || a.is_list()) ? b : a;
        fail("TypeError: can't multiply sequence by non-int of type '" + other.type_name() + "'");
      }
      break;
    case BinOp::Mod:
      if (a.is_string())
        fail("TypeError: printf-style string formatting (str % ...) is not supported");
      break;
    default:
      break;
  }
  unsupported_operands(bin_symbol(op), a, b);
}

namespace {

int compare_int_float(std::int64_t i, double d) {
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  const double t = std::trunc(d);
  const auto ti = static_cast<std::int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  const double frac = d - t;
  return frac > 0 ? -1 : (frac < 0 ? 1 : 0);
}

std::partial_ordering to_ordering(int c) {
  return c < 0 ? std::partial_ordering::less
               : (c > 0 ? std::partial_ordering::greater : std::partial_ordering::equivalent);
}

// Python's == (Value's operator==) with its work charged: lists element by element, strings
// by length. A list holding one big list many times over compares in time far beyond its
// size.
bool equal(const Value& a, const Value& b) {
  if (a.is_list() && b.is_list()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      charge(1);
      if (!equal(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_string() && b.is_string())
    charge(static_cast<std::int64_t>(std::min(a.as_string().size(), b.as_string().size())));
  return a == b;
}

// Python's ordering for <, <=, >, >=; TypeError between unorderable types.
std::partial_ordering order(const Value& a, const Value& b, CmpOp op) {
  if (a.is_number() && b.is_number()) {
    if (int_like(a) && int_like(b)) return int_of(a) <=> int_of(b);
    if (a.is_float() && b.is_float()) return a.as_float() <=> b.as_float();
    if (a.is_float()) {
      if (std::isnan(a.as_float())) return std::partial_ordering::unordered;
      return to_ordering(-compare_int_float(int_of(b), a.as_float()));
    }
    if (std::isnan(b.as_float())) return std::partial_ordering::unordered;
    return to_ordering(compare_int_float(int_of(a), b.as_float()));
  }
  if (a.is_string() && b.is_string()) {
    charge(static_cast<std::int64_t>(std::min(a.as_string().size(), b.as_string().size())));
    const int c = a.as_string().compare(b.as_string());  // UTF-8 byte order == code point order
    return to_ordering(c);
  }
  if (a.is_list() && b.is_list()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    const std::size_t n = std::min(x.size(), y.size());
    for (std::size_t i = 0; i < n; ++i) {
      charge(1);
      if (!equal(x[i], y[i])) return order(x[i], y[i], op);
    }
    return x.size() <=> y.size();
  }
  fail(std::string("TypeError: '") + cmp_symbol(op) + "' not supported between instances of '" +
       a.type_name() + "' and '" + b.type_name() + "'");
}

bool contains(const Value& container, const Value& item) {
  if (container.is_list()) {
    for (const Value& v : container.as_list()) {
      charge(1);
      if (equal(v, item)) return true;
    }
    return false;
  }
  if (container.is_string()) {
    if (!item.is_string()) {
      fail("TypeError: 'in <string>' requires string as left operand, not " + item.type_name());
    }
    // A naive substring search: charge its worst case, length times pattern length.
    const __int128 cost = static_cast<__int128>(container.as_string().size()) *
                          static_cast<__int128>(std::max<std::size_t>(item.as_string().size(), 1));
    charge(cost > kMaxWork ? kMaxWork + 1 : static_cast<std::int64_t>(cost));
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  fail("TypeError: argument of type '" + container.type_name() + "' is not iterable");
}

// `is`: None and bools are singletons; ints and strings compare by value (CPython interns
// the small ones people write); lists by identity.
bool identical(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::None:
      return true;
    case Kind::Bool:
      return a.as_bool() == b.as_bool();
    case Kind::Int:
      return a.as_int() == b.as_int();
    case Kind::Float:
      return a.as_float() == b.as_float();
    case Kind::String:
      return equal(a, b);
    case Kind::List:
      return &a.as_list() == &b.as_list();
  }
  return false;
}

}  // namespace

bool compare(CmpOp op, const Value& a, const Value& b) {
  switch (op) {
    case CmpOp::Eq:
      return equal(a, b);
    case CmpOp::Ne:
      return !equal(a, b);
    case CmpOp::Lt:
      return order(a, b, op) < 0;
    case CmpOp::Le:
      return order(a, b, op) <= 0;
    case CmpOp::Gt:
      return order(a, b, op) > 0;
    case CmpOp::Ge:
      return order(a, b, op) >= 0;
    case CmpOp::In:
      return contains(b, a);
    case CmpOp::NotIn:
      return !contains(b, a);
    case CmpOp::Is:
      return identical(a, b);
    case CmpOp::IsNot:
      return !identical(a, b);
  }
  return false;
}

Value to_list(const Value& v) {
  if (v.is_list()) return v;  // Values are immutable, sharing is a copy
  ValueList out;
  for_each_item(v, [&](const Value& item) { out.push_back(item); });
  return out;
}

Value subscript(const Value& obj, const Value& index) {
  if (!obj.is_list() && !obj.is_string()) {
    fail("TypeError: '" + obj.type_name() + "' object is not subscriptable");
  }
  const char* what = obj.is_list() ? "list" : "string";
  if (!int_like(index)) {
    fail(std::string("TypeError: ") + what + " indices must be integers, not " + index.type_name());
  }
  std::int64_t i = int_of(index);
  if (obj.is_list()) {
    const ValueList& l = obj.as_list();
    const auto n = static_cast<std::int64_t>(l.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) fail("IndexError: list index out of range");
    return charged_copy(l[static_cast<std::size_t>(i)]);
  }
  const std::string& s = obj.as_string();
  charge(static_cast<std::int64_t>(s.size()));  // the scan for non-ASCII characters
  if (is_ascii(s)) {
    const auto n = static_cast<std::int64_t>(s.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) fail("IndexError: string index out of range");
    return std::string(1, s[static_cast<std::size_t>(i)]);
  }
  const auto cps = code_points(s);
  const auto n = static_cast<std::int64_t>(cps.size());
  if (i < 0) i += n;
  if (i < 0 || i >= n) fail("IndexError: string index out of range");
  return std::string(cps[static_cast<std::size_t>(i)]);
}

}  // namespace cutune::detail
