#pragma once
// Taylor-series methods for ODEs: nabla::jet (the Taylor series of a vector function, series in,
// series out) and nabla::taylor_integrator, an adaptive Taylor-series integrator for
// y' = f(t, y).
//
// The integrator records f once on series_variable numbers (forward/series_tape.hpp) and each
// step replays the recording one order at a time, y_{k+1} = f(t, y)_k / (k + 1): O(K^2) per step
// in the order K, as Taylor integrators compute (heyoka, TaylorIntegration.jl). Order and step
// follow Jorba and Zou (2005): for a tolerance eps the order is ceil(-ln(eps) / 2 + 1); the step
// is h = rho / e^2 * exp(-0.7 / (K - 1)), rho = min over k in {K-1, K} of (s / |y_k|)^(1/k),
// with |.| the largest magnitude over the components and s = max(1, |y_0|): an absolute error
// control below 1 and a relative one above. Dense output evaluates the last step's polynomial;
// events are roots of g(t, y), recorded with f, found on the Taylor polynomial of g over each
// step.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "series_tape.hpp"
#include "taylor.hpp"

namespace nabla {

// The Taylor series of f at a point, of every output, from the series of every input: xs holds
// for each input its normalised coefficients x_0 ... x_K (x_k = x^(k)(0) / k!, the convention of
// nabla::taylor) along some curve x(t); the result holds those of f(x(t)). f takes a container
// (a std::array when xs is one, else a std::vector) of nabla::taylor<T, K> and returns one of
// them or a container of them. Like JAX's jet, with normalised coefficients.
template <class F, class Xs>
auto jet(const F& f, const Xs& xs) {
    using series = std::remove_cvref_t<decltype(*std::begin(xs))>;
    using T = typename series::value_type;
    constexpr std::size_t K = std::tuple_size_v<series> - 1;
    using number = taylor<T, K>;
    const auto to_number = [](const series& c) { return detail::from_coefficients(c); };
    auto inputs = [&] {
        if constexpr (requires { std::tuple_size<Xs>::value; }) {
            std::array<number, std::tuple_size_v<Xs>> r{};
            for (std::size_t i = 0; i < r.size(); ++i)
                r[i] = to_number(xs[i]);
            return r;
        } else {
            std::vector<number> r;
            for (const auto& x : xs)
                r.push_back(to_number(x));
            return r;
        }
    }();
    static_assert(std::is_invocable_v<const F&, const decltype(inputs)&>,
                  "nabla::jet(f, xs): f cannot be called with a container of nabla::taylor "
                  "numbers. Write it generically ([](const auto& x) { using std::sin; return "
                  "std::array{sin(x[0]) * x[1], x[0] + x[1]}; }) and call math functions "
                  "unqualified.");
    const auto y = f(std::as_const(inputs));
    using Y = std::remove_cvref_t<decltype(y)>;
    if constexpr (std::is_convertible_v<Y, number>) {
        return number(y).c;
    } else if constexpr (requires { std::tuple_size<Y>::value; }) {
        std::array<series, std::tuple_size_v<Y>> r{};
        for (std::size_t i = 0; i < r.size(); ++i)
            r[i] = number(y[i]).c;
        return r;
    } else {
        std::vector<series> r;
        for (const auto& v : y)
            r.push_back(number(v).c);
        return r;
    }
}

struct taylor_options {
    // The local error allowed per step: absolute for components below 1, relative above.
    double tolerance = 1e-15;
    // The order of the series; 0 chooses it from the tolerance, ceil(-ln(tolerance) / 2 + 1).
    std::size_t order = 0;
    // The longest step, in the magnitude of time.
    double max_step = std::numeric_limits<double>::infinity();
};

enum class event_direction { any, rising, falling };

template <class T = double>
class taylor_integrator {
public:
    // A root of an event function met during propagation.
    struct event_hit {
        std::size_t event;  // the index add_event returned
        T time;
        std::vector<T> state;  // the state at that time
    };
    enum class outcome { time_reached, terminal_event };
    struct result {
        outcome reason = outcome::time_reached;
        std::size_t terminal_event = 0;  // the event that stopped it, for terminal_event
        std::size_t steps = 0;
        std::vector<event_hit> events;  // every event met (the terminal one last)
    };

