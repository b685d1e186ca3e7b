// Python-expression parser and evaluator. The text is tokenized and parsed once into a
// tree; comprehension variables are resolved to frame slots and name-free subtrees are
// folded into constants, so the hot path (restrictions evaluated millions of times during
// space enumeration) does no string work beyond Scope::lookup.
#include "cutune/model/expression.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <utility>

namespace cutune {

namespace detail {

enum class Op : std::uint8_t {
  Const,
  Name,   // free name, looked up in the Scope
  Local,  // comprehension variable, in the frame slot `slot`
  List,   // list or tuple display
  Neg,
  Pos,
  Invert,
  Not,
  Binary,
  And,      // n-ary, returns an operand
  Or,       // n-ary, returns an operand
  Compare,  // chained: kids[0] cmps[0] kids[1] cmps[1] kids[2] ...
  Cond,     // kids: body, condition, orelse
  Subscript,
  Call,
  Comp,       // kids: element, then ForClause / IfClause nodes in source order
  ForClause,  // kids: target, iterable
  IfClause,   // kids: condition
  TargetName,
  TargetTuple,
};

enum class BinOp : std::uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  LShift,
  RShift,
  And,
  Or,
  Xor
};
enum class CmpOp : std::uint8_t { Lt, Le, Gt, Ge, Eq, Ne, In, NotIn, Is, IsNot };
enum class Builtin : std::uint8_t {
  Range,
  Len,
  Min,
  Max,
  Abs,
  Int,
  Float,
  Round,
  Sum,
  List,
  Tuple,
  Str,
  Bool,
  Pow,
  Any,
  All
};

struct ExprNode {
  Op op = Op::Const;
  BinOp bin = BinOp::Add;
  Builtin fn = Builtin::Len;
  std::uint32_t pos = 0;   // byte offset of the node's token in the text
  std::uint32_t slot = 0;  // Local, TargetName
  std::uint32_t depth =
      1;  // height of the subtree, bounded so evaluation cannot overflow the stack
  std::uint32_t frame_size = 0;  // root only: number of comprehension-variable slots
  Value constant;
  std::string name;  // Name, Local (for messages), TargetName
  std::vector<CmpOp> cmps;
  std::vector<ExprNode> kids;
};

}  // namespace detail

namespace {

using detail::BinOp;
using detail::Builtin;
using detail::CmpOp;
using detail::ExprNode;
using detail::Op;
using Kind = Value::Kind;

// Limits that keep hostile input from exhausting the stack or memory. Python itself refuses
// more than 200 nested parentheses; sequences are materialised, so their size is capped.
constexpr int kMaxNesting = 200;
constexpr std::uint32_t kMaxTreeDepth = 500;
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 24;

[[noreturn]] void fail(const std::string& msg) { throw ExpressionError(msg); }

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// UTF-8 helpers: Python strings index and iterate by code point.

std::size_t cp_length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  if ((c & 0xF8) == 0xF0) return 4;
  return 1;  // invalid lead byte: one unit
}

bool is_ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::vector<std::string_view> code_points(const std::string& s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = std::min(cp_length(static_cast<unsigned char>(s[i])), s.size() - i);
    out.emplace_back(s.data() + i, n);
    i += n;
  }
  return out;
}

void charge(std::int64_t n);  // the work budget, below

std::int64_t str_len(const std::string& s) {
  charge(static_cast<std::int64_t>(s.size()));
  if (is_ascii(s)) return static_cast<std::int64_t>(s.size());
  return static_cast<std::int64_t>(code_points(s).size());
}


// ---------------------------------------------------------------------------------------
// Python semantics on Values.

bool int_like(const Value& v) { return v.is_int() || v.is_bool(); }
std::int64_t int_of(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int(); }

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

[[noreturn]] void int_overflow(const char* what) {
  fail(std::string("OverflowError: integer overflow in ") + what + " (cutune integers are 64-bit)");
}

[[noreturn]] void zero_division(const char* msg) { fail(std::string("ZeroDivisionError: ") + msg); }

void check_sequence_size(std::int64_t n) {
  if (n > kMaxSequence) {
    fail("MemoryError: sequence of " + std::to_string(n) + " elements exceeds cutune's limit of " +
         std::to_string(kMaxSequence));
  }
}

// Work budget of one evaluation (and of the constant folding of one parse): elements made
// or visited and characters copied, compared or scanned. Nested comprehensions over big
// ranges, repeated copies of a long string, or a list that holds one big list many times
// over would otherwise run for hours or exhaust memory with every single sequence below
// kMaxSequence; Kernel Tuner's expressions need a tiny fraction of this.
constexpr std::int64_t kMaxWork = std::int64_t{1} << 22;
thread_local std::int64_t t_work_left = kMaxWork;

void charge(std::int64_t n) {
  t_work_left -= n;
  if (t_work_left < 0) {
    t_work_left = -1;  // stays exhausted; guards against wrap-around on further charges
    fail("MemoryError: expression needs more than " + std::to_string(kMaxWork) +
         " element operations (cutune's limit)");
  }
}

// A fresh budget for the evaluation in scope; the enclosing one is restored on exit.
class WorkBudget {
 public:
  WorkBudget() : saved_(t_work_left) { t_work_left = kMaxWork; }
  ~WorkBudget() { t_work_left = saved_; }
  WorkBudget(const WorkBudget&) = delete;
  WorkBudget& operator=(const WorkBudget&) = delete;

 private:
  std::int64_t saved_;
};

// Cost of copying a value: strings copy their characters, lists share their elements.
std::int64_t copy_cost(const Value& v) {
  return v.is_string() ? static_cast<std::int64_t>(v.as_string().size()) + 1 : 1;
}
const Value& charged_copy(const Value& v) {
  if (v.is_string()) charge(copy_cost(v));
  return v;
}
std::int64_t copy_cost(const ValueList& l) {
  std::int64_t cost = 0;
  for (const Value& v : l) cost += copy_cost(v);
  return cost;
}

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

// CPython's float divmod: the remainder takes the divisor's sign.
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

