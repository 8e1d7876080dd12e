#pragma once
// Binomial checkpointing for time-stepping loops: the vector-Jacobian product of T steps
// x_{i+1} = step(x_i, p) with memory that does not grow with T.
//
//   auto [xT, pullback] = nabla::checkpointed_vjp(step, x0, p, 10000);
//   auto [dx0, dp] = pullback(w);            // w = d loss / d xT
//
// The forward run keeps no tape: it computes x_T on plain numbers. The pullback reverses the
// steps with `snapshots` stored states (by default about log2 T) on the binomial schedule of
// Griewank's revolve: with s snapshots and r recomputations per step at most, C(s + r, s) steps
// can be reversed, and the schedule chosen here reaches that bound, so each step is recomputed at
// most r times, where r is the least with C(s + r, s) >= T. Each step is recorded on a tape of
// its own and swept once: the tape holds one step, the snapshots s states.
//
// step(x, p) is a generic callable of two containers (std::vector) of numbers that returns the
// next state as a container of the same length; it is called with double to advance and with
// nabla::var to record a step.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "active.hpp"
#include "detail/lent_tape.hpp"
#include "tape.hpp"

namespace nabla {

// What a checkpointed reversal did, for the memory and recomputation figures.
struct checkpoint_statistics {
    std::size_t steps = 0;                // T
    std::size_t snapshots = 0;            // the most states stored at once (x0 included)
    std::size_t forward_steps = 0;        // steps advanced on plain numbers in the reversal
    std::size_t recorded_steps = 0;       // steps recorded on the tape (each once)
    std::size_t most_recomputations = 0;  // the bound r: C(snapshots + r, snapshots) >= T
    std::size_t tape_bytes = 0;           // the most tape memory one recorded step used
};

namespace detail {

// C(s + r, s), saturating.
inline std::size_t binomial_reach(std::size_t s, std::size_t r) {
    double value = 1.0;
    for (std::size_t k = 1; k <= s; ++k)
        value = value * double(r + k) / double(k);
    return value > 1e18 ? std::size_t(1e18) : static_cast<std::size_t>(value + 0.5);
}

// The least r with C(s + r, s) >= steps.
inline std::size_t repetitions(std::size_t s, std::size_t steps) {
    std::size_t r = 0;
    while (binomial_reach(s, r) < steps)
        ++r;
    return r;
}

// The binomial schedule over any state: advance(x) takes x one step forward, in place, and
// back(x, w) reverses the step taken from x, turning w, the adjoint of its result, into the
// adjoint of x.
template <class State, class Advance, class Back>
class binomial_reversal {
public:
    binomial_reversal(Advance advance, Back back)
        : advance_(std::move(advance)),
          back_(std::move(back)) {}

    State advance(State x, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            advance_(x);
            ++statistics.forward_steps;
        }
        return x;
    }

    // Reverses steps [first, last) from the state at `first`, with `free` snapshots besides it;
    // w holds the adjoint of the state at `last` on entry and of the state at `first` on exit.
    void reverse(
        std::size_t first, std::size_t last, const State& at_first, std::size_t free, State& w) {
        const std::size_t length = last - first;
        if (length == 1) {
            back_(at_first, w);
            ++statistics.recorded_steps;
            return;
        }
        if (free == 0) {
            // No snapshot left: recompute from `first` for every step, last to first.
            for (std::size_t i = last; i-- > first;) {
                back_(advance(at_first, i - first), w);
                ++statistics.recorded_steps;
            }
            return;
        }
        // The binomial split: [first, m) keeps `free` snapshots and r - 1 repetitions, [m, last)
        // gets one snapshot fewer and r repetitions.
        const std::size_t r = repetitions(free, length);
        const std::size_t right = binomial_reach(free - 1, r);
        std::size_t m = length > right ? length - right : 1;
        m = std::min(std::max<std::size_t>(m, 1), length - 1);
        {
            const State at_m = advance(at_first, m);  // a snapshot, freed below
            ++held_;
            statistics.snapshots = std::max(statistics.snapshots, held_ + 1);
            reverse(first + m, last, at_m, free - 1, w);
            --held_;
        }
        reverse(first, first + m, at_first, free, w);
    }

    checkpoint_statistics statistics;

private:
    Advance advance_;
    Back back_;
    std::size_t held_ = 0;
};

template <class State, class Advance, class Back>
binomial_reversal<State, Advance, Back> make_reversal(Advance advance, Back back) {
    return {std::move(advance), std::move(back)};
}

// Snapshots for `steps` steps when none are asked for: ceil(log2(steps)), at least 1.
inline std::size_t default_snapshots(std::size_t steps) {
    std::size_t snapshots = 1;
    while ((std::size_t(1) << snapshots) < steps)
        ++snapshots;
    return snapshots;
}

// One step of a tape-recorded reversal: step(x, p) on plain numbers to advance, recorded on a
// tape of its own and swept to reverse, the parameters' adjoints summed into dp.
template <class Step, class R>
class recorded_steps {
public:
    recorded_steps(const Step& step, const std::vector<R>& p, std::vector<R>& dp)
        : step_(step),
          p_(p),
          dp_(dp) {}

