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

#include <cstddef>
#include <stdexcept>
#include <string>
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

template <class Step, class R>
class checkpointed_reversal {
public:
    checkpointed_reversal(const Step& step, std::vector<R> p, std::size_t snapshots)
        : step_(step),
          p_(std::move(p)),
          snapshots_(snapshots) {}

    std::vector<R> advance(std::vector<R> x, std::size_t count) {
        for (std::size_t i = 0; i < count; ++i) {
            std::vector<R> next = step_(std::as_const(x), std::as_const(p_));
            if (next.size() != x.size())
                throw std::invalid_argument(
                    "nabla::checkpointed_vjp: step(x, p) returned a state of " +
                    std::to_string(next.size()) + " numbers for a state of " +
                    std::to_string(x.size()));
            x = std::move(next);
            ++statistics.forward_steps;
        }
        return x;
    }

    // Reverses steps [first, last) from the state at `first`, with `free` snapshots besides it;
    // w holds the adjoint of the state at `last` on entry and of the state at `first` on exit.
    void reverse(std::size_t first,
                 std::size_t last,
                 const std::vector<R>& at_first,
                 std::size_t free,
                 std::vector<R>& w) {
        const std::size_t length = last - first;
        if (length == 1) {
            record_and_sweep(at_first, w);
            return;
        }
        if (free == 0) {
            // No snapshot left: recompute from `first` for every step, last to first.
            for (std::size_t i = last; i-- > first;)
                record_and_sweep(advance(at_first, i - first), w);
            return;
        }
        // The binomial split: [first, m) keeps `free` snapshots and r - 1 repetitions, [m, last)
        // gets one snapshot fewer and r repetitions.
        const std::size_t r = repetitions(free, length);
        const std::size_t right = binomial_reach(free - 1, r);
        std::size_t m = length > right ? length - right : 1;
        m = std::min(std::max<std::size_t>(m, 1), length - 1);
        {
            const std::vector<R> at_m = advance(at_first, m);  // a snapshot, freed below
            ++held_;
            statistics.snapshots = std::max(statistics.snapshots, held_ + 1);
            reverse(first + m, last, at_m, free - 1, w);
            --held_;
        }
        reverse(first, first + m, at_first, free, w);
    }

    checkpoint_statistics statistics;
    std::vector<R> dp;

private:
    // Records step(x, p) and sweeps it with the adjoint w of its result: w becomes the adjoint of
    // x, and p's adjoint is added to dp.
    void record_and_sweep(const std::vector<R>& x, std::vector<R>& w) {
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
        if (dp.size() != p_.size())
            dp.assign(p_.size(), R(0));
        for (std::size_t i = 0; i < p_.size(); ++i)
            dp[i] += t.adjoint(ap[i]);
        ++statistics.recorded_steps;
        statistics.tape_bytes = std::max(statistics.tape_bytes, t.bytes_used());
    }

    const Step& step_;
    std::vector<R> p_;
    std::size_t snapshots_;
    std::size_t held_ = 0;
};

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
        detail::checkpointed_reversal<Step, R> reversal(step_, p_, snapshots_);
        reversal.statistics.steps = steps_;
        reversal.statistics.snapshots = 1;
        reversal.statistics.most_recomputations = detail::repetitions(snapshots_, steps_);
        reversal.dp.assign(p_.size(), R(0));
        if (steps_ > 0)
            reversal.reverse(0, steps_, x0_, snapshots_, w);
        return {std::move(w), std::move(reversal.dp), reversal.statistics};
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
    if (snapshots == 0) {
        snapshots = 1;
        while ((std::size_t(1) << snapshots) < steps)
            ++snapshots;
    }
    detail::checkpointed_reversal<Step, R> forward(step, p, snapshots);
    std::vector<R> xT = forward.advance(x0, steps);
    return final_state_and_pullback<R, Step>{
        std::move(xT), checkpointed_pullback<Step, R>(step, x0, p, steps, snapshots)};
}

}  // namespace nabla
