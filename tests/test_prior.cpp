// The prior (search/include/cutune/search/prior.hpp): used only when it matches the target
// (kernel, parameter names, values), never makes a strategy propose outside the space,
// keeps every strategy deterministic and within its budget, and a perfect prior (the same
// space measured) gives the optimum at once.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cutune/search/prior.hpp"
#include "cutune/search/session.hpp"
#include "cutune/search/strategy.hpp"
#include "cutune/search/transfer_scoring.hpp"
#include "space_helpers.hpp"

using cutune::Config;
using cutune::Parameter;
using cutune::Space;
using cutune::Value;
using cutune::ValueList;
namespace search = cutune::search;
using Catch::Matchers::Contains;

namespace {

using cutune::testing::bowl_parameters;
using cutune::testing::bowl_space;
using cutune::testing::range_param;
const Config kOptimum{{3, 6, 2, 2}};  // on the a + b boundary
double bowl(const Config& c, double shift = 0.0) {
  auto sq = [](double x) { return x * x; };
  const auto& i = c.index;
  return 1.0 + sq(i[0] - 3.0 - shift) + 2.0 * sq(i[1] - 6.0 - shift) + sq(i[2] - 2.0) + 3.0 * sq(i[3] - 2.0);
}

// A prior measured on `measured` (its valid configurations), objective `f`, one in seven failing.
search::Prior make_prior(const Space& measured, const std::function<double(const Config&)>& f,
                         std::string kernel = "bowl", std::string device = "GPU B") {
  search::Prior p;
  p.origin = {std::move(kernel), std::move(device), "n=1", {"[1]", ""}};
  for (const auto& par : measured.parameters()) p.parameters.push_back({par.name, par.values});
  for (const Config& c : cutune::testing::valid_configs(measured)) {
    search::PriorMeasurement m;
    for (std::size_t i = 0; i < c.index.size(); ++i) m.values.push_back(measured.value(c, i));
    if ((c.index[0] * 3 + c.index[2]) % 7 != 1) m.objective = f(c);
    p.measurements.push_back(std::move(m));
  }
  return p;
}

// make_prior's sources are measured at size [1]; `size` is the target's.
std::shared_ptr<const search::SpacePrior> space_prior(const Space& target, const std::vector<search::Prior>& priors,
                                                      const std::string& size = "[1]") {
  return std::make_shared<const search::SpacePrior>(target, "bowl", priors, search::ProblemSize{size, ""});
}

struct Tuned {
  std::vector<Config> proposals;  ///< everything the strategy proposed, in order
  std::vector<Config> evaluated;  ///< unique evaluations, in order
};

// A session with an exact evaluation budget, results told at once.
Tuned tune(const Space& space, const std::string& name, std::uint64_t seed, std::uint64_t budget,
           std::shared_ptr<const search::SpacePrior> prior) {
  auto strategy = search::make_strategy(space, search::StrategyOptions{name, seed, budget, std::move(prior)});
  struct Recorder final : search::Strategy {
    search::Strategy& inner;
    std::vector<Config>& proposals;
    Recorder(search::Strategy& s, std::vector<Config>& p) : inner(s), proposals(p) {}
    std::vector<Config> ask(std::size_t max) override {
      auto out = inner.ask(max);
      proposals.insert(proposals.end(), out.begin(), out.end());
      return out;
    }
    void tell(const Config& c, const search::Observation& o) override { inner.tell(c, o); }
  };
  Tuned t;
  Recorder recorder(*strategy, t.proposals);
  search::SessionOptions so;
  so.max_evaluations = budget;
  search::Session session(recorder, so, &space);  // throws on a proposal outside the space
  while (!session.done()) {
    const auto batch = session.ask(8);
    for (const Config& c : batch.evaluate) session.tell(c, {true, bowl(c)}, 1.0);
    if (batch.evaluate.empty() && session.in_flight() == 0) break;
  }
  for (const auto& e : session.trace()) t.evaluated.push_back(e.config);
  return t;
}

}  // namespace