    std::vector<R> advance(const std::vector<R>& x) const {
        std::vector<R> next = step_(x, p_);
        if (next.size() != x.size())
            throw std::invalid_argument("nabla::checkpointed_vjp: step(x, p) returned a state of " +
                                        std::to_string(next.size()) + " numbers for a state of " +
                                        std::to_string(x.size()));
        return next;
    }

    // Records step(x, p) and sweeps it with the adjoint w of its result: w becomes the adjoint of
    // x, and p's adjoint is added to dp.
    std::size_t back(const std::vector<R>& x, std::vector<R>& w) const {
        lent_tape<R> lent;
        tape<R>& t = lent.get();
        auto recording = t.record();
        std::vector<active<R>> ax(x.size()), ap(p_.size());
        for (std::size_t i = 0; i < x.size(); ++i)
            ax[i] = t.input(x[i]);
        for (std::size_t i = 0; i < p_.size(); ++i)
            ap[i] = t.input(p_[i]);
        const auto y = step_(std::as_const(ax), std::as_const(ap));
        std::vector<active<R>> out(y.size());
        for (std::size_t i = 0; i < y.size(); ++i)
            out[i] = active<R>(y[i]);  // a variable, an expression (recorded) or a number
        t.zero_adjoints();
        for (std::size_t i = 0; i < out.size(); ++i)
            t.seed(out[i], w[i]);
        t.sweep();
        for (std::size_t i = 0; i < x.size(); ++i)
            w[i] = t.adjoint(ax[i]);
        for (std::size_t i = 0; i < p_.size(); ++i)
            dp_[i] += t.adjoint(ap[i]);
        return t.bytes_used();
    }

private:
    const Step& step_;
    const std::vector<R>& p_;
    std::vector<R>& dp_;
};

// One step of x in place. A step written step(x, p, next) fills next (sized by it) and the two
// states trade places, so that a run allocates nothing; step(x, p) returns the next state.
template <class Step, class State, class Parameters>
void advance_state(const Step& step, State& x, const Parameters& p, State& scratch) {
    if constexpr (std::is_invocable_v<const Step&, const State&, const Parameters&, State&>) {
        step(std::as_const(x), p, scratch);
        std::swap(x, scratch);
    } else {
        x = step(std::as_const(x), p);
    }
}

// total += part, for containers with += (xtensor) and for those without (std::vector).
template <class T>
void add_into(T& total, const T& part) {
    if constexpr (requires { total += part; }) {
        total += part;
    } else {
        if (total.size() != part.size())
            throw std::invalid_argument(
                "nabla::checkpointed_vjp: the pullback's parameter adjoint has " +
                std::to_string(part.size()) + " numbers for " + std::to_string(total.size()) +
                " parameters");
        auto p = std::begin(part);
        for (auto& t : total)
            t += *p++;
    }
}

// A container like p, of zeros.
template <class T>
T zeros_like(const T& p) {
    T z = p;
    for (auto& v : z)
        v = 0;
    return z;
}

}  // namespace detail

// The adjoints of the initial state and of the parameters.
template <class R>
struct state_and_parameter_adjoints {
    std::vector<R> state;
    std::vector<R> parameters;
    checkpoint_statistics statistics;
};

template <class Step, class R>
class checkpointed_pullback {
public:
    checkpointed_pullback(const Step& step,
                          std::vector<R> x0,
                          std::vector<R> p,
                          std::size_t steps,
                          std::size_t snapshots)
        : step_(step),
          x0_(std::move(x0)),
          p_(std::move(p)),
          steps_(steps),
          snapshots_(snapshots) {}

    // w: the adjoint of the final state.
    state_and_parameter_adjoints<R> operator()(std::vector<R> w) const {
        if (w.size() != x0_.size())
            throw std::invalid_argument("nabla::checkpointed_vjp: w has " +
                                        std::to_string(w.size()) + " entries, the state has " +
                                        std::to_string(x0_.size()));
        std::vector<R> dp(p_.size(), R(0));
        const detail::recorded_steps<Step, R> steps(step_, p_, dp);
        std::size_t tape_bytes = 0;
        auto reversal = detail::make_reversal<std::vector<R>>(
            [&](std::vector<R>& x) { x = steps.advance(x); },
            [&](const std::vector<R>& x, std::vector<R>& adjoint) {
                tape_bytes = std::max(tape_bytes, steps.back(x, adjoint));
            });
        reversal.statistics.steps = steps_;
        reversal.statistics.snapshots = 1;
        reversal.statistics.most_recomputations = detail::repetitions(snapshots_, steps_);
        if (steps_ > 0)
            reversal.reverse(0, steps_, x0_, snapshots_, w);
        reversal.statistics.tape_bytes = tape_bytes;
        return {std::move(w), std::move(dp), reversal.statistics};
    }

private:
    Step step_;
    std::vector<R> x0_;
    std::vector<R> p_;
    std::size_t steps_;
    std::size_t snapshots_;
};

template <class R, class Step>
struct final_state_and_pullback {
    std::vector<R> state;
    checkpointed_pullback<Step, R> pullback;
};

