// bayes_opt: Bayesian optimisation over the discrete space. A Gaussian process (Matérn 5/2
// kernel over index coordinates scaled to [0, 1], a length scale per parameter chosen by
// marginal likelihood: the isotropic one from a small grid, then each parameter's halved or
// doubled where that fits better) models log(objective), standardised; failures count as
// the worst valid value seen. (One length scale for all parameters treated a flag that
// halves the time like a tile size that barely matters: per parameter, bayes_opt alone
// scored 0.162 instead of 0.145 on the 15 small recorded spaces, 200 runs with 8 pending,
// and 0.214 instead of 0.181 one at a time.) The initial sample is half uniform, half
// balanced over each parameter's values (propose() says why). Each plan scores a candidate
// pool (random valid configurations plus the neighbours of the best ones, never the whole
// space) with two acquisitions, expected improvement (EI) and lower confidence bound (LCB),
// and takes their best candidates in turn. Proposals still pending (in flight on other evaluators,
// or picked earlier in the same batch of a short run) enter the GP with the value it predicts
// for them (the "kriging believer" of Ginsbourger, Le Riche and Carraro, 2010): the uncertainty
// collapses there, so a plan made while N - 1 results are pending spreads beyond them instead
// of crowding around one optimum of EI. The GP holds at most kGpCap results (the best half and
// the most recent half): O(kGpCap^3) per plan however long the run.
#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <deque>
#include <numbers>
#include <optional>
#include <set>

#include "../searcher.hpp"
#include "strategies.hpp"

