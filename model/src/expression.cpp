// Python-expression parser and evaluator. The text is tokenized and parsed once into a
// tree; comprehension variables are resolved to frame slots and name-free subtrees are
// folded into constants, so the hot path (restrictions evaluated millions of times during
// space enumeration) does no string work beyond Scope::lookup.
//
// The pieces: expression_lexer (tokens), expression_parser (the tree), the post-parse
// passes here, expression_evaluator (walking the tree), python_semantics and
// python_builtins (what Python's operators and builtins do to Values), evaluation_limits
// (what one evaluation may cost).
#include "cutune/model/expression.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evaluation_limits.hpp"
#include "expression_errors.hpp"
#include "expression_evaluator.hpp"
#include "expression_parser.hpp"
#include "expression_tree.hpp"

namespace cutune {

namespace {

using detail::ExprNode;
using detail::Frame;
using detail::Op;

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
      Value v = detail::eval(n, f);
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
  ExprNode root = detail::parse_tree(text);
  Resolver resolver;
  resolver.resolve(root);
  {
    const detail::WorkBudget budget;  // one for all the folding: a costly subtree is not retried
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
  const detail::WorkBudget budget;
  try {
    const std::uint32_t slots = root_->frame_size;
    if (slots == 0) {
      Frame f{scope, nullptr};
      return detail::eval(*root_, f);
    }
    if (slots <= 8) {
      std::array<Value, 8> locals;
      Frame f{scope, locals.data()};
      return detail::eval(*root_, f);
    }
    std::vector<Value> locals(slots);
    Frame f{scope, locals.data()};
    return detail::eval(*root_, f);
  } catch (const ExpressionError& e) {
    throw ExpressionError("expression '" + detail::one_line(text_) + "': " + e.what());
  }
}

}  // namespace cutune