    // f(t, y) takes the time and the state (a std::vector of nabla's series_variable numbers:
    // write it generically, with auto parameters) and returns the derivative of every component
    // (a std::array or std::vector, or one number for a state of one component). y0 is any
    // container of numbers.
    template <class F, class Y0>
    taylor_integrator(const F& f, T t0, const Y0& y0, taylor_options options = {})
        : options_(options),
          order_(options.order != 0 ? options.order : order_for(options.tolerance)),
          tape_(std::make_unique<series_tape<T>>(order_)),
          time_(t0),
          state_(std::begin(y0), std::end(y0)) {
        using variable = series_variable<T>;
        static_assert(std::is_invocable_v<const F&, const variable&, const std::vector<variable>&>,
                      "nabla::taylor_integrator(f, t0, y0): f cannot be called as f(t, y) with "
                      "nabla's series_variable numbers. Write it generically: [](auto t, const "
                      "auto& y) { using std::sin; return std::array{y[1], -sin(y[0])}; }, with "
                      "math functions called unqualified.");
        order_for(options.tolerance);  // validates it
        if (!(options.max_step > 0.0))
            throw std::invalid_argument("nabla::taylor_integrator: max_step must be > 0");
        if (order_ < 2)
            throw std::invalid_argument("nabla::taylor_integrator: the order must be at least 2");
        if (state_.empty())
            throw std::invalid_argument("nabla::taylor_integrator: the state is empty");
        tape_->read_at(order_);
        tape_->refuse_kinks(true);
        t_ = tape_->time(t0);
        for (const T& v : state_)
            y_.push_back(tape_->input(v));
        if constexpr (std::is_invocable_v<const F&, const variable&,
                                          const std::vector<variable>&>) {
            outputs_ = nodes_of(f(t_, std::as_const(y_)));
        }
        if (outputs_.size() != state_.size())
            throw std::invalid_argument(
                "nabla::taylor_integrator: f returns " + std::to_string(outputs_.size()) +
                " derivatives for a state of " + std::to_string(state_.size()) + " components");
        for (std::size_t i = 0; i < state_.size(); ++i)
            tape_->link(y_[i].node(), outputs_[i]);  // y_{k+1} = f(t, y)_k / (k + 1)
        safety_ = std::exp(T(-0.7) / T(order_ - 1)) / (std::numbers::e_v<T> * std::numbers::e_v<T>);
    }

    // An event: a root of g(t, y) (a number, written like f) crossed in the given direction
    // (rising: g goes from negative to positive). A terminal event ends propagate_until there.
    // Returns the event's index. Roots are found on g's Taylor polynomial over each step, at
    // 2 (K + 1) points and then by bisection: two roots closer than that spacing may be missed.
    template <class G>
    std::size_t
    add_event(const G& g, event_direction direction = event_direction::any, bool terminal = false) {
        using variable = series_variable<T>;
        static_assert(std::is_invocable_v<const G&, const variable&, const std::vector<variable>&>,
                      "nabla::taylor_integrator::add_event(g): g cannot be called as g(t, y) with "
                      "nabla's series_variable numbers. Write it generically, like f.");
        if constexpr (std::is_invocable_v<const G&, const variable&,
                                          const std::vector<variable>&>) {
            const auto nodes = nodes_of(g(t_, std::as_const(y_)));
            if (nodes.size() != 1)
                throw std::invalid_argument(
                    "nabla::taylor_integrator::add_event: g must return one number");
            events_.push_back({nodes[0], direction, terminal, std::numeric_limits<T>::quiet_NaN()});
        }
        return events_.size() - 1;
    }