TEST_CASE("a prior is used only when its kernel, parameter names and values match the target") {
  const Space target = bowl_space();
  const Space wide(bowl_parameters(), {});  // no restrictions: measures configurations invalid here
  const auto f = [](const Config& c) { return bowl(c); };

  SECTION("matching: used, and the configurations invalid here are dropped from the proposals") {
    const search::SpacePrior prior(target, "bowl", {make_prior(wide, f)}, {});
    REQUIRE(prior.uses().size() == 1);
    CHECK(prior.uses()[0].used);
    CHECK(prior.uses()[0].reason.empty());
    CHECK(prior.uses()[0].measurements == 2400);
    CHECK(prior.uses()[0].proposable == 1100);
    CHECK_FALSE(prior.empty());
    for (const Config& c : prior.ranking()) CHECK(target.is_valid(c));
    CHECK(prior.ranking().front() == kOptimum);
    CHECK_THAT(prior.summary(), Contains("bowl on GPU B, problem n=1: 2400 measurements, 1100 valid here"));
  }
  SECTION("another kernel: not used") {
    const search::SpacePrior prior(target, "bowl", {make_prior(wide, f, "other_kernel")}, {});
    CHECK(prior.empty());
    CHECK_FALSE(prior.uses()[0].used);
    CHECK_THAT(prior.uses()[0].reason, Contains("kernel 'other_kernel', not 'bowl'"));
  }
  SECTION("the kernel under its CUDA function's name (a Kernel Tuner cache of a BAT kernel): used") {
    // cutune names BAT's convolution "convolution"; Kernel Tuner's cache of the same code says
    // "convolution_kernel"; a C++ name in the T1 file carries a namespace and template arguments.
    const search::KernelNames bat{"bowl", "ns::bowl_kernel<float, 4>"};
    const search::SpacePrior from_kt(target, bat, {make_prior(wide, f, "bowl_kernel")}, {});
    REQUIRE_FALSE(from_kt.empty());
    CHECK(from_kt.ranking().front() == kOptimum);
    // The other way: a recording of the BAT kernel (both names) for a target known by its function alone.
    search::Prior recorded = make_prior(wide, f);
    recorded.origin.kernel = bat;
    CHECK_FALSE(search::SpacePrior(target, "bowl_kernel", {recorded}, {}).empty());
    CHECK_THAT(search::SpacePrior(target, "bowl_kernel", {recorded}, {}).summary(),
               Contains("bowl (function ns::bowl_kernel<float, 4>) on GPU B"));
    // A function name in common is not enough: the parameters must still match.
    auto params = bowl_parameters();
    params[3].name = "unroll";
    const search::SpacePrior renamed(target, bat, {make_prior(Space(params, {}), f, "bowl_kernel")}, {});
    CHECK(renamed.empty());
    CHECK_THAT(renamed.uses()[0].reason, Contains("parameter 'unroll'"));
    // Neither name in common: not used, and both names are in the reason.
    const search::SpacePrior other(target, bat, {make_prior(wide, f, "bowl_kernel2")}, {});
    CHECK(other.empty());
    CHECK_THAT(other.uses()[0].reason, Contains("kernel 'bowl_kernel2', not 'bowl (function ns::bowl_kernel<float, 4>)'"));
  }
  SECTION("other parameter names: not used") {
    auto params = bowl_parameters();
    params[3].name = "unroll";
    const Space renamed(params, {});
    const search::SpacePrior prior(target, "bowl", {make_prior(renamed, f)}, {});
    CHECK(prior.empty());
    CHECK_THAT(prior.uses()[0].reason, Contains("parameter 'unroll'"));
    CHECK_THAT(prior.summary(), Contains("not used"));
  }
  SECTION("a value the target does not declare: not used") {
    auto params = bowl_parameters();
    params[2] = range_param("c", 7);  // measured c=6
    const Space more(params, {});
    const search::SpacePrior prior(target, "bowl", {make_prior(more, f)}, {});
    CHECK(prior.empty());
    CHECK_THAT(prior.uses()[0].reason, Contains("c=6"));
  }
  SECTION("parameters in another order still match, by name") {
    auto params = bowl_parameters();
    std::reverse(params.begin(), params.end());
    const Space reversed(params, {});
    // The same bowl, read through the reversed order.
    const auto g = [](const Config& c) { return bowl(Config{{c.index[3], c.index[2], c.index[1], c.index[0]}}); };
    const search::SpacePrior prior(target, "bowl", {make_prior(reversed, g)}, {});
    REQUIRE_FALSE(prior.empty());
    CHECK(prior.ranking().front() == kOptimum);
  }
  SECTION("a mismatched prior changes nothing: the proposals are those without a prior") {
    const auto unused = space_prior(target, {make_prior(wide, f, "other_kernel")});
    for (const auto& name : search::strategy_names()) {
      INFO(name);
      CHECK(tune(target, name, 3, 40, unused).proposals == tune(target, name, 3, 40, nullptr).proposals);
    }
  }
}

