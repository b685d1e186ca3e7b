#pragma once
// A restriction compiled for the hot path of space enumeration: numbers only, parameters
// read by index from the configuration being built, the constants (problem variables)
// substituted once. The tree evaluator looks names up by string and moves Values (a
// variant holding strings and shared lists) through every node; on the CLBlast GEMM space
// (663,552 points) that was most of the 69 ms the enumeration took.
//
// Exactness comes first: the program covers what it can compute exactly as Python does
// (ints, floats and bools; arithmetic, comparisons, `in` a constant list, and/or/not,
// conditionals, calls of numeric builtins), and answers Unsure wherever Python would raise
// (overflow, division by zero, a type error) so that the caller evaluates the tree and
// reports Python's error. A restriction the program cannot cover at all (strings, lists
// built from parameters, comprehensions over parameters) is not compiled.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "cutune/model/expression.hpp"
#include "cutune/model/value.hpp"
#include "expression_tree.hpp"

namespace cutune::detail {

/// A number as Python holds it: bool, int or float.
struct Num {
  Value::Kind kind = Value::Kind::Int;
  std::int64_t i = 0;  ///< bool (0/1) and int
  double d = 0;        ///< float
};

class RestrictionProgram {
 public:
  enum class Result : std::uint8_t { False, True, Unsure };

  /// For each parameter the numbers of its values (index order), or nullopt when one of
  /// them is not a number: a restriction reading that parameter is not compiled.
  using ParameterNumbers = std::shared_ptr<const std::vector<std::optional<std::vector<Num>>>>;
  /// The index of a parameter, or -1 when `name` is not one.
  using ParameterIndex = std::function<int(std::string_view name)>;

  /// nullopt when the expression uses something the program does not cover.
  static std::optional<RestrictionProgram> compile(const Expression& expression, const ParameterIndex& parameter,
                                                   const ParameterNumbers& numbers, const Scope& constants);

  /// The truth of the restriction for the configuration whose value indices are `index`
  /// (every parameter the restriction reads must be set).
  Result evaluate(const std::uint32_t* index) const {
    if (!table_) return compute(index, 0);
    std::uint64_t cell = 0;
    for (std::size_t i = 0; i < table_params_.size(); ++i) cell += index[table_params_[i]] * table_strides_[i];
    const std::uint8_t known = table_[cell].load(std::memory_order_relaxed);
    if (known != 0) return known == 2 ? Result::True : Result::False;
    return compute(index, cell);
  }

  /// Most cells a restriction's table of results may have (one byte each): the product of
  /// the value counts of the parameters it reads. Beyond it the program runs every time.
  static constexpr std::uint64_t kMaxTableCells = std::uint64_t{1} << 20;

  /// One instruction of the integer form (see int_code_).
  struct IntInstr {
    enum class Op : std::uint8_t { Param, Const, Add, Sub, Mul, FloorDiv, Mod, Neg, Invert, Not, Lt, Le, Gt, Ge, Eq, Ne,
                                   Move, JumpIfZero, JumpIfNonZero, Jump, Min, Max, Abs };
    Op op = Op::Const;
    std::uint32_t dst = 0;
    std::uint32_t a = 0;  ///< Param: the parameter; jumps: the target
    std::uint32_t b = 0;
    std::int64_t imm = 0;
    const Num* values = nullptr;
  };

  struct Node {
    enum class Kind : std::uint8_t { Const, Param, ConstList, Neg, Pos, Invert, Not, Binary, And, Or, Compare, Cond, Call };
    Kind kind = Kind::Const;
    BinOp bin = BinOp::Add;
    Builtin fn = Builtin::Len;
    std::uint32_t slot = 0;   ///< Param: the parameter; ConstList: index into lists_
    const Num* values = nullptr;  ///< Param: the parameter's numbers
    std::uint32_t first = 0;  ///< kids: kid_index_[first, first + count)
    std::uint32_t count = 0;
    std::uint32_t cmps = 0;  ///< Compare: cmps_[cmps, cmps + count - 1)
    Num value;               ///< Const
  };

 private:
  bool eval(std::uint32_t node, const std::uint32_t* index, Num& out) const;
  /// Runs the program (and fills the table's `cell`).
  Result compute(const std::uint32_t* index, std::uint64_t cell) const;
  bool run_int(const std::uint32_t* index, std::int64_t& out) const;
  void build_int_code();
  void emit_int(std::uint32_t node);

  std::vector<Node> nodes_;  ///< nodes_.back() is the root
  std::vector<std::uint32_t> kid_index_;
  std::vector<CmpOp> cmps_;
  std::vector<Value> lists_;                    ///< constant lists, right operands of `in`
  ParameterNumbers numbers_;  ///< what Param nodes point into, kept alive

  // When every value the program computes is an int (or a bool, which acts as one in every
  // operation here), it also runs as straight-line code on 64-bit registers, one per node,
  // without the kind checks and the recursion: the hotspot space's shared-memory
  // restriction took 75 ns a point in the tree-shaped form. Empty when some value may be a
  // float.
  std::vector<IntInstr> int_code_;

  // The results computed so far, one cell per combination of the values of the parameters
  // read (0: not yet, 1: false, 2: true): the walk reaches the same combination again under
  // every value of the parameters between them (on the hotspot space the shared-memory
  // restriction reads 6 of 10 parameters and was computed 10 times over). Filled while
  // enumerating; relaxed atomics, as threads may share a space and write equal values.
  std::vector<std::uint32_t> table_params_;
  std::vector<std::uint64_t> table_strides_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> table_;

  friend class ProgramBuilder;
};

}  // namespace cutune::detail