namespace cutune::search {
namespace {

// Kernel Tuner's bayes_opt (kernel_tuner/strategies/bayes_opt.py) starts from 20 random
// samples (popsize=20; ours: Searcher::initial_sample_size) and alternates acquisition functions ("multi" methods); its
// Matérn kernel and exploration factors inspired these. Ours: a fixed length-scale grid
// with likelihood selection instead of its fixed 1.5, EI's xi=0.01 (the usual default in
// the literature and in scikit-optimize) and LCB's kappa=2 (~95% upper quantile).
constexpr std::size_t kGpCap = 200;
constexpr std::size_t kPool = 500;
constexpr std::size_t kPlan = 8;
constexpr std::size_t kRefitEvery = 10;  ///< told results between length-scale selections
constexpr double kXi = 0.01, kKappa = 2.0;
constexpr double kNoise = 1e-4;  ///< on standardised values: medians are nearly noise-free
constexpr double kLengthScales[] = {0.05, 0.1, 0.2, 0.4, 0.8};  ///< times sqrt(dim)
/// Per-parameter length scales (ARD): from the isotropic one, each parameter's is halved or
/// doubled in turn where that raises the marginal likelihood, penalised by a log-normal prior
/// of this spread around the isotropic one (few results would otherwise fit any scale).
constexpr double kArdFactors[] = {0.5, 2.0};
constexpr double kArdPriorSd = 1.5;
constexpr double kArdRange = 16.0;  ///< at most this far from the isotropic scale, either way

double matern52(double r) {
  const double s = std::sqrt(5.0) * r;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

class BayesOpt final : public Searcher {
 public:
  BayesOpt(const Space& space, std::uint64_t seed, std::optional<std::uint64_t> budget)
      : Searcher(space, seed),
        initial_(initial_sample_size(budget)),
        pick_by_pick_(budget && *budget <= kModelLedBudget) {}

  // In place: the initial sample's size and the batch planning are all the budget sets.
  bool learn_budget(std::uint64_t evaluations) override {
    initial_ = initial_sample_size(evaluations);
    pick_by_pick_ = evaluations <= kModelLedBudget;
    return true;
  }

 private:
  std::optional<Config> propose() override {
    if (memory_.told_count() < initial_) {
      // Half the initial sample uniform over the valid configurations, half balanced over each
      // parameter's values (spread_unseen): restrictions prune the combinations of some values
      // (large tiles, deep pipelines), so uniform sampling rarely tries them, and on some spaces
      // they are where the optimum is (matmul 2048^3: work_per_thread 16 in 66 of 842
      // configurations, median 0.42 ms against 0.60 for all), on others not (matmul 1024^3: 0.21
      // ms against 0.12). 200 runs, 15 small recorded spaces, batch 8: all uniform 0.162, all
      // balanced 0.272 (matmul 1024^3 -0.069, reduction 2^22 0.092), half each 0.252.
      return initial_sample_member(initial_);
    }
    return from_plan();
  }

  // The initial sample is handed out and N - 1 of it still runs: the GP of what is told
  // (with the lies) picks, rather than more random samples.
  std::optional<Config> propose_while_waiting() override {
    if (memory_.told_count() < kMinInitialSamples) return std::nullopt;
    return from_plan();
  }

  // A plan is rebuilt whenever results arrived: with N evaluators each ask follows one result
  // (measured at N = 8 with the kriging believer: 0.69 re-planning at every result, 0.55
  // using a plan of kPlan up before the next fit). In a short run it is also rebuilt after
  // each pick, so that a batch asked at once is planned pick by pick, each with the earlier
  // picks as believed results, instead of being one plan's best EI and LCB candidates: those
  // crowd (on the bowl of test_strategies.cpp the nearest two of a batch of 8 were 1.0 index
  // steps apart, 2.3 pick by pick). 200 runs, the 15 small recorded spaces (budgets 12 to
  // 236), batches of 8: the default 0.272 -> 0.291 with no space lower (nbody 0.104 -> 0.126,
  // matmul 1024^3 0.241 -> 0.331); picks alternating EI and LCB with the lies 0.289. As the
  // portfolio's arm in the long runs (the four large spaces, 40 runs) it lowered
  // convolution_A100 from 0.891 to 0.848 (0.833 alternating), so there the plan stands.
  std::optional<Config> from_plan() {
    if (plan_.empty() || planned_at_ != memory_.told_count() ||
        (pick_by_pick_ && planned_pending_ != memory_.pending().size())) {
      if (!(pick_by_pick_ && extend())) plan();
    }
    if (plan_.empty()) return random_unseen();
    Config c = std::move(plan_.front());
    plan_.pop_front();
    return c;
  }

  void learn(const Config&, double) override {}  // the next plan reads memory
  void restart() override { plan_.clear(); }

  Eigen::VectorXd coordinates(const Config& c) const {
    const auto& params = space_.parameters();
    Eigen::VectorXd x(static_cast<Eigen::Index>(params.size()));
    for (std::size_t p = 0; p < params.size(); ++p) {
      const auto n = params[p].values.size();
      x[static_cast<Eigen::Index>(p)] = n > 1 ? static_cast<double>(c.index[p]) / static_cast<double>(n - 1) : 0.0;
    }
    return x;
  }

  // The results the GP is fitted to: all, or the best and the most recent kGpCap / 2 each.
  std::vector<Config> training_set() const {
    const auto& order = memory_.order();
    if (order.size() <= kGpCap) return order;
    std::vector<Config> by_fitness = order;
    std::stable_sort(by_fitness.begin(), by_fitness.end(),
                     [&](const Config& a, const Config& b) { return *memory_.fitness(a) < *memory_.fitness(b); });
    std::set<Config> chosen(by_fitness.begin(), by_fitness.begin() + kGpCap / 2);
    for (auto it = order.rbegin(); it != order.rend() && chosen.size() < kGpCap; ++it) chosen.insert(*it);
    return {chosen.begin(), chosen.end()};
  }

  /// Matérn 5/2 with a length scale per coordinate (`l`, one per column).
  static Eigen::MatrixXd covariance(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, const Eigen::VectorXd& l) {
    const Eigen::RowVectorXd inverse = l.cwiseInverse().transpose();
    const Eigen::MatrixXd as = a.array().rowwise() * inverse.array(), bs = b.array().rowwise() * inverse.array();
    Eigen::MatrixXd k(a.rows(), b.rows());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      for (Eigen::Index j = 0; j < b.rows(); ++j) k(i, j) = matern52((as.row(i) - bs.row(j)).norm());
    return k;
  }

  /// The Cholesky factor of the GP's covariance at `x` under scales `l`; false if singular.
  static bool factorise(const Eigen::MatrixXd& x, const Eigen::VectorXd& l, Eigen::LLT<Eigen::MatrixXd>& llt) {
    Eigen::MatrixXd k = covariance(x, x, l);
    k.diagonal().array() += kNoise;
    llt.compute(k);
    return llt.info() == Eigen::Success;
  }

  /// Log marginal likelihood of standardised `y` at `x` under scales `l`; -inf if singular.
  static double log_likelihood(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& l) {
    Eigen::LLT<Eigen::MatrixXd> llt;
    if (!factorise(x, l, llt)) return -INFINITY;
    // L's diagonal is the factor's own (matrixLLT), read without copying L: this runs about
    // 2 x parameters + 6 times per selection.
    return -0.5 * y.dot(llt.solve(y)) - llt.matrixLLT().diagonal().array().log().sum();
  }

  /// The isotropic scale from the grid, then each parameter's own (kArdFactors, one sweep
  /// from the last selection's scales).
  void select_length_scales(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, Eigen::Index dim) {
    const double scale = std::sqrt(static_cast<double>(std::max<Eigen::Index>(dim, 1)));
    double best_lml = -INFINITY, iso = 0.0;
    for (double g : kLengthScales) {
      const double lml = log_likelihood(x, y, Eigen::VectorXd::Constant(dim, g * scale));
      if (lml > best_lml) best_lml = lml, iso = g * scale;
    }
    if (!std::isfinite(best_lml)) return;
    const auto penalty = [&](const Eigen::VectorXd& l) {
      return 0.5 * (l.array() / iso).log().square().sum() / (kArdPriorSd * kArdPriorSd);
    };
    Eigen::VectorXd l = Eigen::VectorXd::Constant(dim, iso);
    if (length_scales_ && length_scales_->size() == dim) {
      l = length_scales_->cwiseMax(iso / kArdRange).cwiseMin(iso * kArdRange);
      if (const double warm = log_likelihood(x, y, l) - penalty(l); !(warm > best_lml)) l.setConstant(iso);
      else best_lml = warm;
    }
    for (Eigen::Index d = 0; d < dim; ++d) {
      // A parameter at one value in every result: its scale cannot change the likelihood.
      if (x.col(d).maxCoeff() == x.col(d).minCoeff()) continue;
      for (double f : kArdFactors) {
        Eigen::VectorXd t = l;
        t[d] = std::clamp(t[d] * f, iso / kArdRange, iso * kArdRange);
        if (t[d] == l[d]) continue;
        const double lml = log_likelihood(x, y, t) - penalty(t);
        if (lml > best_lml) best_lml = lml, l = std::move(t);
      }
    }
    length_scales_ = std::move(l);
  }

  void plan() {
    planned_at_ = memory_.told_count();
    planned_pending_ = memory_.pending().size();
    plan_.clear();
    gp_.reset();
    const std::vector<Config> train = training_set();
    double worst = -INFINITY;
    bool positive = true;
    for (const auto& c : train) {
      const double f = *memory_.fitness(c);
      if (std::isfinite(f)) worst = std::max(worst, f), positive = positive && f > 0.0;
    }
    if (!std::isfinite(worst)) return;  // nothing valid yet: random sampling goes on

    const auto told = static_cast<Eigen::Index>(train.size());
    const auto dim = static_cast<Eigen::Index>(space_.parameters().size());
    Eigen::MatrixXd x(told, dim);
    Eigen::VectorXd y(told);
    for (Eigen::Index i = 0; i < told; ++i) {
      x.row(i) = coordinates(train[static_cast<std::size_t>(i)]).transpose();
      const double f = std::min(*memory_.fitness(train[static_cast<std::size_t>(i)]), worst);
      y[i] = positive ? std::log(f) : f;
    }
    const double mean = y.mean();
    const double sd = std::sqrt((y.array() - mean).square().mean());
    y = (y.array() - mean) / (sd > 0.0 ? sd : 1.0);
    const double y_best = y.minCoeff();

    // Length scales by log marginal likelihood, re-selected every kRefitEvery results.
    if (!length_scales_ || planned_at_ >= selected_at_ + kRefitEvery) {
      select_length_scales(x, y, dim);
      selected_at_ = planned_at_;
      if (!length_scales_) return;
    }
    Eigen::LLT<Eigen::MatrixXd> llt;
    if (!factorise(x, *length_scales_, llt)) return;
    Eigen::VectorXd alpha = llt.solve(y);

    // Proposals still pending (running on other evaluators) enter the GP with the value it
    // predicts for them (the "kriging believer" lie): the mean surface stays, the
    // uncertainty there collapses, so the plan spreads beyond what is already running.
    // (The best value as the lie, the constant liar this had, drew each plan towards the
    // previous plan's unknown picks: on the bowl of test_strategies.cpp with 7 pending and
    // plans of 8 used up, 0.51 of the proposals after 100 results landed in its worse half,
    // as random ones do, against 0.34 with this lie.)
    if (const auto& pending = memory_.pending(); !pending.empty()) {
      const auto p = static_cast<Eigen::Index>(pending.size());
      Eigen::MatrixXd xp(p, dim);
      Eigen::Index i = 0;
      for (const Config& c : pending) xp.row(i++) = coordinates(c).transpose();
      const Eigen::VectorXd lies = covariance(xp, x, *length_scales_) * alpha;
      Eigen::MatrixXd xa(told + p, dim);
      xa << x, xp;
      Eigen::VectorXd ya(told + p);
      ya << y, lies;
      x = std::move(xa);
      y = std::move(ya);
      if (!factorise(x, *length_scales_, llt)) return;
      alpha = llt.solve(y);
    }

    std::vector<Config> pool = candidates();
    if (pool.empty()) return;
    const auto m = static_cast<Eigen::Index>(pool.size());
    Eigen::MatrixXd xs(m, dim);
    for (Eigen::Index i = 0; i < m; ++i) xs.row(i) = coordinates(pool[static_cast<std::size_t>(i)]).transpose();
    const Eigen::MatrixXd ks = covariance(xs, x, *length_scales_);
    Pool g;
    g.mu = ks * alpha;
    g.v = llt.matrixL().solve(ks.transpose());
    g.var = Eigen::VectorXd(m);
    for (Eigen::Index i = 0; i < m; ++i) g.var[i] = 1.0 + kNoise - g.v.col(i).squaredNorm();
    g.y_best = y_best;
    g.told = planned_at_;
    g.pending = memory_.pending();
    g.pool = std::move(pool);
    g.xs = std::move(xs);
    g.x = std::move(x);
    g.l = llt.matrixL();
    gp_ = std::move(g);
    choose();
  }

  // The GP of the last full plan over its pool: what a short run's next pick in the same batch
  // updates instead of planning anew (extend()).
  struct Pool {
    std::size_t told = 0;          ///< told results when it was made
    std::set<Config> pending;      ///< the pending configurations in it (believed results)
    std::vector<Config> pool;      ///< the candidates, unseen when it was made
    Eigen::MatrixXd xs;            ///< their coordinates
    Eigen::VectorXd mu, var;       ///< posterior mean and variance at each candidate
    Eigen::MatrixXd x, l, v;       ///< the GP's points, its Cholesky factor, L^-1 K(x, pool)
    double y_best = 0.0;
  };

  /// A pick later in the same batch: the picks since the last plan enter the GP as believed
  /// results by extending its Cholesky factor a row each. A believed result is the GP's own
  /// mean there, so the mean stays everywhere and only the variance falls (the candidates'
  /// by the square of the new row of L^-1 K). The candidate pool stays, less what is seen.
  /// Scoring the default and bayes_opt (15 small spaces, 200 runs, batch 8, one thread) took
  /// 12.9 minutes with every pick planned anew (a new pool, the GP factorised again), 2.5
  /// extended, for 0.291 and 0.274 against 0.291 and 0.271.
  /// False when the plan must be made anew (results arrived, a pending one left, or none yet).
  bool extend() {
    if (!gp_ || gp_->told != memory_.told_count()) return false;
    Pool& g = *gp_;
    for (const Config& c : g.pending)
      if (!memory_.pending().count(c)) return false;
    const auto dim = g.x.cols();
    for (const Config& c : memory_.pending()) {
      if (g.pending.count(c)) continue;
      g.pending.insert(c);
      const Eigen::RowVectorXd xz = coordinates(c).transpose();
      const Eigen::VectorXd kz = covariance(g.x, xz, *length_scales_).col(0);
      const Eigen::VectorXd lz = g.l.triangularView<Eigen::Lower>().solve(kz);
      const double d2 = 1.0 + kNoise - lz.squaredNorm();
      if (!(d2 > 1e-12)) continue;  // already known to the GP: nothing to add
      const double d = std::sqrt(d2);
      const Eigen::Index n = g.x.rows();
      g.x.conservativeResize(n + 1, dim);
      g.x.row(n) = xz;
      g.l.conservativeResize(n + 1, n + 1);
      g.l.col(n).setZero();
      g.l.row(n).head(n) = lz.transpose();
      g.l(n, n) = d;
      const Eigen::RowVectorXd w = (covariance(xz, g.xs, *length_scales_).row(0) - lz.transpose() * g.v) / d;
      g.v.conservativeResize(n + 1, Eigen::NoChange);
      g.v.row(n) = w;
      g.var -= w.transpose().cwiseAbs2();
    }
    planned_pending_ = memory_.pending().size();
    plan_.clear();
    choose();
    return true;
  }

  /// The plan from the pool's unseen candidates: EI's best, LCB's best, EI's second... (distinct),
  /// up to kPlan. (Re-planning after every result, N evaluators take EI's best only;
  /// alternating with LCB's there measured worse at N = 8: 0.555 against 0.690, 10 repeats.)
  void choose() {
    const Pool& g = *gp_;
    std::vector<std::size_t> unseen;
    for (std::size_t i = 0; i < g.pool.size(); ++i)
      if (!memory_.seen(g.pool[i])) unseen.push_back(i);
    std::vector<double> ei(g.pool.size()), lcb(g.pool.size());
    for (std::size_t i : unseen) {
      const auto e = static_cast<Eigen::Index>(i);
      const double sigma = std::sqrt(std::max(g.var[e], 1e-12));
      const double gain = g.y_best - g.mu[e] - kXi, z = gain / sigma;
      const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
      const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
      ei[i] = -(gain * cdf + sigma * pdf);  // negated: lower is better
      lcb[i] = g.mu[e] - kKappa * sigma;
    }
    auto order_by = [&](const std::vector<double>& score) {
      std::vector<std::size_t> idx = unseen;
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return score[a] < score[b]; });
      return idx;
    };
    const auto by_ei = order_by(ei), by_lcb = order_by(lcb);
    std::set<std::size_t> taken;
    for (std::size_t r = 0; r < unseen.size() && plan_.size() < kPlan; ++r) {
      for (std::size_t i : {by_ei[r], by_lcb[r]})
        if (plan_.size() < kPlan && taken.insert(i).second) plan_.push_back(g.pool[i]);
    }
  }

