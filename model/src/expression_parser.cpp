#include "expression_parser.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "expression_errors.hpp"
#include "expression_lexer.hpp"
#include "python_builtins.hpp"

namespace cutune::detail {

namespace {

// Limits that keep hostile input from exhausting the stack. Python itself refuses more than
// 200 nested parentheses.
constexpr int kMaxNesting = 200;
constexpr std::uint32_t kMaxTreeDepth = 500;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ExprNode parse() {
    if (text_.size() > std::numeric_limits<std::uint32_t>::max() / 2)
      error(0, "expression too long");
    toks_ = tokenize(text_);
    if (peek().kind == Tok::End) error(peek().pos, "empty expression");
    ExprNode root = parse_testlist();
    if (peek().kind != Tok::End) error(peek().pos, "unexpected " + describe(peek()));
    return root;
  }

 private:
  [[noreturn]] void error(std::size_t pos, const std::string& msg) const {
    syntax_error(text_, pos, msg);
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

  ExprNode parse_call(const Token& name_tok, const BuiltinInfo& info) {
    const std::uint32_t pos = name_tok.pos;
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
                           : info.max_args == kManyArgs ? "at least " + std::to_string(info.min_args)
                                                    : std::to_string(info.min_args) + " to " +
                                                          std::to_string(info.max_args);
      error(pos, std::string(info.name) + "() takes " + expect + " argument(s) (" +
                     std::to_string(args.size()) + " given)");
    }
    ExprNode n = node(Op::Call, pos, std::move(args));
    n.fn = info.fn;
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
          if (const BuiltinInfo* b = find_builtin(t.text)) {
            next();
            return parse_call(t, *b);
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

}  // namespace

ExprNode parse_tree(std::string_view text) { return Parser(text).parse(); }

}  // namespace cutune::detail