// Calls f(item) for each element of a list, or each character of a string.
template <typename F>
void for_each_item(const Value& v, F&& f) {
  if (v.is_list()) {
    for (const Value& item : v.as_list()) {
      charge(1);
      f(item);
    }
    return;
  }
  if (v.is_string()) {
    const std::string& s = v.as_string();
    for (std::size_t i = 0; i < s.size();) {
      charge(1);
      const std::size_t n = std::min(cp_length(static_cast<unsigned char>(s[i])), s.size() - i);
      f(Value(s.substr(i, n)));
      i += n;
    }
    return;
  }
  fail("TypeError: '" + v.type_name() + "' object is not iterable");
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

// ---------------------------------------------------------------------------------------
// Builtins.

struct BuiltinInfo {
  const char* name;
  Builtin fn;
  std::size_t min_args;
  std::size_t max_args;
};

constexpr std::size_t kMany = 1000000;
constexpr std::array<BuiltinInfo, 16> kBuiltins{{
    {"range", Builtin::Range, 1, 3},
    {"len", Builtin::Len, 1, 1},
    {"min", Builtin::Min, 1, kMany},
    {"max", Builtin::Max, 1, kMany},
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

const BuiltinInfo& builtin_info(Builtin fn) {
  for (const auto& b : kBuiltins) {
    if (b.fn == fn) return b;
  }
  return kBuiltins[0];
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

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Parses Python int literal text (as int() accepts it) in the given base; false on error.
// Sets overflow when the digits are valid but too large for int64.
bool parse_int_text(std::string_view s, int base, std::int64_t& out, bool& overflow) {
  overflow = false;
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  const auto has_prefix = [&](char lower) {
    return s.size() >= 2 && s[0] == '0' && (s[1] == lower || s[1] == lower - 32);
  };
  if (base == 0) {
    if (has_prefix('x'))
      base = 16;
    else if (has_prefix('o'))
      base = 8;
    else if (has_prefix('b'))
      base = 2;
    else
      base = 10;
    if (base == 10 && s.size() > 1 && s[0] == '0') {
      // Python: "0_0" and "00" are fine, "012" is not.
      if (s.find_first_not_of("0_") != std::string_view::npos) return false;
    }
  }
  if ((base == 16 && has_prefix('x')) || (base == 8 && has_prefix('o')) ||
      (base == 2 && has_prefix('b'))) {
    s.remove_prefix(2);
    if (!s.empty() && s.front() == '_') s.remove_prefix(1);
  }
  if (s.empty()) return false;
  __int128 value = 0;
  bool prev_digit = false;
  for (const char c : s) {
    if (c == '_') {
      if (!prev_digit) return false;
      prev_digit = false;
      continue;
    }
    const int d = digit_value(c);
    if (d >= base) return false;
    prev_digit = true;
    if (!overflow) {
      value = value * base + d;
      if (value > static_cast<__int128>(std::numeric_limits<std::int64_t>::max()) + 1)
        overflow = true;
    }
  }
  if (!prev_digit) return false;
  if (negative) value = -value;
  if (value > std::numeric_limits<std::int64_t>::max() ||
      value < std::numeric_limits<std::int64_t>::min()) {
    overflow = true;
  }
  if (!overflow) out = static_cast<std::int64_t>(value);
  return true;
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

// Parses decimal float text (digits with single underscores between digits, optional
// fraction and exponent); false when it is not a valid literal.
bool parse_float_text(std::string_view s, double& out) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  std::string lower;
  for (const char c : s) lower += static_cast<char>((c >= 'A' && c <= 'Z') ? c + 32 : c);
  if (lower == "inf" || lower == "infinity") {
    out = negative ? -HUGE_VAL : HUGE_VAL;
    return true;
  }
  if (lower == "nan") {
    out = std::copysign(std::numeric_limits<double>::quiet_NaN(), negative ? -1.0 : 1.0);
    return true;
  }
  std::string clean;
  bool any_digit = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      const bool ok = i > 0 && i + 1 < s.size() &&
                      std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                      std::isdigit(static_cast<unsigned char>(s[i + 1]));
      if (!ok) return false;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      any_digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
      return false;
    }
    clean += c;
  }
  if (!any_digit) return false;
  double value = 0;
  const auto res = std::from_chars(clean.data(), clean.data() + clean.size(), value);
  if (res.ptr != clean.data() + clean.size()) return false;
  if (res.ec == std::errc::result_out_of_range) {
    // Overflow gives inf and underflow gives 0.0, as in Python. Decide by the decimal
    // exponent of the first significant digit.
    const auto epos = clean.find_first_of("eE");
    std::string_view mant = std::string_view(clean).substr(0, epos);
    long exp10 = 0;
    if (epos != std::string::npos) {
      std::string_view e = std::string_view(clean).substr(epos + 1);
      bool eneg = false;
      if (!e.empty() && (e.front() == '+' || e.front() == '-')) {
        eneg = e.front() == '-';
        e.remove_prefix(1);
      }
      std::from_chars(e.data(), e.data() + e.size(), exp10);
      if (eneg) exp10 = -exp10;
    }
    const auto dot = mant.find('.');
    const std::string_view int_part = mant.substr(0, dot);
    const auto first_nz = int_part.find_first_not_of('0');
    long lead = 0;
    if (first_nz != std::string_view::npos) {
      lead = static_cast<long>(int_part.size() - first_nz) - 1;
    } else if (dot != std::string_view::npos) {
      const std::string_view frac = mant.substr(dot + 1);
      lead = -static_cast<long>(frac.find_first_not_of('0')) - 1;
    }
    value = (lead + exp10 > 0) ? HUGE_VAL : 0.0;
  } else if (res.ec != std::errc()) {
    return false;
  }
  out = negative ? -value : value;
  return true;
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

// ---------------------------------------------------------------------------------------
// Evaluation.

struct Frame {
  const Scope& scope;
  Value* locals;
};

Value eval(const ExprNode& n, Frame& f);

// Returns a reference to the value of n without copying constants, scope values and
// comprehension variables; other results go to tmp.
const Value& ev(const ExprNode& n, Frame& f, Value& tmp) {
  switch (n.op) {
    case Op::Const:
      return n.constant;
    case Op::Name: {
      const Value* v = f.scope.lookup(n.name);
      if (v == nullptr) fail("NameError: name '" + n.name + "' is not defined");
      return *v;
    }
    case Op::Local:
      return f.locals[n.slot];
    default:
      tmp = eval(n, f);
      return tmp;
  }
}

void bind_target(const ExprNode& t, const Value& item, Frame& f) {
  if (t.op == Op::TargetName) {
    f.locals[t.slot] = charged_copy(item);
    return;
  }
  if (!item.is_list() && !item.is_string()) {
    fail("TypeError: cannot unpack non-iterable " + item.type_name() + " object");
  }
  const Value items = to_list(item);
  const ValueList& l = items.as_list();
  if (l.size() < t.kids.size()) {
    fail("ValueError: not enough values to unpack (expected " + std::to_string(t.kids.size()) +
         ", got " + std::to_string(l.size()) + ")");
  }
  if (l.size() > t.kids.size()) {
    fail("ValueError: too many values to unpack (expected " + std::to_string(t.kids.size()) + ")");
  }
  for (std::size_t i = 0; i < l.size(); ++i) bind_target(t.kids[i], l[i], f);
}

void run_clauses(const ExprNode& comp, std::size_t ci, Frame& f, ValueList& out) {
  if (ci == comp.kids.size()) {
    out.push_back(eval(comp.kids[0], f));
    check_sequence_size(static_cast<std::int64_t>(out.size()));
    return;
  }
  const ExprNode& c = comp.kids[ci];
  Value tmp;
  if (c.op == Op::IfClause) {
    if (ev(c.kids[0], f, tmp).truthy()) run_clauses(comp, ci + 1, f, out);
    return;
  }
  // Hold the iterable by value: it stays alive however the loop rebinds variables.
  const Value iterable = ev(c.kids[1], f, tmp);
  for_each_item(iterable, [&](const Value& item) {
    bind_target(c.kids[0], item, f);
    run_clauses(comp, ci + 1, f, out);
  });
}

Value eval(const ExprNode& n, Frame& f) {
  charge(1);
  switch (n.op) {
    case Op::Const:
    case Op::Name:
    case Op::Local: {
      Value tmp;
      return charged_copy(ev(n, f, tmp));
    }
    case Op::List: {
      ValueList out;
      out.reserve(n.kids.size());
      for (const ExprNode& k : n.kids) out.push_back(eval(k, f));
      return out;
    }
    case Op::Neg: {
      Value tmp;
      const Value& v = ev(n.kids[0], f, tmp);
      if (int_like(v)) {
        const std::int64_t i = int_of(v);
        if (i == std::numeric_limits<std::int64_t>::min()) int_overflow("unary -");
        return -i;
      }
      if (v.is_float()) return -v.as_float();
      fail("TypeError: bad operand type for unary -: '" + v.type_name() + "'");
    }
    case Op::Pos: {
      Value tmp;
      const Value& v = ev(n.kids[0], f, tmp);
      if (int_like(v)) return int_of(v);
      if (v.is_float()) return v;
      fail("TypeError: bad operand type for unary +: '" + v.type_name() + "'");
    }
    case Op::Invert: {
      Value tmp;
      const Value& v = ev(n.kids[0], f, tmp);
      if (int_like(v)) return ~int_of(v);
      fail("TypeError: bad operand type for unary ~: '" + v.type_name() + "'");
    }
    case Op::Not: {
      Value tmp;
      return !ev(n.kids[0], f, tmp).truthy();
    }
    case Op::Binary: {
      Value ta;
      Value tb;
      const Value& a = ev(n.kids[0], f, ta);
      const Value& b = ev(n.kids[1], f, tb);
      return binary(n.bin, a, b);
    }
    case Op::And:
    case Op::Or: {
      const bool stop_on = n.op == Op::Or;
      Value tmp;
      for (std::size_t i = 0; i + 1 < n.kids.size(); ++i) {
        const Value& v = ev(n.kids[i], f, tmp);
        if (v.truthy() == stop_on) return charged_copy(v);
      }
      return eval(n.kids.back(), f);
    }
    case Op::Compare: {
      std::array<Value, 2> bufs;
      std::size_t free_buf = 1;
      const Value* left = &ev(n.kids[0], f, bufs[0]);
      for (std::size_t i = 0; i < n.cmps.size(); ++i) {
        const Value* right = &ev(n.kids[i + 1], f, bufs[free_buf]);
        if (!compare(n.cmps[i], *left, *right)) return false;
        left = right;
        free_buf = 1 - free_buf;
      }
      return true;
    }
    case Op::Cond: {
      Value tmp;
      return ev(n.kids[1], f, tmp).truthy() ? eval(n.kids[0], f) : eval(n.kids[2], f);
    }
    case Op::Subscript: {
      Value ta;
      Value tb;
      const Value& obj = ev(n.kids[0], f, ta);
      const Value& index = ev(n.kids[1], f, tb);
      return subscript(obj, index);
    }
    case Op::Call: {
      const std::size_t count = n.kids.size();
      if (count <= 4) {
        std::array<Value, 4> args;
        for (std::size_t i = 0; i < count; ++i) args[i] = eval(n.kids[i], f);
        return call_builtin(n.fn, args.data(), count);
      }
      ValueList args;
      args.reserve(count);
      for (const ExprNode& k : n.kids) args.push_back(eval(k, f));
      return call_builtin(n.fn, args.data(), count);
    }
    case Op::Comp: {
      ValueList out;
      run_clauses(n, 1, f, out);
      return out;
    }
    case Op::ForClause:
    case Op::IfClause:
    case Op::TargetName:
    case Op::TargetTuple:
      break;
  }
  fail("internal error: node is not an expression");
}

// ---------------------------------------------------------------------------------------
// Tokenizer.

enum class Tok : std::uint8_t { End, Number, String, Name, Op };

struct Token {
  Tok kind = Tok::End;
  std::uint32_t pos = 0;
  std::string_view text;           // Name, Op
  Value value;                     // Number, String
  bool int_min_magnitude = false;  // the literal 9223372036854775808, valid only after unary -
};

constexpr std::array<std::string_view, 35> kKeywords{
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};

bool is_keyword(std::string_view s) {
  return std::find(kKeywords.begin(), kKeywords.end(), s) != kKeywords.end();
}

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ExprNode parse() {
    if (text_.size() > std::numeric_limits<std::uint32_t>::max() / 2)
      error(0, "expression too long");
    tokenize();
    if (peek().kind == Tok::End) error(peek().pos, "empty expression");
    ExprNode root = parse_testlist();
    if (peek().kind != Tok::End) error(peek().pos, "unexpected " + describe(peek()));
    return root;
  }

 private:
  [[noreturn]] void error(std::size_t pos, const std::string& msg) const {
    throw ExpressionError("cannot parse expression '" + one_line(text_) +
                          "': SyntaxError at column " + std::to_string(pos + 1) + ": " + msg);
  }

  // ---- tokenizer ----

  void tokenize() {
    std::size_t i = 0;
    while (true) {
      while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' ||
                                  text_[i] == '\r' || text_[i] == '\f' || text_[i] == '\\')) {
        if (text_[i] == '\\' &&
            !(i + 1 < text_.size() && (text_[i + 1] == '\n' || text_[i + 1] == '\r'))) {
          error(i, "unexpected character '\\'");
        }
        ++i;
      }
      Token t;
      t.pos = static_cast<std::uint32_t>(i);
      if (i >= text_.size()) {
        toks_.push_back(std::move(t));
        return;
      }
      const char c = text_[i];
      if (is_digit(c) || (c == '.' && i + 1 < text_.size() && is_digit(text_[i + 1]))) {
        i = lex_number(i, t);
      } else if (c == '\'' || c == '"') {
        i = lex_string(i, i, false, t);
      } else if (ident_start(c)) {
        std::size_t j = i;
        while (j < text_.size() && ident_char(text_[j])) ++j;
        const std::string_view word = text_.substr(i, j - i);
        if (j < text_.size() && (text_[j] == '\'' || text_[j] == '"') && word.size() <= 2 &&
            word.find_first_not_of("rRuUbBfF") == std::string_view::npos) {
          if (word.find_first_of("bB") != std::string_view::npos)
            error(i, "bytes literals are not supported");
          if (word.find_first_of("fF") != std::string_view::npos)
            error(i, "f-strings are not supported");
          i = lex_string(i, j, word.find_first_of("rR") != std::string_view::npos, t);
        } else {
          t.kind = Tok::Name;
          t.text = word;
          i = j;
        }
      } else {
        static constexpr std::array<std::string_view, 10> two{
            "**", "//", "<=", ">=", "==", "!=", "<<", ">>", "->", ":="};
        static constexpr std::string_view one = "+-*/%<>()[],:~&|^.";
        t.kind = Tok::Op;
        const std::string_view rest = text_.substr(i);
        bool found = false;
        for (const auto op : two) {
          if (rest.substr(0, 2) == op) {
            if (op == "->" || op == ":=")
              error(i, "unsupported operator '" + std::string(op) + "'");
            t.text = op;
            found = true;
            break;
          }
        }
        if (!found) {
          if (one.find(c) == std::string_view::npos) {
            if (c == '=') error(i, "assignment is not allowed (did you mean '=='?)");
            error(i, std::string("unexpected character '") + c + "'");
          }
          t.text = rest.substr(0, 1);
        }
        i += t.text.size();
      }
      toks_.push_back(std::move(t));
    }
  }

  std::size_t lex_number(std::size_t start, Token& t) {
    t.kind = Tok::Number;
    std::size_t i = start;
    const auto scan_digits = [&](auto valid) {
      // digits with single underscores between them
      bool prev_digit = false;
      while (i < text_.size()) {
        const char c = text_[i];
        if (c == '_') {
          if (!prev_digit || i + 1 >= text_.size() || !valid(text_[i + 1]))
            error(i, "invalid underscore in number");
          prev_digit = false;
        } else if (valid(c)) {
          prev_digit = true;
        } else {
          break;
        }
        ++i;
      }
    };
    const auto check_end = [&] {
      if (i < text_.size() && (text_[i] == 'j' || text_[i] == 'J'))
        error(start, "complex literals are not supported");
      if (i < text_.size() && ident_char(text_[i])) error(start, "invalid number literal");
    };
    const auto finish_int = [&](std::string_view digits, int base) {
      std::int64_t v = 0;
      bool overflow = false;
      if (!parse_int_text(digits, base, v, overflow)) error(start, "invalid number literal");
      if (overflow) {
        // -9223372036854775808 is a valid int64; its magnitude alone is not.
        std::int64_t negated = 0;
        bool negated_overflow = false;
        const std::string neg_text = "-" + std::string(digits);
        if (parse_int_text(neg_text, base, negated, negated_overflow) && !negated_overflow &&
            negated == std::numeric_limits<std::int64_t>::min()) {
          t.int_min_magnitude = true;
        } else {
          error(start, "integer literal too large (cutune integers are 64-bit)");
        }
      }
      t.value = v;
    };
    if (text_[i] == '0' && i + 1 < text_.size()) {
      const char p = text_[i + 1];
      int base = 0;
      if (p == 'x' || p == 'X') base = 16;
      if (p == 'o' || p == 'O') base = 8;
      if (p == 'b' || p == 'B') base = 2;
      if (base != 0) {
        i += 2;
        if (i < text_.size() && text_[i] == '_') ++i;
        const std::size_t digits_start = i;
        scan_digits([](char c) { return digit_value(c) < 16; });
        if (i == digits_start) error(start, "invalid number literal");
        check_end();
        finish_int(text_.substr(start, i - start), 0);
        return i;
      }
    }
    scan_digits(is_digit);
    bool is_float = false;
    if (i < text_.size() && text_[i] == '.') {
      is_float = true;
      ++i;
      if (i < text_.size() && is_digit(text_[i])) scan_digits(is_digit);
    }
    if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
      std::size_t j = i + 1;
      if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
      if (j < text_.size() && is_digit(text_[j])) {
        is_float = true;
        i = j;
        scan_digits(is_digit);
      } else {
        error(start, "invalid number literal");
      }
    }
    check_end();
    const std::string_view lit = text_.substr(start, i - start);
    if (is_float) {
      double d = 0;
      if (!parse_float_text(lit, d)) error(start, "invalid number literal");
      t.value = d;
    } else {
      if (lit.size() > 1 && lit[0] == '0' &&
          lit.find_first_not_of("0_") != std::string_view::npos) {
        error(start, "leading zeros in decimal integer literals are not permitted");
      }
      finish_int(lit, 10);
    }
    return i;
  }

  std::size_t lex_string(std::size_t start, std::size_t quote_pos, bool raw, Token& t) {
    t.kind = Tok::String;
    const char q = text_[quote_pos];
    const bool triple = text_.substr(quote_pos, 3) == std::string(3, q);
    std::size_t i = quote_pos + (triple ? 3 : 1);
    std::string out;
    while (true) {
      if (i >= text_.size()) error(start, "unterminated string literal");
      const char c = text_[i];
      if (c == q && (!triple || text_.substr(i, 3) == std::string(3, q))) {
        i += triple ? 3 : 1;
        break;
      }
      if ((c == '\n' || c == '\r') && !triple) error(start, "unterminated string literal");
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= text_.size()) error(start, "unterminated string literal");
      const char e = text_[i + 1];
      if (raw) {
        // Raw strings keep the backslash; it still prevents the quote from ending the string.
        out += c;
        out += e;
        i += 2;
        continue;
      }
      i += 2;
      switch (e) {
        case '\n':
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t len = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          if (i + len > text_.size()) error(i - 2, "truncated \\" + std::string(1, e) + " escape");
          std::uint32_t cp = 0;
          for (std::size_t k = 0; k < len; ++k) {
            const int d = digit_value(text_[i + k]);
            if (d >= 16) error(i - 2, "truncated \\" + std::string(1, e) + " escape");
            cp = cp * 16 + static_cast<std::uint32_t>(d);
          }
          if (cp > 0x10FFFF) error(i - 2, "illegal Unicode character");
          append_utf8(out, cp);
          i += len;
          break;
        }
        case 'N':
          error(i - 2, "\\N{...} escapes are not supported");
        default:
          if (e >= '0' && e <= '7') {
            std::uint32_t cp = static_cast<std::uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < text_.size() && text_[i] >= '0' && text_[i] <= '7';
                 ++k, ++i) {
              cp = cp * 8 + static_cast<std::uint32_t>(text_[i] - '0');
            }
            append_utf8(out, cp);
          } else {
            out += '\\';  // unknown escapes stay as written, as in Python
            out += e;
          }
      }
    }
    t.value = std::move(out);
    return i;
  }

  // ---- token helpers ----

  const Token& peek(std::size_t ahead = 0) const {
    return toks_[std::min(pos_ + ahead, toks_.size() - 1)];
  }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is_op(std::string_view op, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::Op && t.text == op;
  }
  bool is_kw(std::string_view kw, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::Name && t.text == kw;
  }
  bool accept_op(std::string_view op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  void expect_op(std::string_view op, std::string_view context) {
    if (!accept_op(op)) {
      error(peek().pos, "expected '" + std::string(op) + "' " + std::string(context) + ", found " +
                            describe(peek()));
    }
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End:
        return "end of expression";
      case Tok::Number:
        return "number " + t.value.str();
      case Tok::String:
        return "string " + t.value.repr();
      case Tok::Name:
        return "'" + std::string(t.text) + "'";
      case Tok::Op:
        return "'" + std::string(t.text) + "'";
    }
    return "token";
  }

  // ---- tree helpers ----

  ExprNode node(Op op, std::uint32_t pos, std::vector<ExprNode> kids = {}) const {
    ExprNode n;
    n.op = op;
    n.pos = pos;
    std::uint32_t depth = 0;
    for (const ExprNode& k : kids) depth = std::max(depth, k.depth);
    n.depth = depth + 1;
    if (n.depth > kMaxTreeDepth) {
      error(pos, "expression too deeply nested (more than " + std::to_string(kMaxTreeDepth) +
                     " levels)");
    }
    n.kids = std::move(kids);
    return n;
  }
  static std::vector<ExprNode> list_of(ExprNode a) {
    std::vector<ExprNode> v;
    v.push_back(std::move(a));
    return v;
  }
  static std::vector<ExprNode> list_of(ExprNode a, ExprNode b) {
    std::vector<ExprNode> v;
    v.reserve(2);
    v.push_back(std::move(a));
    v.push_back(std::move(b));
    return v;
  }

  // ---- grammar (Python 3, expressions only) ----

  // testlist: test (',' test)* [',']  -- a tuple when there is a comma
  ExprNode parse_testlist() {
    const std::uint32_t pos = peek().pos;
    ExprNode first = parse_test();
    if (!is_op(",")) return first;
    std::vector<ExprNode> items;
    items.push_back(std::move(first));
    while (accept_op(",")) {
      if (!starts_expression()) break;
      items.push_back(parse_test());
    }
    return node(Op::List, pos, std::move(items));
  }

  bool starts_expression() const {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::End:
        return false;
      case Tok::Number:
      case Tok::String:
        return true;
      case Tok::Name:
        return !is_keyword(t.text) || t.text == "not" || t.text == "True" || t.text == "False" ||
               t.text == "None" || t.text == "lambda";
      case Tok::Op:
        return t.text == "(" || t.text == "[" || t.text == "-" || t.text == "+" || t.text == "~";
    }
    return false;
  }

  // test: or_test ['if' or_test 'else' test]
  ExprNode parse_test() {
    NestGuard guard(*this);
    if (is_kw("lambda")) error(peek().pos, "lambda is not supported");
    ExprNode body = parse_or();
    if (!is_kw("if")) return body;
    const std::uint32_t pos = next().pos;
    ExprNode cond = parse_or();
    if (!is_kw("else"))
      error(peek().pos, "expected 'else' in conditional expression, found " + describe(peek()));
    next();
    ExprNode orelse = parse_test();
    std::vector<ExprNode> kids;
    kids.reserve(3);
    kids.push_back(std::move(body));
    kids.push_back(std::move(cond));
    kids.push_back(std::move(orelse));
    return node(Op::Cond, pos, std::move(kids));
  }

  ExprNode parse_bool_chain(Op op, std::string_view kw, ExprNode (Parser::*operand)()) {
    const std::uint32_t pos = peek().pos;
    ExprNode first = (this->*operand)();
    if (!is_kw(kw)) return first;
    std::vector<ExprNode> kids;
    kids.push_back(std::move(first));
    while (is_kw(kw)) {
      next();
      kids.push_back((this->*operand)());
    }
    return node(op, pos, std::move(kids));
  }
  ExprNode parse_or() { return parse_bool_chain(Op::Or, "or", &Parser::parse_and); }
  ExprNode parse_and() { return parse_bool_chain(Op::And, "and", &Parser::parse_not); }

  ExprNode parse_not() {
    if (!is_kw("not")) return parse_comparison();
    NestGuard guard(*this);
    const std::uint32_t pos = next().pos;
    return node(Op::Not, pos, list_of(parse_not()));
  }

  bool comparison_op(CmpOp& op, std::size_t& width) const {
    width = 1;
    const Token& t = peek();
    if (t.kind == Tok::Op) {
      if (t.text == "<")
        op = CmpOp::Lt;
      else if (t.text == "<=")
        op = CmpOp::Le;
      else if (t.text == ">")
        op = CmpOp::Gt;
      else if (t.text == ">=")
        op = CmpOp::Ge;
      else if (t.text == "==")
        op = CmpOp::Eq;
      else if (t.text == "!=")
        op = CmpOp::Ne;
      else
        return false;
      return true;
    }
    if (is_kw("in")) {
      op = CmpOp::In;
      return true;
    }
    if (is_kw("not") && is_kw("in", 1)) {
      op = CmpOp::NotIn;
      width = 2;
      return true;
    }
    if (is_kw("is")) {
      if (is_kw("not", 1)) {
        op = CmpOp::IsNot;
        width = 2;
      } else {
        op = CmpOp::Is;
      }
      return true;
    }
    return false;
  }

  ExprNode parse_comparison() {
    const std::uint32_t pos = peek().pos;
    ExprNode first = parse_binary_level(0);
    CmpOp op{};
    std::size_t width = 0;
    if (!comparison_op(op, width)) return first;
    std::vector<ExprNode> kids;
    std::vector<CmpOp> cmps;
    kids.push_back(std::move(first));
    while (comparison_op(op, width)) {
      for (std::size_t k = 0; k < width; ++k) next();
      cmps.push_back(op);
      kids.push_back(parse_binary_level(0));
    }
    ExprNode n = node(Op::Compare, pos, std::move(kids));
    n.cmps = std::move(cmps);
    return n;
  }

  // Left-associative binary levels, loosest first: | ^ & (<< >>) (+ -) (* / // %).
  struct Level {
    std::array<std::pair<std::string_view, BinOp>, 4> ops;
    std::size_t count;
  };
  static constexpr std::array<Level, 6> kLevels{{
      {{{{"|", BinOp::Or}}}, 1},
      {{{{"^", BinOp::Xor}}}, 1},
      {{{{"&", BinOp::And}}}, 1},
      {{{{"<<", BinOp::LShift}, {">>", BinOp::RShift}}}, 2},
      {{{{"+", BinOp::Add}, {"-", BinOp::Sub}}}, 2},
      {{{{"*", BinOp::Mul}, {"/", BinOp::Div}, {"//", BinOp::FloorDiv}, {"%", BinOp::Mod}}}, 4},
  }};

  ExprNode parse_binary_level(std::size_t level) {
    if (level == kLevels.size()) return parse_factor();
    ExprNode left = parse_binary_level(level + 1);
    while (true) {
      const Token& t = peek();
      if (t.kind != Tok::Op) return left;
      const Level& lv = kLevels[level];
      const auto* found =
          std::find_if(lv.ops.begin(), lv.ops.begin() + static_cast<std::ptrdiff_t>(lv.count),
                       [&](const auto& p) { return p.first == t.text; });
      if (found == lv.ops.begin() + static_cast<std::ptrdiff_t>(lv.count)) return left;
      const std::uint32_t pos = next().pos;
      ExprNode right = parse_binary_level(level + 1);
      ExprNode n = node(Op::Binary, pos, list_of(std::move(left), std::move(right)));
      n.bin = found->second;
      left = std::move(n);
    }
  }

  // factor: ('+'|'-'|'~') factor | power
  ExprNode parse_factor() {
    Op op{};
    if (is_op("-"))
      op = Op::Neg;
    else if (is_op("+"))
      op = Op::Pos;
    else if (is_op("~"))
      op = Op::Invert;
    else
      return parse_power();
    NestGuard guard(*this);
    const std::uint32_t pos = next().pos;
    if (op == Op::Neg && peek().kind == Tok::Number && peek().int_min_magnitude &&
        !is_op("**", 1)) {
      next();
      return constant(std::numeric_limits<std::int64_t>::min(), pos);
    }
    return node(op, pos, list_of(parse_factor()));
  }

  // power: primary ['**' factor]  -- right-associative, and binds tighter than a unary
  // operator on its left (-2**2 == -4) but not on its right (2**-1 == 0.5).
  ExprNode parse_power() {
    ExprNode base = parse_primary();
    if (!is_op("**")) return base;
    NestGuard guard(*this);
    const std::uint32_t pos = next().pos;
    ExprNode n = node(Op::Binary, pos, list_of(std::move(base), parse_factor()));
    n.bin = BinOp::Pow;
    return n;
  }

  ExprNode parse_primary() {
    ExprNode n = parse_atom();
    while (true) {
      if (is_op("[")) {
        const std::uint32_t pos = next().pos;
        if (is_op(":")) error(peek().pos, "slices are not supported");
        ExprNode index = parse_test();
        if (is_op(":")) error(peek().pos, "slices are not supported");
        if (is_op(",")) error(peek().pos, "tuple indices are not supported");
        expect_op("]", "to close the subscript");
        n = node(Op::Subscript, pos, list_of(std::move(n), std::move(index)));
      } else if (is_op("(")) {
        error(peek().pos, n.op == Op::Name ? "unknown function '" + n.name + "'"
                                           : std::string("only builtin functions can be called"));
      } else if (is_op(".")) {
        error(peek().pos, "attribute access is not supported");
      } else {
        return n;
      }
    }
  }

  ExprNode parse_call(const Token& name_tok, Builtin fn) {
    const std::uint32_t pos = name_tok.pos;
    const BuiltinInfo& info = builtin_info(fn);
    next();  // '('
    std::vector<ExprNode> args;
    while (!is_op(")")) {
      if (peek().kind == Tok::Name && is_op("=", 1))
        error(peek().pos, "keyword arguments are not supported");
      if (is_op("*") || is_op("**")) error(peek().pos, "argument unpacking is not supported");
      const std::uint32_t arg_pos = peek().pos;
      ExprNode arg = parse_test();
      if (is_kw("for")) {
        // A generator expression as the only argument: sum(x for x in l).
        if (!args.empty()) error(peek().pos, "generator expression must be the only argument");
        args.push_back(parse_comprehension(std::move(arg), arg_pos));
        if (!is_op(")")) error(peek().pos, "generator expression must be parenthesized");
        break;
      }
      args.push_back(std::move(arg));
      if (!accept_op(",")) break;
    }
    expect_op(")", "to close the call of " + std::string(info.name) + "()");
    if (args.size() < info.min_args || args.size() > info.max_args) {
      std::string expect = info.min_args == info.max_args ? std::to_string(info.min_args)
                           : info.max_args == kMany ? "at least " + std::to_string(info.min_args)
                                                    : std::to_string(info.min_args) + " to " +
                                                          std::to_string(info.max_args);
      error(pos, std::string(info.name) + "() takes " + expect + " argument(s) (" +
                     std::to_string(args.size()) + " given)");
    }
    ExprNode n = node(Op::Call, pos, std::move(args));
    n.fn = fn;
    return n;
  }

  // Parses the `for ... in ... [if ...]` clauses after element.
  ExprNode parse_comprehension(ExprNode element, std::uint32_t pos) {
    std::vector<ExprNode> kids;
    kids.push_back(std::move(element));
    while (is_kw("for")) {
      const std::uint32_t for_pos = next().pos;
      ExprNode target = parse_target_list();
      if (!is_kw("in"))
        error(peek().pos, "expected 'in' in comprehension, found " + describe(peek()));
      next();
      ExprNode iterable = parse_or();
      kids.push_back(node(Op::ForClause, for_pos, list_of(std::move(target), std::move(iterable))));
      while (is_kw("if")) {
        const std::uint32_t if_pos = next().pos;
        kids.push_back(node(Op::IfClause, if_pos, list_of(parse_or())));
      }
    }
    return node(Op::Comp, pos, std::move(kids));
  }

  ExprNode parse_target_list() {
    const std::uint32_t pos = peek().pos;
    ExprNode first = parse_target();
    if (!is_op(",")) return first;
    std::vector<ExprNode> kids;
    kids.push_back(std::move(first));
    while (accept_op(",")) {
      if (is_kw("in")) break;
      kids.push_back(parse_target());
    }
    return node(Op::TargetTuple, pos, std::move(kids));
  }

  ExprNode parse_target() {
    NestGuard guard(*this);
    const Token& t = peek();
    if (is_op("(") || is_op("[")) {
      const std::string close = is_op("(") ? ")" : "]";
      next();
      std::vector<ExprNode> kids;
      while (!is_op(close)) {
        kids.push_back(parse_target());
        if (!accept_op(",")) break;
      }
      expect_op(close, "to close the loop target");
      return node(Op::TargetTuple, t.pos, std::move(kids));
    }
    if (t.kind != Tok::Name || is_keyword(t.text)) {
      error(t.pos, "expected a variable name after 'for', found " + describe(t));
    }
    ExprNode n = node(Op::TargetName, t.pos);
    n.name = std::string(t.text);
    next();
    return n;
  }

  ExprNode constant(Value v, std::uint32_t pos) const {
    ExprNode n = node(Op::Const, pos);
    n.constant = std::move(v);
    return n;
  }

  ExprNode parse_atom() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::End:
        error(t.pos, "unexpected end of expression");
      case Tok::Number: {
        if (t.int_min_magnitude)
          error(t.pos, "integer literal too large (cutune integers are 64-bit)");
        next();
        return constant(t.value, t.pos);
      }
      case Tok::String: {
        // Adjacent literals concatenate: 'a' "b" == 'ab'.
        std::string s;
        const std::uint32_t pos = t.pos;
        while (peek().kind == Tok::String) s += next().value.as_string();
        return constant(std::move(s), pos);
      }
      case Tok::Name: {
        if (t.text == "True" || t.text == "False" || t.text == "None") {
          next();
          if (t.text == "None") return constant(Value(), t.pos);
          return constant(t.text == "True", t.pos);
        }
        if (is_keyword(t.text)) error(t.pos, "unexpected keyword '" + std::string(t.text) + "'");
        if (is_op("(", 1)) {
          for (const auto& b : kBuiltins) {
            if (t.text == b.name) {
              next();
              return parse_call(t, b.fn);
            }
          }
          error(t.pos, "unknown function '" + std::string(t.text) + "'");
        }
        ExprNode n = node(Op::Name, t.pos);
        n.name = std::string(t.text);
        next();
        return n;
      }
      case Tok::Op:
        break;
    }
    // Parenthesised and bracketed contents go through parse_test, which counts the nesting.
    if (t.text == "(") {
      const std::uint32_t pos = next().pos;
      if (accept_op(")")) return node(Op::List, pos);  // () is an empty tuple
      const std::uint32_t inner_pos = peek().pos;
      ExprNode first = parse_test();
      if (is_kw("for")) {
        ExprNode comp = parse_comprehension(std::move(first), inner_pos);
        expect_op(")", "to close the generator expression");
        return comp;
      }
      if (accept_op(")")) return first;  // plain parentheses
      std::vector<ExprNode> items;
      items.push_back(std::move(first));
      while (accept_op(",")) {
        if (is_op(")")) break;
        items.push_back(parse_test());
      }
      expect_op(")", "to close the parenthesis");
      return node(Op::List, pos, std::move(items));
    }
    if (t.text == "[") {
      const std::uint32_t pos = next().pos;
      if (accept_op("]")) return node(Op::List, pos);
      ExprNode first = parse_test();
      if (is_kw("for")) {
        ExprNode comp = parse_comprehension(std::move(first), pos);
        expect_op("]", "to close the list comprehension");
        return comp;
      }
      std::vector<ExprNode> items;
      items.push_back(std::move(first));
      while (accept_op(",")) {
        if (is_op("]")) break;
        items.push_back(parse_test());
      }
      expect_op("]", "to close the list");
      return node(Op::List, pos, std::move(items));
    }
    error(t.pos, "unexpected " + describe(t));
  }

  struct NestGuard {
    explicit NestGuard(Parser& p) : parser(p) {
      if (++parser.nesting_ > kMaxNesting) {
        parser.error(parser.peek().pos, "expression nested too deeply (more than " +
                                            std::to_string(kMaxNesting) + " levels)");
      }
    }
    ~NestGuard() { --parser.nesting_; }
    NestGuard(const NestGuard&) = delete;
    NestGuard& operator=(const NestGuard&) = delete;
    Parser& parser;
  };

  std::string_view text_;
  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
};