TEST_CASE("with a prior, no strategy proposes outside the space, the budget is exact, and runs are deterministic") {
  const Space target = bowl_space();
  const Space wide(bowl_parameters(), {});
  // The prior's optimum (a=5, b=8) breaks a + b <= 9 here: its best must be dropped, not proposed.
  const auto prior = space_prior(target, {make_prior(wide, [](const Config& c) { return bowl(c, 2.0); })});
  REQUIRE_FALSE(target.is_valid(Config{{5, 8, 2, 2}}));
  const std::string name = GENERATE(from_range(search::strategy_names()));
  INFO(name);
  for (std::uint64_t budget : {5, 37, 120}) {
    const Tuned a = tune(target, name, 7, budget, prior);
    for (const Config& c : a.proposals) CHECK(target.is_valid(c));
    CHECK(a.evaluated.size() == budget);
    const Tuned b = tune(target, name, 7, budget, prior);
    CHECK(a.proposals == b.proposals);
    CHECK(a.evaluated == b.evaluated);
  }
}

TEST_CASE("with a perfect prior (the same space measured), every strategy evaluates the optimum first") {
  const Space target = bowl_space();
  const auto prior = space_prior(target, {make_prior(target, [](const Config& c) { return bowl(c); })});
  const std::string name = GENERATE(from_range(search::strategy_names()));
  INFO(name);
  const Tuned t = tune(target, name, 11, 30, prior);
  REQUIRE_FALSE(t.evaluated.empty());
  CHECK(t.evaluated.front() == kOptimum);
  // Without it, none finds it that early (the check above says something).
  CHECK(tune(target, name, 11, 30, nullptr).evaluated.front() != kOptimum);
}