  // Unseen candidates: random valid configurations and the neighbours of the best results.
  std::vector<Config> candidates() {
    std::set<Config> pool;
    std::vector<Config> best = memory_.order();
    std::stable_sort(best.begin(), best.end(),
                     [&](const Config& a, const Config& b) { return *memory_.fitness(a) < *memory_.fitness(b); });
    for (std::size_t i = 0; i < std::min<std::size_t>(3, best.size()); ++i)
      for (auto& c : hamming_neighbours(space_, best[i]))
        if (!memory_.seen(c)) pool.insert(std::move(c));
    for (std::size_t i = 0; i < 2 * kPool && pool.size() < kPool + 64; ++i) {
      Config c = sampler_.any(rng_);
      if (!memory_.seen(c)) pool.insert(std::move(c));
    }
    return {pool.begin(), pool.end()};
  }

  std::size_t initial_;
  std::deque<Config> plan_;
  bool pick_by_pick_;  ///< a short run (from_plan says why)
  std::size_t planned_at_ = 0, planned_pending_ = 0;
  std::optional<Eigen::VectorXd> length_scales_;
  std::size_t selected_at_ = 0;
  std::optional<Pool> gp_;  ///< a short run's last full plan (extend())
};

}  // namespace

std::unique_ptr<Strategy> make_bayes_opt(const Space& space, const StrategyOptions& options) {
  return std::make_unique<BayesOpt>(space, options.seed, options.budget);
}

}  // namespace cutune::search
