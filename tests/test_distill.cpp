// Distilling a cross matrix: the greedy set cover under a bound and the selector tree, on
// hand-made matrices (no GPU).
#include <catch2/catch.hpp>

#include "cutune/search/distill.hpp"

using namespace cutune;
using search::CrossMatrix;
using search::distill;
using Catch::Matchers::WithinRel;

namespace {

constexpr std::optional<double> kNone = std::nullopt;

CrossMatrix matrix_n(const std::vector<std::int64_t>& ns, std::vector<std::vector<std::optional<double>>> ms) {
  CrossMatrix m;
  for (auto n : ns) m.shapes.push_back({{"n", n}});
  m.ms = std::move(ms);
  return m;
}

/// The kept column the tree picks for a shape.
std::size_t pick(const search::Distillation& d, std::map<std::string, std::int64_t> shape) {
  ShapeSelector s;
  s.nodes = d.nodes;
  s.configs.resize(d.kept.size());
  return d.kept[s.select(shape)];
}

}  // namespace

TEST_CASE("distill: one configuration within the bound everywhere is the whole answer", "[distill]") {
  // Column 1 is at most 4% slower than each row's best: with 5% it alone is kept.
  const auto m = matrix_n({1024, 4096, 16384}, {{1.00, 1.04, 1.5}, {2.5, 2.0, 2.6}, {5.2, 5.1, 5.0}});
  const auto d = distill(m, 0.05);
  REQUIRE(d.kept == std::vector<std::size_t>{1});
  REQUIRE(d.nodes.size() == 1);
  CHECK(d.nodes[0].leaf());
  CHECK_THAT(d.worst_slowdown, WithinRel(0.04, 1e-9));
  CHECK(d.uncovered.empty());
}

TEST_CASE("distill: a tighter bound forces more configurations and a threshold between them", "[distill]") {
  const auto m = matrix_n({1024, 4096, 16384}, {{1.00, 1.04, 1.5}, {2.5, 2.0, 2.6}, {5.2, 5.1, 5.0}});
  const auto d = distill(m, 0.01);
  // Within 1% each column covers only the shape it is best at.
  REQUIRE(d.kept.size() == 3);
  CHECK(pick(d, {{"n", 1024}}) == 0);
  CHECK(pick(d, {{"n", 4096}}) == 1);
  CHECK(pick(d, {{"n", 16384}}) == 2);
  CHECK(d.worst_slowdown == 0.0);
  // Untuned shapes go to the nearer tuned one in ratio: the threshold is the geometric mean.
  CHECK(pick(d, {{"n", 2047}}) == 0);
  CHECK(pick(d, {{"n", 2049}}) == 1);
  CHECK(pick(d, {{"n", 1}}) == 0);
  CHECK(pick(d, {{"n", 1 << 30}}) == 2);
}

TEST_CASE("distill: ties: the exact bound counts as within, and an equal cover goes to the smaller slowdown", "[distill]") {
  // Columns 0 and 1 both cover both shapes within 5% (column 1 at exactly 5%); column 0 has the
  // smaller geometric-mean slowdown, so it is kept; column 2 covers only one shape.
  const auto m = matrix_n({100, 200}, {{1.00, 1.05, 1.0}, {2.02, 2.0, 3.0}});
  const auto d = distill(m, 0.05);
  REQUIRE(d.kept == std::vector<std::size_t>{0});
  CHECK_THAT(d.worst_slowdown, WithinRel(0.01, 1e-9));
  // Two identical columns: the first is kept (column order breaks the last tie).
  const auto same = matrix_n({100, 200}, {{1.0, 1.0}, {2.0, 2.0}});
  CHECK(distill(same, 0.0).kept == std::vector<std::size_t>{0});
}