TEST_CASE("a prior from another problem size is checked: seeds that lose to the strategy's own results stop, seeds that win all come") {
  const Space target = bowl_space();
  // Inverted: the prior's best are the target's worst. Its sources are measured at size [1].
  const auto inverted = [](const Config& c) { return -bowl(c); };
  const auto misleading = space_prior(target, {make_prior(target, inverted)}, "[2]");
  const auto holding = space_prior(target, {make_prior(target, [](const Config& c) { return bowl(c); })}, "[2]");
  const auto same_size = space_prior(target, {make_prior(target, inverted)}, "[1]");
  REQUIRE(misleading->from_other_problem());
  REQUIRE_FALSE(same_size->from_other_problem());
  REQUIRE_FALSE(space_prior(target, {make_prior(target, inverted)}, "")->from_other_problem());  // unknown: not other
  CHECK_THAT(misleading->summary(), Contains("other problem sizes only"));
  CHECK_THAT(same_size->summary(), !Contains("other problem sizes"));
  const std::string name = GENERATE(from_range(search::strategy_names()));
  INFO(name);
  const auto seeds_among_first = [](const Tuned& t, const search::SpacePrior& prior, std::size_t n) {
    const auto seeds = prior.seeds(search::kPriorSeeds);
    std::size_t count = 0;
    for (std::size_t i = 0; i < std::min(n, t.evaluated.size()); ++i)
      count += static_cast<std::size_t>(std::count(seeds.begin(), seeds.end(), t.evaluated[i]));
    return count;
  };
  for (std::uint64_t seed : {1, 2, 3}) {
    INFO("seed " << seed);
    const Tuned wrong = tune(target, name, seed, 40, misleading);
    REQUIRE(wrong.evaluated.size() >= 2);
    CHECK(std::vector<Config>(wrong.evaluated.begin(), wrong.evaluated.begin() + 2) == misleading->seeds(2));
    // Unchecked, the other six would all come by the second batch; a strategy may meet one itself.
    CHECK(seeds_among_first(wrong, *misleading, 24) < search::kPriorSeeds);
    CHECK(seeds_among_first(tune(target, name, seed, 40, holding), *holding, 16) == search::kPriorSeeds);
    // Measured at the target's own problem (on another GPU), the seeds are proposed first, unchecked.
    const Tuned trusted = tune(target, name, seed, 40, same_size);
    CHECK(std::vector<Config>(trusted.evaluated.begin(), trusted.evaluated.begin() + 8) ==
          same_size->seeds(search::kPriorSeeds));
  }
}

TEST_CASE("seeds take each source's best in turn, and predict falls back to the nearest configuration measured") {
  const Space target = bowl_space();
  const search::Prior near = make_prior(target, [](const Config& c) { return bowl(c); }, "bowl", "GPU B");
  const search::Prior far = make_prior(target, [](const Config& c) { return bowl(c, -3.0); }, "bowl", "GPU C");
  const search::SpacePrior both(target, "bowl", {near, far}, {});
  const auto seeds = both.seeds(4);
  REQUIRE(seeds.size() == 4);
  CHECK(seeds[0] == kOptimum);
  CHECK(seeds[1] == Config{{0, 3, 2, 2}});  // GPU C's best
  CHECK(both.measurements_used() == 2 * near.measurements.size());

  // Measured: the configurations with d = 0 only; d = 1 is predicted from d = 0.
  search::Prior part = near;
  std::erase_if(part.measurements, [](const search::PriorMeasurement& m) { return m.values[3].as_int() != 0; });
  const search::SpacePrior partial(target, "bowl", {part}, {});
  const Config measured{{3, 6, 2, 0}}, unmeasured{{3, 6, 2, 1}};
  CHECK(partial.predict(unmeasured) == partial.predict(measured));
  CHECK(partial.predict(measured) == 0.0);
}

TEST_CASE("a kernel's names: functions compared without namespace or template arguments, empty names match nothing") {
  CHECK(search::bare_function_name("ns::inner::k<float, ns::T<2>>") == "k");
  CHECK(search::bare_function_name("matmul <float>") == "matmul");
  CHECK(search::bare_function_name("k") == "k");
  CHECK(search::KernelNames{"convolution", "convolution_kernel"}.shares_a_name_with("convolution_kernel"));
  CHECK(search::KernelNames{"convolution_kernel"}.shares_a_name_with({"convolution", "convolution_kernel"}));
  CHECK(search::KernelNames{"a", "ns::f<1>"}.shares_a_name_with({"b", "f"}));
  CHECK_FALSE(search::KernelNames{"convolution"}.shares_a_name_with("convolution_kernel"));
  CHECK_FALSE(search::KernelNames{""}.shares_a_name_with(""));
  CHECK_FALSE(search::KernelNames{"a", ""}.shares_a_name_with({"b", ""}));
}