    // Restarts from another time and state with the same f, order and events: after an event,
    // to apply an impulse. (f itself is fixed at the recording: constants it captured by
    // reference are read then, not at later steps.)
    template <class Y>
    void set_state(T t, const Y& y) {
        std::vector<T> next(std::begin(y), std::end(y));
        if (next.size() != state_.size())
            throw std::invalid_argument("nabla::taylor_integrator::set_state: the state has " +
                                        std::to_string(next.size()) + " components, f takes " +
                                        std::to_string(state_.size()));
        time_ = t;
        state_ = std::move(next);
        dense_valid_ = false;
        for (auto& e : events_)
            e.last_root = std::numeric_limits<T>::quiet_NaN();
    }

    T time() const { return time_; }
    const std::vector<T>& state() const { return state_; }
    std::size_t order() const { return order_; }
    std::size_t size() const { return state_.size(); }
    std::size_t steps() const { return steps_; }
    // The operations f (and the events) recorded, partials included.
    std::size_t operations() const { return tape_->size(); }

    // One step forward, of the size the error control chooses; returns its length. Events are
    // looked for by propagate_until only.
    T step() { return take_step(std::numeric_limits<T>::infinity(), nullptr); }
    // One step towards limit (backward when limit < time()), ending there if it is nearer than
    // the step the error control chooses; returns the signed length.
    T step(T limit) { return take_step(limit, nullptr); }

    // Steps until time() == t_end or a terminal event.
    result propagate_until(T t_end) {
        if (!std::isfinite(t_end))
            throw std::invalid_argument("nabla::taylor_integrator: the end time must be finite");
        result r;
        while (time_ != t_end) {
            take_step(t_end, &r);
            ++r.steps;
            if (r.reason == outcome::terminal_event)
                break;
        }
        return r;
    }

    // The state at t within the last step (dense output): its Taylor polynomial.
    std::vector<T> dense(T t) const {
        if (!dense_valid_)
            throw std::logic_error("nabla::taylor_integrator::dense: no step has completed since "
                                   "the start or since a step that failed");
        const T lo = std::min(step_start_, time_), hi = std::max(step_start_, time_);
        if (!(t >= lo && t <= hi))
            throw std::out_of_range("nabla::taylor_integrator::dense: the time is outside the "
                                    "last step");
        std::vector<T> y(state_.size());
        evaluate(t - step_start_, y);
        return y;
    }

    // The last step's normalised Taylor coefficient k of component i (around its start).
    T coefficient(std::size_t i, std::size_t k) const {
        if (!dense_valid_)
            throw std::logic_error("nabla::taylor_integrator::coefficient: no step has completed "
                                   "since the start or since a step that failed");
        if (i >= state_.size() || k > order_)
            throw std::out_of_range("nabla::taylor_integrator::coefficient: no such component or "
                                    "order");
        return tape_->row(y_[i].node())[k];
    }

private:
    struct event {
        std::uint32_t node;
        event_direction direction;
        bool terminal;
        T last_root = std::numeric_limits<T>::quiet_NaN();  // the time of its last root
    };

    static std::size_t order_for(double tolerance) {
        if (!(tolerance > 0.0 && tolerance < 1.0))
            throw std::invalid_argument(
                "nabla::taylor_integrator: the tolerance must be between 0 and 1");
        return static_cast<std::size_t>(std::ceil(-std::log(tolerance) / 2.0 + 1.0));
    }

    template <class R>
    std::vector<std::uint32_t> nodes_of(const R& r) {
        using variable = series_variable<T>;
        std::vector<std::uint32_t> nodes;
        if constexpr (std::is_convertible_v<R, variable>) {
            nodes.push_back(tape_->node_of(variable(r)));
        } else {
            static_assert(
                requires { std::begin(r); },
                "nabla::taylor_integrator: f returns neither a number nor a container "
                "of numbers");
            for (const auto& v : r)
                nodes.push_back(tape_->node_of(variable(v)));
        }
        return nodes;
    }