// ---------------------------------------------------------------------------------------
// Post-parse passes.

// Binds comprehension variables to frame slots (innermost binding wins) and collects the
// free names with their positions.
struct Resolver {
  std::vector<std::pair<std::string_view, std::uint32_t>> bound;
  std::uint32_t next_slot = 0;
  std::vector<std::pair<std::uint32_t, std::string>> free;

  void resolve(ExprNode& n) {
    switch (n.op) {
      case Op::Name:
        for (auto it = bound.rbegin(); it != bound.rend(); ++it) {
          if (it->first == n.name) {
            n.op = Op::Local;
            n.slot = it->second;
            return;
          }
        }
        free.emplace_back(n.pos, n.name);
        return;
      case Op::Comp: {
        // Python: the first iterable is evaluated in the enclosing scope; later clauses and
        // the element see the variables bound by earlier clauses.
        const std::size_t mark = bound.size();
        for (std::size_t i = 1; i < n.kids.size(); ++i) {
          ExprNode& c = n.kids[i];
          if (c.op == Op::ForClause) {
            resolve(c.kids[1]);
            bind(c.kids[0]);
          } else {
            resolve(c.kids[0]);
          }
        }
        resolve(n.kids[0]);
        bound.resize(mark);
        return;
      }
      default:
        for (ExprNode& k : n.kids) resolve(k);
    }
  }