TEST_CASE("leave-one-out priors: a space's own recording is never its prior") {
  std::vector<search::RecordedSpace::Entry> entries;
  for (int i = 0; i < 4; ++i)
    entries.push_back({Config{{static_cast<std::uint32_t>(i)}}, {{true, 1.0 + i}, 1.0}});
  const std::vector<Parameter> params{range_param("x", 4)};
  std::vector<search::RecordedSpace> spaces{search::RecordedSpace("k_A", params, entries),
                                            search::RecordedSpace("k_B", params, entries),
                                            search::RecordedSpace("other_A", params, entries)};
  const std::vector<search::PriorOrigin> origins{{"k", "A", "p", {}}, {"k", "B", "p", {}}, {"other", "A", "p", {}}};
  std::vector<search::Prior> pool;
  for (std::size_t i = 0; i < spaces.size(); ++i) pool.push_back(search::prior_from_recording(spaces[i], origins[i]));
  const auto priors = search::leave_one_out_priors(spaces, origins, pool);
  REQUIRE(priors.size() == 3);
  REQUIRE(priors[0]->uses().size() == 1);
  CHECK(priors[0]->uses()[0].origin.device == "B");
  REQUIRE(priors[1]->uses().size() == 1);
  CHECK(priors[1]->uses()[0].origin.device == "A");
  CHECK(priors[2]->empty());  // the only other kernel recording is its own

  // The same kernel recorded under its function's name (Kernel Tuner's cache) is a prior for
  // the one that names both, and the other way round.
  const std::vector<search::PriorOrigin> named{{{"k", "k_function"}, "A", "p", {}}, {"k_function", "B", "p", {}}};
  std::vector<search::Prior> both;
  for (std::size_t i = 0; i < 2; ++i) both.push_back(search::prior_from_recording(spaces[i], named[i]));
  const std::vector<search::RecordedSpace> two{spaces[0], spaces[1]};
  const auto across = search::leave_one_out_priors(two, named, both);
  REQUIRE(across.size() == 2);
  REQUIRE_FALSE(across[0]->empty());
  CHECK(across[0]->uses()[0].origin.device == "B");
  REQUIRE_FALSE(across[1]->empty());
  CHECK(across[1]->uses()[0].origin.device == "A");

  // One GPU and one extent, two problems (matmul's [n, m] at two k, told apart by the recordings'
  // cutune_problem): each is the other's prior, not its own recording.
  const std::vector<search::PriorOrigin> by_k{{"k", "A", "[8,8]", {"[8,8]", "k=1,m=8,n=8"}},
                                              {"k", "A", "[8,8]", {"[8,8]", "k=2,m=8,n=8"}}};
  std::vector<search::Prior> ks;
  for (std::size_t i = 0; i < 2; ++i) ks.push_back(search::prior_from_recording(spaces[i], by_k[i]));
  const auto other_k = search::leave_one_out_priors(two, by_k, ks);
  REQUIRE(other_k.size() == 2);
  REQUIRE(other_k[0]->uses().size() == 1);
  CHECK(other_k[0]->uses()[0].origin.size.variables == "k=2,m=8,n=8");
  CHECK(other_k[0]->from_other_problem());
  REQUIRE(other_k[1]->uses().size() == 1);
  CHECK(other_k[1]->uses()[0].origin.size.variables == "k=1,m=8,n=8");
}

