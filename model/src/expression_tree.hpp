#pragma once
// The parsed form of an Expression: the parser builds it, the post-parse passes resolve
// comprehension variables and fold constants in it, the evaluator walks it.
#include <cstdint>
#include <string>
#include <vector>

#include "cutune/model/value.hpp"

namespace cutune::detail {

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
  // Height of the subtree, bounded so that evaluation cannot overflow the stack.
  std::uint32_t depth = 1;
  std::uint32_t frame_size = 0;  // root only: number of comprehension-variable slots
  Value constant;
  std::string name;  // Name, Local (for messages), TargetName
  std::vector<CmpOp> cmps;
  std::vector<ExprNode> kids;
};

}  // namespace cutune::detail
