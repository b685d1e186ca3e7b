#include "restriction_program.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "evaluation_limits.hpp"
#include "expression_evaluator.hpp"
#include "python_builtins.hpp"
#include "python_semantics.hpp"

namespace cutune::detail {

namespace {

using NodeKind = RestrictionProgram::Node::Kind;

Num num_of_int(std::int64_t i) { return Num{Value::Kind::Int, i, 0}; }
Num num_of_bool(bool b) { return Num{Value::Kind::Bool, b ? 1 : 0, 0}; }
Num num_of_float(double d) { return Num{Value::Kind::Float, 0, d}; }

bool int_like(const Num& n) { return n.kind != Value::Kind::Float; }
bool truthy(const Num& n) { return n.kind == Value::Kind::Float ? n.d != 0 : n.i != 0; }

Value value_of(const Num& n) {
  switch (n.kind) {
    case Value::Kind::Bool:
      return Value(n.i != 0);
    case Value::Kind::Float:
      return Value(n.d);
    default:
      return Value(n.i);
  }
}

bool num_of(const Value& v, Num& out) {
  if (v.is_bool()) out = num_of_bool(v.as_bool());
  else if (v.is_int()) out = num_of_int(v.as_int());
  else if (v.is_float()) out = num_of_float(v.as_float());
  else return false;
  return true;
}

}  // namespace

// Builds the program bottom up; any construct it does not cover ends the compilation.
class ProgramBuilder {
 public:
  struct Unsupported {};

  ProgramBuilder(RestrictionProgram& p, const RestrictionProgram::ParameterIndex& parameter,
                 const Scope& constants, std::uint32_t frame_size)
      : p_(p), parameter_(parameter), constants_(constants), frame_size_(frame_size) {}

  // Index of the node computing n; `list_ok`: a constant list may stand here (the right
  // operand of `in`).
  std::uint32_t build(const ExprNode& n, bool list_ok) {
    if (!reads_parameter(n)) return constant(n, list_ok);
    RestrictionProgram::Node x;
    std::vector<std::uint32_t> kids;
    switch (n.op) {
      case Op::Name: {
        const int i = parameter_(n.name);
        const auto& nums = (*p_.numbers_)[static_cast<std::size_t>(i)];
        if (!nums) throw Unsupported{};
        x.kind = NodeKind::Param;
        x.slot = static_cast<std::uint32_t>(i);
        x.values = nums->data();
        return add(x, kids);
      }
      case Op::Neg:
      case Op::Pos:
      case Op::Invert:
      case Op::Not:
        x.kind = n.op == Op::Neg ? NodeKind::Neg : n.op == Op::Pos ? NodeKind::Pos : n.op == Op::Invert ? NodeKind::Invert : NodeKind::Not;
        kids.push_back(build(n.kids[0], false));
        return add(x, kids);
      case Op::Binary:
        x.kind = NodeKind::Binary;
        x.bin = n.bin;
        kids.push_back(build(n.kids[0], false));
        kids.push_back(build(n.kids[1], false));
        return add(x, kids);
      case Op::And:
      case Op::Or:
        x.kind = n.op == Op::And ? NodeKind::And : NodeKind::Or;
        for (const ExprNode& k : n.kids) kids.push_back(build(k, false));
        return add(x, kids);
      case Op::Cond:
        x.kind = NodeKind::Cond;
        for (const ExprNode& k : n.kids) kids.push_back(build(k, false));
        return add(x, kids);
      case Op::Compare: {
        x.kind = NodeKind::Compare;
        for (std::size_t i = 0; i < n.kids.size(); ++i) {
          // `in` a constant list, as the last link only: a list never becomes a left operand.
          const bool in_right = i > 0 && i + 1 == n.kids.size() &&
                                (n.cmps[i - 1] == CmpOp::In || n.cmps[i - 1] == CmpOp::NotIn);
          kids.push_back(build(n.kids[i], in_right));
          if (i > 0) {
            const CmpOp c = n.cmps[i - 1];
            if (c == CmpOp::Is || c == CmpOp::IsNot) throw Unsupported{};
            if ((c == CmpOp::In || c == CmpOp::NotIn) && !in_right) throw Unsupported{};
            if (in_right && p_.nodes_[kids.back()].kind != NodeKind::ConstList) throw Unsupported{};
          }
        }
        // After the kids: a comparison inside them appends its own operators first.
        x.cmps = static_cast<std::uint32_t>(p_.cmps_.size());
        p_.cmps_.insert(p_.cmps_.end(), n.cmps.begin(), n.cmps.end());
        return add(x, kids);
      }
      case Op::Call: {
        switch (n.fn) {
          case Builtin::Min:
          case Builtin::Max:
            if (n.kids.size() < 2 || n.kids.size() > 4) throw Unsupported{};  // min(list) iterates
            break;
          case Builtin::Abs:
          case Builtin::Int:
          case Builtin::Float:
          case Builtin::Bool:
            if (n.kids.size() != 1) throw Unsupported{};  // int(x, base) reads a string
            break;
          case Builtin::Round:
          case Builtin::Pow:
            if (n.kids.empty() || n.kids.size() > 3) throw Unsupported{};
            break;
          default:
            throw Unsupported{};
        }
        x.kind = NodeKind::Call;
        x.fn = n.fn;
        for (const ExprNode& k : n.kids) kids.push_back(build(k, false));
        return add(x, kids);
      }
      default:
        throw Unsupported{};  // lists, subscripts, comprehensions over parameters
    }
  }