// x_T after `steps` steps of x_{i+1} = step(x_i, p) from x0, and the pullback
// w -> (w^T dx_T/dx0, w^T dx_T/dp) computed with binomial checkpointing. snapshots = 0 picks
// ceil(log2(steps)) (at least 1).
template <class Step, class R>
auto checkpointed_vjp(const Step& step,
                      const std::vector<R>& x0,
                      const std::vector<R>& p,
                      std::size_t steps,
                      std::size_t snapshots = 0) {
    if (snapshots == 0)
        snapshots = detail::default_snapshots(steps);
    std::vector<R> dp;
    const detail::recorded_steps<Step, R> one(step, p, dp);
    std::vector<R> xT = x0;
    for (std::size_t i = 0; i < steps; ++i)
        xT = one.advance(xT);
    // A function is kept as a pointer to it.
    using Kept = std::decay_t<Step>;
    return final_state_and_pullback<R, Kept>{
        std::move(xT), checkpointed_pullback<Kept, R>(step, x0, p, steps, snapshots)};
}

// The adjoints of the initial state and of the parameters, of any state and parameter types.
template <class State, class Parameters>
struct checkpointed_adjoints {
    State state;
    Parameters parameters;
    checkpoint_statistics statistics;
};

// The pullback of steps whose own pullback is given (see checkpointed_vjp below).
template <class Step, class StepPullback, class State, class Parameters>
class given_pullback_reversal {
public:
    given_pullback_reversal(Step step,
                            StepPullback pullback,
                            State x0,
                            Parameters p,
                            std::size_t steps,
                            std::size_t snapshots)
        : step_(std::move(step)),
          pullback_(std::move(pullback)),
          x0_(std::move(x0)),
          p_(std::move(p)),
          steps_(steps),
          snapshots_(snapshots) {}

    // w: the adjoint of the final state.
    checkpointed_adjoints<State, Parameters> operator()(State w) const {
        Parameters dp = detail::zeros_like(p_);
        State scratch{};
        auto reversal = detail::make_reversal<State>(
            [&](State& x) { detail::advance_state(step_, x, p_, scratch); },
            [&](const State& x, State& adjoint) {
                if constexpr (std::is_invocable_v<const StepPullback&, const State&,
                                                  const Parameters&, const State&, State&,
                                                  Parameters&>) {
                    pullback_(x, p_, std::as_const(adjoint), scratch, dp);
                    std::swap(adjoint, scratch);
                } else {
                    auto [dx, dpart] = pullback_(x, p_, std::as_const(adjoint));
                    adjoint = std::move(dx);
                    detail::add_into(dp, dpart);
                }
            });
        reversal.statistics.steps = steps_;
        reversal.statistics.snapshots = 1;
        reversal.statistics.most_recomputations = detail::repetitions(snapshots_, steps_);
        if (steps_ > 0)
            reversal.reverse(0, steps_, x0_, snapshots_, w);
        return {std::move(w), std::move(dp), reversal.statistics};
    }

private:
    Step step_;
    StepPullback pullback_;
    State x0_;
    Parameters p_;
    std::size_t steps_;
    std::size_t snapshots_;
};

template <class State, class Reversal>
struct final_state_and_reversal {
    State state;
    Reversal pullback;
};

// Binomial checkpointing of steps whose pullback is known, so that no tape is recorded:
// step(x, p) returns the next state, and pullback(x, p, w) returns {w^T dstep/dx, w^T dstep/dp}
// (a pair or tuple). Written step(x, p, next) and pullback(x, p, w, dx, dp), they fill next and
// dx (sizing them) and add to dp, which saves an allocation per step. State and parameters
// are any containers with value semantics (xt::xtensor, std::vector). With a static array
// expression the pullback is nabla::apply_vjp:
//   auto step = [&](const grid& u, const grid& k) { ... nabla::evaluate_into(f, ..., u, k) ... };
//   auto back = [&](const grid& u, const grid& k, const grid& w) {
//       return nabla::apply_vjp(f, w, u, k); };
//   auto [uT, pullback] = nabla::checkpointed_vjp(step, back, u0, k, 1000);
template <class Step, class StepPullback, class State, class Parameters>
requires(std::invocable<const StepPullback&, const State&, const Parameters&, const State&> ||
         std::invocable<const StepPullback&,
                        const State&,
                        const Parameters&,
                        const State&,
                        State&,
                        Parameters&>) auto checkpointed_vjp(const Step& step,
                                                            const StepPullback& pullback,
                                                            const State& x0,
                                                            const Parameters& p,
                                                            std::size_t steps,
                                                            std::size_t snapshots = 0) {
    if (snapshots == 0)
        snapshots = detail::default_snapshots(steps);
    State xT = x0, scratch{};
    for (std::size_t i = 0; i < steps; ++i)
        detail::advance_state(step, xT, p, scratch);
    using Reversal =
        given_pullback_reversal<std::decay_t<Step>, std::decay_t<StepPullback>, State, Parameters>;
    return final_state_and_reversal<State, Reversal>{
        std::move(xT), Reversal(step, pullback, x0, p, steps, snapshots)};
}

}  // namespace nabla