    // Sum_k c_k tau^k of every component of the last step.
    void evaluate(T tau, std::vector<T>& y) const {
        for (std::size_t i = 0; i < y.size(); ++i) {
            const T* c = tape_->row(y_[i].node());
            T sum = c[order_];
            for (std::size_t k = order_; k-- > 0;)
                sum = sum * tau + c[k];
            y[i] = sum;
        }
    }

    T take_step(T limit, result* r) {
        const std::size_t n = state_.size(), K = order_;
        dense_valid_ = false;  // the rows are rewritten from here on
        tape_->row(t_.node())[0] = time_;
        for (std::size_t i = 0; i < n; ++i)
            tape_->row(y_[i].node())[0] = state_[i];
        for (std::size_t k = 0; k < K; ++k)
            tape_->replay(k);  // and y's coefficient k + 1 (series_tape::link)
        if (r != nullptr && !events_.empty())
            tape_->replay(K);  // the events' series to order K

        // Jorba and Zou's step from the last two orders whose coefficients are not all zero (a
        // series with gaps, such as that of exp(-t^4), has zero orders that do not mean it ended).
        // A NaN anywhere makes the magnitudes NaN (the comparisons below keep it).
        const auto largest = [&](std::size_t k) {
            T m = T(0);
            for (std::size_t i = 0; i < n; ++i) {
                const T a = std::abs(tape_->row(y_[i].node())[k]);
                if (!(a <= m))
                    m = a;
            }
            return m;
        };
        const T magnitude = largest(0);
        T rho = std::numeric_limits<T>::infinity();
        bool finite = std::isfinite(magnitude);
        const T s = std::max(T(1), magnitude);
        const T eps = static_cast<T>(options_.tolerance);
        // The orders of the upper half bound it too, at twice their estimate: where the last
        // two orders are only rounding (the pendulum released at exactly 90 degrees has
        // coefficients in every fourth order, the others are of the size of cos(pi/2) = 6e-17),
        // their estimate is far too long a step, and the orders below it say so.
        std::size_t used = 0;
        T rho_below = std::numeric_limits<T>::infinity();
        for (std::size_t k = K; k >= 1 && 2 * k >= K; --k) {
            const T norm = largest(k);
            finite = finite && std::isfinite(norm);
            if (norm == T(0))
                continue;
            // At the order chosen from the tolerance, (s / |y_k|)^(1/k) / e^2 is Jorba and
            // Zou's step; at an order given, the tolerance enters as (eps s / |y_k|)^(1/k).
            const T ratio = options_.order == 0 ? s / norm : eps * s / norm;
            const T estimate = std::pow(ratio, T(1) / T(k));
            if (used < 2)
                rho = std::min(rho, estimate);
            else
                rho_below = std::min(rho_below, estimate);
            ++used;
        }
        rho = std::min(rho, T(2) * rho_below);
        if (!finite)
            throw std::domain_error("nabla::taylor_integrator: the state's Taylor series is not "
                                    "finite at t = " +
                                    std::to_string(double(time_)));
        T h = rho * safety_;
        h = std::min(h, static_cast<T>(options_.max_step));
        if (!std::isfinite(h))
            h = T(1);  // every derivative is 0: an equilibrium, exact at any step
        const T remaining = limit - time_;
        T signed_h = remaining < T(0) ? -h : h;
        bool at_limit = false;
        if (std::abs(remaining) <= h) {
            signed_h = remaining;
            at_limit = true;
        }

        step_start_ = time_;

        // Events: the earliest terminal root ends the step there.
        std::vector<std::pair<T, std::size_t>> roots;
        if (r != nullptr)
            for (std::size_t e = 0; e < events_.size(); ++e)
                if (const T tau = first_root(events_[e], signed_h); !std::isnan(tau))
                    roots.emplace_back(tau, e);
        std::sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) {
            return std::abs(a.first) < std::abs(b.first);
        });
        bool terminal = false;
        std::size_t terminal_index = 0;
        for (const auto& [tau, e] : roots) {
            std::vector<T> at(n);
            evaluate(tau, at);
            r->events.push_back({e, step_start_ + tau, std::move(at)});
            events_[e].last_root = step_start_ + tau;
            if (events_[e].terminal) {
                signed_h = tau;
                terminal = true;
                terminal_index = e;
                break;
            }
        }