 private:
  bool reads_parameter(const ExprNode& n) const {
    if (n.op == Op::Name && parameter_(n.name) >= 0) return true;
    for (const ExprNode& k : n.kids)
      if (reads_parameter(k)) return true;
    return false;
  }

  // Comprehension variables read in n that n does not bind itself.
  static bool closed(const ExprNode& n) {
    std::vector<std::uint32_t> reads;
    std::vector<std::uint32_t> binds;
    collect(n, reads, binds);
    for (std::uint32_t r : reads) {
      bool bound = false;
      for (std::uint32_t b : binds) bound = bound || b == r;
      if (!bound) return false;
    }
    return true;
  }
  static void collect(const ExprNode& n, std::vector<std::uint32_t>& reads, std::vector<std::uint32_t>& binds) {
    if (n.op == Op::Local) reads.push_back(n.slot);
    if (n.op == Op::TargetName) binds.push_back(n.slot);
    for (const ExprNode& k : n.kids) collect(k, reads, binds);
  }

  // A subtree that reads no parameter has one value for the whole enumeration: computed
  // here once. One that fails is left to the tree evaluator, which raises only if the
  // evaluation reaches it, as Python does.
  std::uint32_t constant(const ExprNode& n, bool list_ok) {
    if (!closed(n)) throw Unsupported{};
    Value v;
    try {
      const WorkBudget budget;
      std::vector<Value> locals(frame_size_);
      Frame f{constants_, locals.data()};
      v = eval(n, f);
    } catch (const ExpressionError&) {
      throw Unsupported{};
    }
    RestrictionProgram::Node x;
    if (num_of(v, x.value)) {
      x.kind = NodeKind::Const;
      return add(x, {});
    }
    if (!list_ok || !v.is_list()) throw Unsupported{};
    x.kind = NodeKind::ConstList;
    x.slot = static_cast<std::uint32_t>(p_.lists_.size());
    p_.lists_.push_back(std::move(v));
    return add(x, {});
  }

  std::uint32_t add(RestrictionProgram::Node x, const std::vector<std::uint32_t>& kids) {
    x.first = static_cast<std::uint32_t>(p_.kid_index_.size());
    x.count = static_cast<std::uint32_t>(kids.size());
    p_.kid_index_.insert(p_.kid_index_.end(), kids.begin(), kids.end());
    p_.nodes_.push_back(x);
    return static_cast<std::uint32_t>(p_.nodes_.size() - 1);
  }