  void bind(ExprNode& target) {
    if (target.op == Op::TargetName) {
      target.slot = next_slot++;
      bound.emplace_back(target.name, target.slot);
      return;
    }
    for (ExprNode& k : target.kids) bind(k);
  }
};

class EmptyScope : public Scope {
 public:
  const Value* lookup(std::string_view) const override { return nullptr; }
};

// True when the subtree reads no free name and only comprehension variables it binds itself.
bool collect_closed(const ExprNode& n, std::vector<std::uint32_t>& reads,
                    std::vector<std::uint32_t>& binds) {
  if (n.op == Op::Name) return false;
  if (n.op == Op::Local) reads.push_back(n.slot);
  if (n.op == Op::TargetName) binds.push_back(n.slot);
  for (const ExprNode& k : n.kids) {
    if (!collect_closed(k, reads, binds)) return false;
  }
  return true;
}

bool is_closed(const ExprNode& n) {
  std::vector<std::uint32_t> reads;
  std::vector<std::uint32_t> binds;
  if (!collect_closed(n, reads, binds)) return false;
  return std::all_of(reads.begin(), reads.end(), [&](std::uint32_t s) {
    return std::find(binds.begin(), binds.end(), s) != binds.end();
  });
}

// Replaces name-free subtrees by their value ("[32*i for i in range(1,33)]" becomes a
// constant list). A subtree whose evaluation fails is kept, so the error surfaces only if
// evaluation reaches it, as in Python.
void fold_constants(ExprNode& n, std::uint32_t frame_size) {
  switch (n.op) {
    case Op::Const:
    case Op::Name:
    case Op::Local:
    case Op::TargetName:
    case Op::TargetTuple:
      return;
    case Op::ForClause:
      fold_constants(n.kids[1], frame_size);
      return;
    case Op::IfClause:
      fold_constants(n.kids[0], frame_size);
      return;
    default:
      break;
  }
  if (is_closed(n)) {
    try {
      const EmptyScope scope;
      std::vector<Value> locals(frame_size);
      Frame f{scope, locals.data()};
      Value v = eval(n, f);
      ExprNode c;
      c.op = Op::Const;
      c.pos = n.pos;
      c.constant = std::move(v);
      n = std::move(c);
      return;
    } catch (const ExpressionError&) {
      // left for evaluation time
    }
  }
  for (ExprNode& k : n.kids) fold_constants(k, frame_size);
}

}  // namespace

