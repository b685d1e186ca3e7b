#include "expression_evaluator.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "python_builtins.hpp"
#include "python_semantics.hpp"

namespace cutune::detail {

namespace {

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

}  // namespace

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

}  // namespace cutune::detail