TEST_CASE("priors at the target's problem size are preferred to other sizes, which are used only alone") {
  const Space space = bowl_space();
  // As the sources name them: a store's problem key, a recording's problem_size or file.
  auto at = [&](std::string device, std::string problem, std::string extent, std::string variables = "") {
    search::Prior p = make_prior(space, [](const Config&) { return 1.0; }, "bowl", std::move(device));
    p.origin.problem = std::move(problem);
    p.origin.size = {std::move(extent), std::move(variables)};
    return p;
  };
  const std::vector<search::Prior> mixed{at("H100", "n=1", "[1]"), at("H200", "n=2", "[2]"),
                                         at("A100", "recorded:a100.json", "[2]")};
  // Which of `priors` a target of size `size` uses, by device.
  auto used = [&](const std::vector<search::Prior>& priors, const std::string& extent, std::string variables = "") {
    std::vector<std::string> out;
    // Named: a range-for over a temporary's uses() read a destroyed object (g++ 12 -Wdangling-pointer).
    const search::SpacePrior prior(space, "bowl", priors, {extent, std::move(variables)});
    for (const auto& u : prior.uses())
      if (u.used) out.push_back(u.origin.device);
    return out;
  };
  CHECK(used(mixed, "[2]") == std::vector<std::string>{"H200", "A100"});
  const search::SpacePrior at_two(space, "bowl", mixed, {"[2]", ""});
  REQUIRE(at_two.uses().size() == 3);
  CHECK_THAT(at_two.uses()[0].reason, Contains("problem size [1]"));
  CHECK_THAT(at_two.summary(), Contains("not used"));
  // A DB run's key at the target's size does not push out a recording of that size, nor does
  // a key that happens to equal the target's keep a source of another size.
  CHECK(used({at("H100", "n=2", "[1]"), at("A100", "[2]", "[2]")}, "[2]") == std::vector<std::string>{"A100"});
  // No prior at the target's size: every other size is kept (weaker evidence, but evidence).
  CHECK(used(mixed, "[3]").size() == 3);
  // An unknown size prefers nothing.
  CHECK(used(mixed, "").size() == 3);
  // A source of unknown size is not taken for the target's.
  CHECK(used({at("H100", "n=2", ""), at("A100", "n=1", "[1]")}, "[2]").size() == 2);
  // A source at the target's size that does not match the target pushes out nothing.
  search::Prior other_kernel = at("V100", "n=2", "[2]");
  other_kernel.origin.kernel = search::KernelNames("not_bowl");
  CHECK(used({other_kernel, at("H100", "n=1", "[1]")}, "[2]") == std::vector<std::string>{"H100"});
}

// The matmul template's problem_size is [n, m]: a DB run at another k has the target's extent.
TEST_CASE("a source whose problem variables differ from the target's is at another size, even at the same extent") {
  const Space space = bowl_space();
  auto at = [&](std::string device, std::string variables) {
    search::Prior p = make_prior(space, [](const Config&) { return 1.0; }, "bowl", std::move(device));
    p.origin.size = {"[1024,1024]", std::move(variables)};
    return p;
  };
  const search::ProblemSize target{"[1024,1024]", "k=1024,m=1024,n=1024"};
  const std::vector<search::Prior> priors{at("H100", "k=4096,m=1024,n=1024"), at("H200", "k=1024,m=1024,n=1024"),
                                          at("A100", "")};
  const search::SpacePrior prior(space, "bowl", priors, target);
  REQUIRE(prior.uses().size() == 3);
  CHECK_FALSE(prior.uses()[0].used);
  CHECK_THAT(prior.uses()[0].reason, Contains("[1024,1024] (k=4096,m=1024,n=1024)"));
  CHECK_THAT(prior.uses()[0].reason, Contains("(k=1024,m=1024,n=1024)"));
  CHECK(prior.uses()[1].used);
  CHECK(prior.uses()[2].used);  // a recording knows its extent only: taken at its word
  CHECK_FALSE(prior.from_other_problem());
  // Alone, the run at another k is used, and checked as one from another problem.
  const search::SpacePrior alone(space, "bowl", {priors[0]}, target);
  REQUIRE(alone.uses().size() == 1);
  CHECK(alone.uses()[0].used);
  CHECK(alone.from_other_problem());
  CHECK(target.same_as({"[1024,1024]", ""}));
  CHECK_FALSE(target.same_as({"[1024,1024]", "k=4096,m=1024,n=1024"}));
  CHECK_FALSE(search::ProblemSize{}.same_as(search::ProblemSize{}));  // unknown is no size
}