  RestrictionProgram& p_;
  const RestrictionProgram::ParameterIndex& parameter_;
  const Scope& constants_;
  std::uint32_t frame_size_;
};

std::optional<RestrictionProgram> RestrictionProgram::compile(const Expression& expression,
                                                              const ParameterIndex& parameter,
                                                              const ParameterNumbers& numbers, const Scope& constants) {
  const ExprNode* root = expression.tree();
  if (root == nullptr) return std::nullopt;
  RestrictionProgram p;
  p.numbers_ = numbers;
  try {
    ProgramBuilder b(p, parameter, constants, root->frame_size);
    const std::uint32_t top = b.build(*root, false);
    // The root is evaluated last-built-first; keep it at the back.
    if (top + 1 != p.nodes_.size()) return std::nullopt;
  } catch (const ProgramBuilder::Unsupported&) {
    return std::nullopt;
  }
  p.build_int_code();
  std::vector<std::uint32_t> read;
  for (const Node& x : p.nodes_)
    if (x.kind == Node::Kind::Param && std::find(read.begin(), read.end(), x.slot) == read.end()) read.push_back(x.slot);
  std::uint64_t cells = 1;
  for (std::uint32_t slot : read) {
    p.table_params_.push_back(slot);
    p.table_strides_.push_back(cells);
    cells *= (*numbers)[slot]->size();
    if (cells > kMaxTableCells) break;
  }
  if (cells <= kMaxTableCells) {
    p.table_ = std::make_unique<std::atomic<std::uint8_t>[]>(cells);  // value-initialised: 0
  } else {
    p.table_params_.clear();
    p.table_strides_.clear();
  }
  return p;
}

RestrictionProgram::Result RestrictionProgram::compute(const std::uint32_t* index, std::uint64_t cell) const {
  bool holds = false;
  std::int64_t i = 0;
  if (!int_code_.empty() && run_int(index, i)) {
    holds = i != 0;
  } else {
    const WorkBudget budget;  // `in` a constant list charges its scan, as the tree evaluator does
    Num v;
    // Unsure is not kept: the tree evaluator decides it (and raises Python's error) each time.
    if (!eval(static_cast<std::uint32_t>(nodes_.size() - 1), index, v)) return Result::Unsure;
    holds = truthy(v);
  }
  if (table_) table_[cell].store(holds ? 2 : 1, std::memory_order_relaxed);
  return holds ? Result::True : Result::False;
}

void RestrictionProgram::build_int_code() {
  // Which nodes give an int: kids come before their parents in nodes_.
  std::vector<bool> is_int(nodes_.size(), false);
  for (std::size_t n = 0; n < nodes_.size(); ++n) {
    const Node& x = nodes_[n];
    const std::uint32_t* kid = kid_index_.data() + x.first;
    bool kids_int = true;
    for (std::uint32_t i = 0; i < x.count; ++i) kids_int = kids_int && is_int[kid[i]];
    switch (x.kind) {
      case Node::Kind::Const:
        is_int[n] = x.value.kind != Value::Kind::Float;
        break;
      case Node::Kind::Param: {
        const auto& nums = *(*numbers_)[x.slot];
        is_int[n] = std::all_of(nums.begin(), nums.end(), [](const Num& v) { return v.kind != Value::Kind::Float; });
        break;
      }
      case Node::Kind::Binary:
        is_int[n] = kids_int && (x.bin == BinOp::Add || x.bin == BinOp::Sub || x.bin == BinOp::Mul ||
                                 x.bin == BinOp::FloorDiv || x.bin == BinOp::Mod);
        break;
      case Node::Kind::Compare:
        is_int[n] = kids_int && std::all_of(cmps_.begin() + x.cmps, cmps_.begin() + x.cmps + x.count - 1,
                                            [](CmpOp c) { return c != CmpOp::In && c != CmpOp::NotIn; });
        break;
      case Node::Kind::Call:
        is_int[n] = kids_int && (x.fn == Builtin::Min || x.fn == Builtin::Max || x.fn == Builtin::Abs);
        break;
      case Node::Kind::ConstList:
        break;
      default:  // Neg, Pos, Invert, Not, And, Or, Cond
        is_int[n] = kids_int;
        break;
    }
  }
  if (!is_int.back()) return;
  emit_int(static_cast<std::uint32_t>(nodes_.size() - 1));
}

// Emits code leaving node n's value in register n.
void RestrictionProgram::emit_int(std::uint32_t n) {
  using Op = IntInstr::Op;
  const Node& x = nodes_[n];
  const std::uint32_t* kid = kid_index_.data() + x.first;
  const auto add = [&](Op op, std::uint32_t a = 0, std::uint32_t b = 0) {
    IntInstr in;
    in.op = op;
    in.dst = n;
    in.a = a;
    in.b = b;
    int_code_.push_back(in);
    return int_code_.size() - 1;
  };
  // Jumps to the end of n's code: patched once it is known.
  std::vector<std::size_t> to_end;
  switch (x.kind) {
    case Node::Kind::Const:
      int_code_[add(Op::Const)].imm = x.value.i;
      return;
    case Node::Kind::Param: {
      const std::size_t at = add(Op::Param, x.slot);
      int_code_[at].values = x.values;
      return;
    }
    case Node::Kind::ConstList:
      return;
    case Node::Kind::Neg:
    case Node::Kind::Pos:
    case Node::Kind::Invert:
    case Node::Kind::Not:
      emit_int(kid[0]);
      add(x.kind == Node::Kind::Neg ? Op::Neg : x.kind == Node::Kind::Pos ? Op::Move
                                                : x.kind == Node::Kind::Invert ? Op::Invert : Op::Not, kid[0]);
      return;
    case Node::Kind::Binary: {
      emit_int(kid[0]);
      emit_int(kid[1]);
      const Op op = x.bin == BinOp::Add   ? Op::Add
                    : x.bin == BinOp::Sub ? Op::Sub
                    : x.bin == BinOp::Mul ? Op::Mul
                    : x.bin == BinOp::FloorDiv ? Op::FloorDiv
                                               : Op::Mod;
      add(op, kid[0], kid[1]);
      return;
    }
    case Node::Kind::And:
    case Node::Kind::Or:
      for (std::uint32_t i = 0; i < x.count; ++i) {
        emit_int(kid[i]);
        add(Op::Move, kid[i]);
        if (i + 1 < x.count) to_end.push_back(add(x.kind == Node::Kind::And ? Op::JumpIfZero : Op::JumpIfNonZero, n));
      }
      break;
    case Node::Kind::Cond: {
      emit_int(kid[1]);
      const std::size_t to_else = add(Op::JumpIfZero, kid[1]);
      emit_int(kid[0]);
      add(Op::Move, kid[0]);
      to_end.push_back(add(Op::Jump));
      int_code_[to_else].b = static_cast<std::uint32_t>(int_code_.size());
      emit_int(kid[2]);
      add(Op::Move, kid[2]);
      break;
    }
    case Node::Kind::Compare:
      emit_int(kid[0]);
      for (std::uint32_t i = 0; i + 1 < x.count; ++i) {
        emit_int(kid[i + 1]);
        const CmpOp c = cmps_[x.cmps + i];
        const Op op = c == CmpOp::Lt ? Op::Lt : c == CmpOp::Le ? Op::Le : c == CmpOp::Gt ? Op::Gt
                      : c == CmpOp::Ge ? Op::Ge : c == CmpOp::Eq ? Op::Eq : Op::Ne;
        add(op, kid[i], kid[i + 1]);
        if (i + 2 < x.count) to_end.push_back(add(Op::JumpIfZero, n));
      }
      break;
    case Node::Kind::Call:
      if (x.fn == Builtin::Abs) {
        emit_int(kid[0]);
        add(Op::Abs, kid[0]);
        return;
      }
      for (std::uint32_t i = 0; i < x.count; ++i) emit_int(kid[i]);
      add(Op::Move, kid[0]);
      // Python keeps the first of equal extremes; equal ints are indistinguishable here.
      for (std::uint32_t i = 1; i < x.count; ++i) add(x.fn == Builtin::Min ? Op::Min : Op::Max, n, kid[i]);
      return;
  }
  // Jump targets are in `b`; conditional jumps test register `a`.
  for (std::size_t at : to_end) int_code_[at].b = static_cast<std::uint32_t>(int_code_.size());
}

// false: Unsure (an overflow or a division by zero, where Python raises or leaves 64 bits).
bool RestrictionProgram::run_int(const std::uint32_t* index, std::int64_t& out) const {
  using Op = IntInstr::Op;
  std::int64_t small[64];
  std::vector<std::int64_t> big;
  std::int64_t* r = small;
  if (nodes_.size() > 64) {
    big.resize(nodes_.size());
    r = big.data();
  }
  const IntInstr* code = int_code_.data();
  const std::size_t size = int_code_.size();
  for (std::size_t pc = 0; pc < size; ++pc) {
    const IntInstr& in = code[pc];
    std::int64_t& d = r[in.dst];
    switch (in.op) {
      case Op::Param: d = in.values[index[in.a]].i; break;
      case Op::Const: d = in.imm; break;
      case Op::Add: if (__builtin_add_overflow(r[in.a], r[in.b], &d)) return false; break;
      case Op::Sub: if (__builtin_sub_overflow(r[in.a], r[in.b], &d)) return false; break;
      case Op::Mul: if (__builtin_mul_overflow(r[in.a], r[in.b], &d)) return false; break;
      case Op::FloorDiv: {
        const std::int64_t a = r[in.a];
        const std::int64_t b = r[in.b];
        if (b == 0 || b == -1) return false;
        d = a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
        break;
      }
      case Op::Mod: {
        const std::int64_t b = r[in.b];
        if (b == 0 || b == -1) return false;
        std::int64_t m = r[in.a] % b;
        if (m != 0 && ((m < 0) != (b < 0))) m += b;
        d = m;
        break;
      }
      case Op::Neg:
        if (r[in.a] == std::numeric_limits<std::int64_t>::min()) return false;
        d = -r[in.a];
        break;
      case Op::Invert: d = ~r[in.a]; break;
      case Op::Not: d = r[in.a] == 0; break;
      case Op::Lt: d = r[in.a] < r[in.b]; break;
      case Op::Le: d = r[in.a] <= r[in.b]; break;
      case Op::Gt: d = r[in.a] > r[in.b]; break;
      case Op::Ge: d = r[in.a] >= r[in.b]; break;
      case Op::Eq: d = r[in.a] == r[in.b]; break;
      case Op::Ne: d = r[in.a] != r[in.b]; break;
      case Op::Move: d = r[in.a]; break;
      case Op::JumpIfZero: if (r[in.a] == 0) pc = in.b - 1; break;
      case Op::JumpIfNonZero: if (r[in.a] != 0) pc = in.b - 1; break;
      case Op::Jump: pc = in.b - 1; break;
      case Op::Min: if (r[in.b] < r[in.a]) d = r[in.b]; break;
      case Op::Max: if (r[in.b] > r[in.a]) d = r[in.b]; break;
      case Op::Abs:
        if (r[in.a] == std::numeric_limits<std::int64_t>::min()) return false;
        d = r[in.a] < 0 ? -r[in.a] : r[in.a];
        break;
    }
  }
  out = r[nodes_.size() - 1];
  return true;
}

// false: Unsure (Python would raise, or the result is not a number); the caller then runs
// the tree evaluator, which raises Python's error or computes the value the slow way.
bool RestrictionProgram::eval(std::uint32_t node, const std::uint32_t* index, Num& out) const {
  const Node& x = nodes_[node];
  const std::uint32_t* kid = kid_index_.data() + x.first;
  switch (x.kind) {
    case Node::Kind::Const:
      out = x.value;
      return true;
    case Node::Kind::Param:
      out = x.values[index[x.slot]];
      return true;
    case Node::Kind::ConstList:
      return false;
    case Node::Kind::Neg:
    case Node::Kind::Pos:
    case Node::Kind::Invert:
    case Node::Kind::Not: {
      Num a;
      if (!eval(kid[0], index, a)) return false;
      if (x.kind == Node::Kind::Not) {
        out = num_of_bool(!truthy(a));
      } else if (!int_like(a)) {
        if (x.kind == Node::Kind::Invert) return false;  // TypeError
        out = num_of_float(x.kind == Node::Kind::Neg ? -a.d : a.d);
      } else if (x.kind == Node::Kind::Neg) {
        if (a.i == std::numeric_limits<std::int64_t>::min()) return false;
        out = num_of_int(-a.i);
      } else {
        out = num_of_int(x.kind == Node::Kind::Pos ? a.i : ~a.i);
      }
      return true;
    }
    case Node::Kind::Binary: {
      Num a;
      Num b;
      if (!eval(kid[0], index, a) || !eval(kid[1], index, b)) return false;
      if (int_like(a) && int_like(b)) {
        std::int64_t r = 0;
        switch (x.bin) {
          case BinOp::Add:
            if (__builtin_add_overflow(a.i, b.i, &r)) return false;
            out = num_of_int(r);
            return true;
          case BinOp::Sub:
            if (__builtin_sub_overflow(a.i, b.i, &r)) return false;
            out = num_of_int(r);
            return true;
          case BinOp::Mul:
            if (__builtin_mul_overflow(a.i, b.i, &r)) return false;
            out = num_of_int(r);
            return true;
          case BinOp::FloorDiv:
            if (b.i == 0 || b.i == -1) break;
            r = a.i / b.i;
            if ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0))) --r;
            out = num_of_int(r);
            return true;
          case BinOp::Mod:
            if (b.i == 0 || b.i == -1) break;
            r = a.i % b.i;
            if (r != 0 && ((r < 0) != (b.i < 0))) r += b.i;
            out = num_of_int(r);
            return true;
          case BinOp::Div: {
            constexpr std::int64_t exact = std::int64_t{1} << 53;  // both convert exactly
            if (b.i == 0 || a.i < -exact || a.i > exact || b.i < -exact || b.i > exact) break;
            out = num_of_float(static_cast<double>(a.i) / static_cast<double>(b.i));
            return true;
          }
          default:
            break;
        }
      } else {
        // Python converts the int operand to float (correctly rounded, as the cast is).
        const double p = int_like(a) ? static_cast<double>(a.i) : a.d;
        const double q = int_like(b) ? static_cast<double>(b.i) : b.d;
        switch (x.bin) {
          case BinOp::Add:
            out = num_of_float(p + q);
            return true;
          case BinOp::Sub:
            out = num_of_float(p - q);
            return true;
          case BinOp::Mul:
            out = num_of_float(p * q);
            return true;
          case BinOp::Div:
            if (q == 0) return false;  // ZeroDivisionError
            out = num_of_float(p / q);
            return true;
          case BinOp::FloorDiv:
          case BinOp::Mod: {
            if (q == 0) return false;  // ZeroDivisionError
            double quotient = 0;
            double remainder = 0;
            float_divmod(p, q, quotient, remainder);
            out = num_of_float(x.bin == BinOp::Mod ? remainder : quotient);
            return true;
          }
          default:
            break;
        }
      }
      // The rest (true division, powers, shifts, mixed int and float, float modulo) through
      // the tree evaluator's own arithmetic, so that the result is Python's to the bit.
      try {
        return num_of(binary(x.bin, value_of(a), value_of(b)), out);
      } catch (const ExpressionError&) {
        return false;
      }
    }
    case Node::Kind::And:
    case Node::Kind::Or: {
      const bool stop_on = x.kind == Node::Kind::Or;
      for (std::uint32_t i = 0; i + 1 < x.count; ++i) {
        if (!eval(kid[i], index, out)) return false;
        if (truthy(out) == stop_on) return true;
      }
      return eval(kid[x.count - 1], index, out);
    }
    case Node::Kind::Compare: {
      Num left;
      if (!eval(kid[0], index, left)) return false;
      for (std::uint32_t i = 0; i + 1 < x.count; ++i) {
        const CmpOp c = cmps_[x.cmps + i];
        const Node& r = nodes_[kid[i + 1]];
        bool holds = false;
        if (r.kind == Node::Kind::ConstList) {
          try {
            holds = compare(c, value_of(left), lists_[r.slot]);
          } catch (const ExpressionError&) {
            return false;
          }
          if (!holds) {
            out = num_of_bool(false);
            return true;
          }
          continue;  // the last link
        }
        Num right;
        if (!eval(kid[i + 1], index, right)) return false;
        if (int_like(left) && int_like(right)) {
          const std::int64_t p = left.i;
          const std::int64_t q = right.i;
          switch (c) {
            case CmpOp::Lt: holds = p < q; break;
            case CmpOp::Le: holds = p <= q; break;
            case CmpOp::Gt: holds = p > q; break;
            case CmpOp::Ge: holds = p >= q; break;
            case CmpOp::Eq: holds = p == q; break;
            case CmpOp::Ne: holds = p != q; break;
            default: return false;
          }
        } else {
          try {
            holds = compare(c, value_of(left), value_of(right));
          } catch (const ExpressionError&) {
            return false;
          }
        }
        if (!holds) {
          out = num_of_bool(false);
          return true;
        }
        left = right;
      }
      out = num_of_bool(true);
      return true;
    }
    case Node::Kind::Cond: {
      Num c;
      if (!eval(kid[1], index, c)) return false;
      return eval(truthy(c) ? kid[0] : kid[2], index, out);
    }
    case Node::Kind::Call: {
      std::array<Num, 4> args;
      bool ints = true;
      for (std::uint32_t i = 0; i < x.count; ++i) {
        if (!eval(kid[i], index, args[i])) return false;
        ints = ints && args[i].kind == Value::Kind::Int;
      }
      if (ints && (x.fn == Builtin::Min || x.fn == Builtin::Max)) {
        // Python keeps the first of equal extremes; with ints alone that is a plain scan.
        std::uint32_t best = 0;
        for (std::uint32_t i = 1; i < x.count; ++i)
          if (x.fn == Builtin::Min ? args[i].i < args[best].i : args[i].i > args[best].i) best = i;
        out = args[best];
        return true;
      }
      std::array<Value, 4> values;
      for (std::uint32_t i = 0; i < x.count; ++i) values[i] = value_of(args[i]);
      try {
        return num_of(call_builtin(x.fn, values.data(), x.count), out);
      } catch (const ExpressionError&) {
        return false;
      }
    }
  }
  return false;
}

}  // namespace cutune::detail