TEST_CASE("distill: greedy takes the column that covers most, then fills in", "[distill]") {
  // Column 0 is best on the four middle shapes; columns 1 and 2 each only on an end.
  const auto m = matrix_n({1, 2, 4, 8, 16, 32},
                          {{2.0, 1.0, 9.0}, {1.0, 5.0, 5.0}, {1.0, 5.0, 5.0}, {1.0, 5.0, 5.0}, {1.0, 5.0, 5.0}, {2.0, 9.0, 1.0}});
  const auto d = distill(m, 0.05);
  REQUIRE(d.kept.size() == 3);
  CHECK(d.kept.front() == 0);
  CHECK(pick(d, {{"n", 1}}) == 1);
  CHECK(pick(d, {{"n", 8}}) == 0);
  CHECK(pick(d, {{"n", 32}}) == 2);
  CHECK(d.worst_slowdown == 0.0);
  // With a bound of 100% column 0 alone does it (2x at the ends).
  const auto loose = distill(m, 1.0);
  CHECK(loose.kept == std::vector<std::size_t>{0});
  CHECK_THAT(loose.worst_slowdown, WithinRel(1.0, 1e-9));
}

TEST_CASE("distill: failed cells never cover, a shape without any measurement is left out", "[distill]") {
  const auto m = matrix_n({10, 20, 40}, {{1.0, kNone}, {kNone, 1.0}, {kNone, kNone}});
  const auto d = distill(m, 0.5);
  CHECK(d.uncovered == std::vector<std::size_t>{2});
  REQUIRE(d.kept.size() == 2);
  CHECK(pick(d, {{"n", 10}}) == 0);
  CHECK(pick(d, {{"n", 20}}) == 1);
}

TEST_CASE("distill: two variables give a small decision tree on the one that matters", "[distill]") {
  // m decides (column 0 for m=64, column 1 for m=4096), n does not.
  CrossMatrix m;
  for (std::int64_t mm : {64, 4096})
    for (std::int64_t n : {1024, 1 << 20}) {
      m.shapes.push_back({{"m", mm}, {"n", n}});
      m.ms.push_back(mm == 64 ? std::vector<std::optional<double>>{1.0, 2.0} : std::vector<std::optional<double>>{2.0, 1.0});
    }
  const auto d = distill(m, 0.05);
  REQUIRE(d.kept.size() == 2);
  REQUIRE(d.nodes.size() == 3);
  CHECK(d.nodes[0].variable == "m");
  CHECK(d.nodes[0].at_most == 512);  // sqrt(64 * 4096)
  CHECK(pick(d, {{"m", 100}, {"n", 5}}) == 0);
  CHECK(pick(d, {{"m", 3000}, {"n", 5}}) == 1);
}

TEST_CASE("distill: bad matrices are refused", "[distill]") {
  CHECK_THROWS(distill(matrix_n({1, 2}, {{1.0, 2.0}, {1.0}}), 0.05));
  CHECK_THROWS(distill(matrix_n({1}, {{1.0}}), -0.1));
  CHECK(distill(CrossMatrix{}, 0.05).kept.empty());
}

TEST_CASE("selector: a malformed tree is named by check_tree", "[distill]") {
  ShapeSelector s;
  s.configs.resize(1);
  CHECK(s.check_tree() == "nodes: empty");
  s.nodes = {SelectorNode{"n", 10, 1, 5, 0}, SelectorNode{}};
  CHECK(s.check_tree() == "nodes[0].high: 5 is not a later node");
  s.nodes = {SelectorNode{"n", 10, 1, 2, 0}, SelectorNode{}, SelectorNode{"", 0, 0, 0, 3}};
  CHECK(s.check_tree() == "nodes[2].config: 3 is not one of the 1 configurations");
  s.nodes = {SelectorNode{"n", 10, 1, 2, 0}, SelectorNode{}, SelectorNode{}};
  CHECK(s.check_tree().empty());
  CHECK(s.path({{"n", 3}}) == "n <= 10");
  CHECK(s.path({{"n", 30}}) == "n > 10");
}