Expression Expression::parse(std::string_view text) {
  Parser parser(text);
  ExprNode root = parser.parse();
  Resolver resolver;
  resolver.resolve(root);
  {
    const WorkBudget budget;  // one for all the folding: a costly subtree is not retried
    fold_constants(root, resolver.next_slot);
  }
  root.frame_size = resolver.next_slot;

  Expression e;
  e.text_ = std::string(text);
  std::stable_sort(resolver.free.begin(), resolver.free.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [pos, name] : resolver.free) {
    if (std::find(e.names_.begin(), e.names_.end(), name) == e.names_.end())
      e.names_.push_back(std::move(name));
  }
  e.root_ = std::make_shared<const ExprNode>(std::move(root));
  return e;
}

Value Expression::evaluate(const Scope& scope) const {
  if (!root_) throw ExpressionError("cannot evaluate an empty expression (default-constructed)");
  const WorkBudget budget;
  try {
    const std::uint32_t slots = root_->frame_size;
    if (slots == 0) {
      Frame f{scope, nullptr};
      return eval(*root_, f);
    }
    if (slots <= 8) {
      std::array<Value, 8> locals;
      Frame f{scope, locals.data()};
      return eval(*root_, f);
    }
    std::vector<Value> locals(slots);
    Frame f{scope, locals.data()};
    return eval(*root_, f);
  } catch (const ExpressionError& e) {
    throw ExpressionError("expression '" + one_line(text_) + "': " + e.what());
  }
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace cutune