        if (step_start_ + signed_h == step_start_ && !at_limit && !terminal)
            throw std::domain_error("nabla::taylor_integrator: the step has shrunk below the "
                                    "resolution of time at t = " +
                                    std::to_string(double(time_)) +
                                    ": the solution is singular there");
        // A coefficient that is not finite makes the new state so (Horner's sum carries it).
        next_.resize(n);
        evaluate(signed_h, next_);
        for (const T& v : next_)
            if (!std::isfinite(v))
                throw std::domain_error("nabla::taylor_integrator: the state's Taylor series is "
                                        "not finite at t = " +
                                        std::to_string(double(time_)));
        state_.swap(next_);
        time_ = at_limit && !terminal ? limit : step_start_ + signed_h;
        ++steps_;
        dense_valid_ = true;
        if (terminal && r != nullptr) {
            r->reason = outcome::terminal_event;
            r->terminal_event = terminal_index;
        }
        return signed_h;
    }

    // The first root of an event's polynomial in (0, h] (h < 0: [h, 0), backwards) crossed in
    // its direction in time, or NaN. A root found at the very end of the step before (a
    // terminal event stops there) may show again within rounding at this step's start: the first
    // sampling interval does not count for that event then.
    T first_root(const event& e, T h) const {
        const T* g = tape_->row(e.node);
        const auto value = [&](T tau) {
            T sum = g[order_];
            for (std::size_t k = order_; k-- > 0;)
                sum = sum * tau + g[k];
            return sum;
        };
        const bool forward = h > T(0);
        const bool cooling = e.last_root == step_start_;
        const std::size_t samples = 2 * (order_ + 1);
        T a = T(0), ga = g[0];
        for (std::size_t j = 1; j <= samples; ++j) {
            const T b = h * T(j) / T(samples);
            const T gb = value(b);
            if (ga == T(0) || (cooling && j == 1)) {
                a = b;
                ga = gb;
                continue;
            }
            const bool crossed = (ga < T(0) && gb >= T(0)) || (ga > T(0) && gb <= T(0));
            // Rising in time: negative before the root. Backwards, "before" is the far side.
            const bool negative_before = (ga < T(0)) == forward;
            const bool wanted = e.direction == event_direction::any ||
                                (e.direction == event_direction::rising && negative_before) ||
                                (e.direction == event_direction::falling && !negative_before);
            if (crossed && wanted) {
                // Bisection to the last bit: the root is bracketed by [a, b].
                T lo = a, hi = b, glo = ga;
                for (int it = 0; it < 200 && lo != hi; ++it) {
                    const T mid = lo + (hi - lo) / T(2);
                    if (mid == lo || mid == hi)
                        break;
                    const T gm = value(mid);
                    if ((glo < T(0)) == (gm < T(0)) && gm != T(0)) {
                        lo = mid;
                        glo = gm;
                    } else {
                        hi = mid;
                    }
                }
                return hi;
            }
            a = b;
            ga = gb;
        }
        return std::numeric_limits<T>::quiet_NaN();
    }

    taylor_options options_;
    std::size_t order_;
    std::unique_ptr<series_tape<T>> tape_;  // on the heap: the recorded numbers point to it
    T time_;
    std::vector<T> state_;
    series_variable<T> t_;
    std::vector<series_variable<T>> y_;
    std::vector<std::uint32_t> outputs_;
    std::vector<T> next_;  // the state at the end of the step, until it is known to be finite  //
                           // each component's row and its derivative's
    std::vector<event> events_;
    T safety_{};  // exp(-0.7 / (K - 1)) / e^2
    T step_start_{};
    std::size_t steps_ = 0;
    bool dense_valid_ = false;  // the tape's rows hold the last step's series
};

template <class F, class Y0, class T>
taylor_integrator(const F&, T, const Y0&, taylor_options = {}) -> taylor_integrator<T>;

}  // namespace nabla
