#pragma once
// Order-by-order Taylor coefficients of a recorded program: the engine of nabla's Taylor ODE
// integrator (forward/taylor_ode.hpp).
//
// A Taylor integrator for y' = f(t, y) finds the series of y one order at a time:
// y_{k+1} = f(t, y)_k / (k + 1), where the coefficient k of f needs those of y up to k only.
// Evaluating f on nabla::taylor<T, K> numbers would recompute every coefficient at every order,
// O(K^3); here f is called once on series_variable numbers, which record its operations, and
// the recording is replayed one order at a time, each operation computing only its coefficient
// k from the lower ones, O(K^2) in all.
//
// Arithmetic has its own recurrences (the kernels of rules/series.hpp). A function y = g(u) is
// replayed through the ODE it satisfies, y' = g'(u) u', so k y_k = sum_{j=1..k} j u_j p_{k-j},
// where the partial p = g'(u) is itself recorded from the rule's `partial`, on series_variable
// numbers: sin's partial records cos(u), whose partial -sin(u) finds the sin already recorded.
// The rules stay the one source of derivatives. Partials that never close (lgamma's is digamma,
// whose partial is a polygamma of the next order, ...) are recorded only to the order they are
// needed at. Values (the coefficients of order 0) are the rules' values.
//
// A recording is replayed at other points, so f must not branch on a value: comparing a value of
// the state while recording throws std::invalid_argument, which says what to write instead.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../literal.hpp"
#include "../rules.hpp"
#include "../rules/functions.hpp"
#include "../rules/series.hpp"
#include "../values.hpp"

namespace nabla {

template <class T>
class series_tape;

// A number of a function being recorded for order-by-order Taylor coefficients: a constant, or
// an operation of the tape it belongs to.
template <class T>
class series_variable {
public:
    using value_type = T;

    constexpr series_variable() = default;
    template <class U>
    requires(std::is_arithmetic_v<U>) constexpr series_variable(const U& v)
        : constant_(static_cast<T>(v)) {}
    series_variable(series_tape<T>* tape, std::uint32_t node) : tape_(tape), node_(node) {}

    // The value at the point of recording (frozen: the recording is replayed elsewhere).
    T value() const;
    bool is_constant() const { return tape_ == nullptr; }
    series_tape<T>* tape() const { return tape_; }
    // The tape of a variable known not to be a constant (g++ 12 at -O3 otherwise warns of a null
    // tape on branches that a constant operand rules out).
    series_tape<T>* recording() const {
        NABLA_ASSUME(tape_ != nullptr);
        return tape_;
    }
    std::uint32_t node() const { return node_; }
    const T& constant() const { return constant_; }

    template <class U>
    requires(std::is_arithmetic_v<U> && !std::is_same_v<U, long double>) explicit
    operator U() const {
        if (tape_ != nullptr)
            tape_->read();  // a plain number made of the state would be frozen
        return static_cast<U>(value());
    }
    // std::sin(x) and the like: a compile-time error that says to call sin unqualified
    // (concepts.hpp).
    template <class U>
    requires std::is_same_v<U, long double>
    operator U() const { return detail::refuse_std_function<U>(); }

    series_variable& operator+=(const series_variable& o) { return *this = *this + o; }
    series_variable& operator-=(const series_variable& o) { return *this = *this - o; }
    series_variable& operator*=(const series_variable& o) { return *this = *this * o; }
    series_variable& operator/=(const series_variable& o) { return *this = *this / o; }

private:
    series_tape<T>* tape_ = nullptr;
    std::uint32_t node_ = 0;
    T constant_{};
};

template <class T>
inline constexpr bool is_number_v<series_variable<T>> = true;

template <class T>
class series_tape {
public:
    using variable = series_variable<T>;

    // order: the highest coefficient a replay computes.
    explicit series_tape(std::size_t order)
        : order_(order),
          reciprocal_(order + 1, T(0)),
          zeros_(order + 1, T(0)),
          need_(order) {
        for (std::size_t k = 1; k <= order; ++k)
            reciprocal_[k] = T(1) / T(k);
    }
    series_tape(const series_tape&) = delete;
    series_tape& operator=(const series_tape&) = delete;

    std::size_t order() const { return order_; }
    std::size_t size() const { return nodes_.size(); }
    // 1 / k, for k = 1..order.
    const T& reciprocal(std::size_t k) const { return reciprocal_[k]; }

    // The order every operation recorded from now on is read at (0: values only).
    void read_at(std::size_t order) { need_ = order; }

    // An input whose coefficients the caller sets (row(node)), of value v at the recording.
    variable input(const T& v) {
        const auto id = push({kind::input});
        row(id)[0] = v;
        return {this, id};
    }
    // The independent variable: t_0 = v (the caller moves it in row(node)[0]), t_1 = 1.
    variable time(const T& v) {
        const auto id = push({kind::time});
        row(id)[0] = v;
        if (order_ > 0)
            row(id)[1] = T(1);
        return {this, id};
    }

    // The node of a number of this recording; a constant gets one.
    std::uint32_t node_of(const variable& x) {
        if (x.tape() == this)
            return x.node();
        if (x.tape() != nullptr)
            throw std::invalid_argument(
                "nabla: a series_variable of one recording met the numbers of another");
        return constant_node(x.constant());
    }

    // The coefficients 0..order of a node.
    T* row(std::uint32_t id) { return coefficients_.data() + std::size_t(id) * (order_ + 1); }
    const T* row(std::uint32_t id) const {
        return coefficients_.data() + std::size_t(id) * (order_ + 1);
    }

    // Computes coefficient k of every operation, given the inputs' coefficients to k and every
    // coefficient below k (at k = 0, the values), and coefficient k + 1 of every linked input.
    void replay(std::size_t k) {
        if (k == 0) {
            for (std::uint32_t i = 0; i < nodes_.size(); ++i)
                compute_value(i);
            if (order_ > 0)
                for (const auto& [y, f] : links_)
                    row(y)[1] = row(f)[0];
            return;
        }
        if (!compiled_)
            compile();
        for (const instruction& in : program_)
            step(in, k);
        if (k < order_)
            for (const auto& [y, f] : open_links_)
                y[k + 1] = f[k] * reciprocal_[k + 1];
    }

    // Links y' = f, an input y to a node f: a replay at order k < order() sets coefficient k + 1 of
    // y to coefficient k of f over k + 1, as soon as that is computed (a Taylor integrator's
    // recurrence, with no second pass over the rows).
    void link(std::uint32_t y, std::uint32_t f) {
        if (y >= nodes_.size() || f >= nodes_.size() || nodes_[y].op != kind::input)
            throw std::invalid_argument("nabla::series_tape::link: y is an input, f a node");
        links_.emplace_back(y, f);
        compiled_ = false;
    }

    // Whether functions with a kink or a jump (abs, min, max, floor, ...) are refused: a Taylor
    // step, which sees the series of one side only, would cross the kink unseen (the integrator
    // sets it; a series at one point is fine with them).
    void refuse_kinks(bool refuse) { refuse_kinks_ = refuse; }
    template <class Rule>
    void check_smooth() const {
        if constexpr (std::is_same_v<Rule, rules::abs_rule> ||
                      std::is_base_of_v<rules::piecewise_constant<Rule>, Rule> ||
                      std::is_base_of_v<rules::piecewise_linear<Rule>, Rule>) {
            if (refuse_kinks_ && partial_depth_ == 0)
                throw std::invalid_argument(
                    std::string("nabla::taylor_integrator: f uses ") + Rule::name +
                    ", which has a kink or a jump; a Taylor step sees the series of one side "
                    "and would cross it unseen. Stop the integration there with an event (g: "
                    "the argument of abs, a - b for min and max) and go on with the smooth "
                    "formula of the other side.");
        }
    }

    // A value of the state made a plain number while the user's function is recorded.
    void read() const {
        if (partial_depth_ == 0)
            throw std::invalid_argument(
                "nabla::taylor_integrator: f converts a value of the state to a plain number; f "
                "is recorded once and replayed at every step, so the number would be frozen. "
                "Keep the computation on f's numbers (write it generically, with auto).");
    }

    // A value compared while the user's function is recorded (rules' partials may compare).
    void compared() const {
        if (partial_depth_ == 0)
            throw std::invalid_argument(
                "nabla::taylor_integrator: f compares a value of the state (if, ?:, std::max); f "
                "is recorded once and replayed at every step, so the branch would be frozen. "
                "Write f without branches on the state, or stop the integration at an event (g: "
                "the quantity the branch tests) and go on with the other branch's f.");
    }

    enum class kind : std::uint8_t {
        input,
        time,
        constant,
        add,
        sub,
        neg,
        add_constant,     // a + c
        constant_minus,   // c - a
        scale,            // c a
        divide_constant,  // a / c
        mul,
        square,
        div,
        constant_over,  // c / a
        power,          // a^c
        root,           // sqrt(a)
        unary,          // y = g(a): k y_k = sum j a_j p_{k-j}
        binary,         // y = g(a, b): k y_k = sum j (a_j p_{k-j} + b_j q_{k-j})
        ternary,        // y = g(a, b, t): binary's sum and t_j r_{k-j}
        algorithm,      // y = g(a[, b[, t]]) from g's algorithm run on the series to order k
        // Replay only: two independent products, squares or unary functions in one loop (two
        // chains of additions in flight instead of one), and follow-ups alone.
        pair_mul,
        pair_square,
        pair_unary,
        nothing,
    };

    // a op b, a op c (c a constant).
    variable make(kind op, const variable& a, const variable& b) {
        node n{op};
        n.a = node_of(a);
        n.b = node_of(b);
        return {this, share(n)};
    }
    variable make(kind op, const variable& a, const T& c) {
        node n{op};
        n.a = node_of(a);
        n.c = c;
        return {this, share(n)};
    }

    // y = Rule(a), Rule(a, b) or Rule(a, b, t): its partials recorded as operations (a rule whose
    // derivatives come from its algorithm: by_algorithm below).
    template <class Rule, class... V>
    variable apply(const V&... operands) {
        if constexpr (rules::ByAlgorithm<Rule>)
            return by_algorithm<Rule>(operands...);
        else
            return apply_with_partials<Rule>(operands...);
    }

    // y = Rule(a), or Rule(n, a) with a constant index n (polygamma's order, hermite's degree, a
    // Bessel function's real order), kept as a T.
    template <class Rule>
    variable apply_with_partials(const variable& a) {
        check_smooth<Rule>();
        node n{kind::unary};
        n.a = node_of(a);
        n.rule = Rule::name;
        n.value1 = [](const T& u, const T&) -> T { return Rule::value(u); };
        n.partials = [](series_tape& tape, std::uint32_t id) {
            const variable y(&tape, id), u(&tape, tape.nodes_[id].a);
            tape.set_partials(id, Rule::template partial<0>(y, u));
        };
        return {this, share(n)};
    }
    template <class Rule>
    variable apply_indexed(const T& parameter, const variable& a) {
        node n{kind::unary};
        n.a = node_of(a);
        n.c = parameter;
        n.rule = Rule::name;
        n.value1 = [](const T& u, const T& c) -> T {
            return Rule::value(rules::index_cast<Rule, T>(c), u);
        };
        n.partials = [](series_tape& tape, std::uint32_t id) {
            const variable y(&tape, id), u(&tape, tape.nodes_[id].a);
            const auto index = rules::index_cast<Rule, T>(tape.nodes_[id].c);
            tape.set_partials(id, Rule::template partial<1>(y, index, u));
        };
        return {this, share(n)};
    }
    template <class Rule>
    variable apply_with_partials(const variable& a, const variable& b) {
        check_smooth<Rule>();
        node n{kind::binary};
        n.a = node_of(a);
        n.b = node_of(b);
        n.rule = Rule::name;
        n.value2 = [](const T& u, const T& v) -> T { return Rule::value(u, v); };
        n.partials = [](series_tape& tape, std::uint32_t id) {
            const variable y(&tape, id), u(&tape, tape.nodes_[id].a), v(&tape, tape.nodes_[id].b);
            tape.set_partials(id, Rule::template partial<0>(y, u, v),
                              Rule::template partial<1>(y, u, v));
        };
        return {this, share(n)};
    }
    template <class Rule>
    variable apply_with_partials(const variable& a, const variable& b, const variable& t) {
        check_smooth<Rule>();
        node n{kind::ternary};
        n.a = node_of(a);
        n.b = node_of(b);
        n.third = node_of(t);
        n.rule = Rule::name;
        n.value3 = [](const T& u, const T& v, const T& w) -> T { return Rule::value(u, v, w); };
        n.partials = [](series_tape& tape, std::uint32_t id) {
            const node& m = tape.nodes_[id];
            const variable y(&tape, id), u(&tape, m.a), v(&tape, m.b), w(&tape, m.third);
            tape.set_partials(id, Rule::template partial<0>(y, u, v, w),
                              Rule::template partial<1>(y, u, v, w),
                              Rule::template partial<2>(y, u, v, w));
        };
        return {this, share(n)};
    }
    // A rule whose derivatives come from its algorithm run on series (the elliptic integrals,
    // rules/partial_of.hpp): coefficient k from the algorithm run on the operands' series to
    // order k, with no partials recorded (their rules would nest without end).
    template <class Rule, class... V>
    variable by_algorithm(const V&... operands) {
        node n{kind::algorithm};
        std::array<std::uint32_t, 3> ids{none, none, none};
        std::size_t next = 0;
        ((ids[next++] = node_of(operands)), ...);
        n.a = ids[0];
        n.b = ids[1];
        n.third = ids[2];
        n.rule = Rule::name;
        n.value3 = [](const T& u, const T& v, const T& w) -> T {
            if constexpr (sizeof...(V) == 1)
                return Rule::value(u);
            else if constexpr (sizeof...(V) == 2)
                return Rule::value(u, v);
            else
                return Rule::value(u, v, w);
        };
        n.coefficient = [](const T* u, const T* v, const T* w, std::size_t k) -> T {
            const std::array<const T*, 3> all{u, v, w};
            std::array<const T*, sizeof...(V)> rows;
            std::copy_n(all.begin(), sizeof...(V), rows.begin());
            return rules::detail::value_coefficient<Rule>(rows, k, std::index_sequence_for<V...>{});
        };
        return {this, share(n)};
    }

    // pow(a, b) with a varying exponent: y' = y (b a' / a + log(a) b'), partials that close.
    variable power_of(const variable& a, const variable& b) {
        node n{kind::binary};
        n.a = node_of(a);
        n.b = node_of(b);
        n.rule = rules::pow_rule::name;
        n.value2 = [](const T& u, const T& v) -> T { return rules::pow_rule::value(u, v); };
        n.partials = [](series_tape& tape, std::uint32_t id) {
            const variable y(&tape, id), u(&tape, tape.nodes_[id].a), v(&tape, tape.nodes_[id].b);
            using std::log;
            tape.set_partials(id, y * v / u, y * log(u));
        };
        return {this, share(n)};
    }

private:
    using value_function = T (*)(const T&, const T&);
    using partials_function = void (*)(series_tape&, std::uint32_t);
    using coefficient_function = T (*)(const T*, const T*, const T*, std::size_t);
    using ternary_function = T (*)(const T&, const T&, const T&);
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

    struct node {
        kind op;
        std::uint32_t a = none, b = none;
        std::uint32_t p = none, q = none;      // the partials' nodes (unary, binary)
        std::uint32_t third = none, r = none;  // ternary: the third operand and its partial
        T c{};                       // the constant of add_constant ... power, a parameter
        const char* rule = nullptr;  // the function, for sharing
        value_function value1 = nullptr;
        value_function value2 = nullptr;
        ternary_function value3 = nullptr;
        partials_function partials = nullptr;
        coefficient_function coefficient = nullptr;  // algorithm
        std::size_t need = 0;                        // the highest order read
        T inverse{};  // 1 / a_0 (div: 1 / b_0, root: 1 / (2 y_0)), set at order 0
    };

    // A partial as a number of the recording (a rule may give an exact constant: literal<0>).
    template <class P>
    std::uint32_t partial_node(const P& p) {
        if constexpr (CompileTimeConstant<P>)
            return node_of(variable(as<T>(p)));
        else
            return node_of(variable(p));
    }
    template <class P>
    void set_partials(std::uint32_t id, const P& p) {
        const auto pn = partial_node(p);
        nodes_[id].p = pn;
        compiled_ = false;
    }
    template <class P, class Q>
    void set_partials(std::uint32_t id, const P& p, const Q& q) {
        const auto pn = partial_node(p);
        const auto qn = partial_node(q);
        nodes_[id].p = pn;
        nodes_[id].q = qn;
        compiled_ = false;
    }
    template <class P, class Q, class R>
    void set_partials(std::uint32_t id, const P& p, const Q& q, const R& r) {
        const auto rn = partial_node(r);
        set_partials(id, p, q);
        nodes_[id].r = rn;
    }

    std::uint32_t push(node n) {
        if (nodes_.size() + 1 >= none)
            throw std::length_error("nabla::series_tape: too many operations");
        n.need = need_;
        compiled_ = false;
        nodes_.push_back(n);
        coefficients_.resize(nodes_.size() * (order_ + 1), T(0));
        return static_cast<std::uint32_t>(nodes_.size() - 1);
    }

    // What makes two operations the same: kind, operands, function and constant. Constants
    // compare by value in T itself (long double keeps its digits), NaN equal to NaN and -0 apart
    // from +0, which keeps the ordering strict.
    struct key {
        kind op;
        std::uint32_t a, b, third;
        T c;
        const char* rule;

        static int order(const T& x, const T& y) {
            using std::isnan, std::signbit;
            if (isnan(x) || isnan(y))
                return isnan(x) == isnan(y) ? 0 : (isnan(x) ? -1 : 1);
            if (x < y)
                return -1;
            if (y < x)
                return 1;
            return signbit(x) == signbit(y) ? 0 : (signbit(x) ? -1 : 1);
        }
        friend bool operator<(const key& p, const key& q) {
            if (std::tie(p.op, p.a, p.b, p.third, p.rule) !=
                std::tie(q.op, q.a, q.b, q.third, q.rule))
                return std::tie(p.op, p.a, p.b, p.third, p.rule) <
                       std::tie(q.op, q.a, q.b, q.third, q.rule);
            return order(p.c, q.c) < 0;
        }
    };
    static key key_of(const node& n) { return {n.op, n.a, n.b, n.third, n.c, n.rule}; }

    std::uint32_t constant_node(const T& v) {
        node n{kind::constant};
        n.c = v;
        const auto k = key_of(n);
        if (const auto found = shared_.find(k); found != shared_.end())
            return found->second;
        const auto id = push(n);
        row(id)[0] = v;
        shared_.emplace(k, id);
        return id;
    }

    // An operation recorded before is that operation: sin's partial finds the cos of a cos(u)
    // of the user's, and that cos's partial the sin. A new one gets its value at once, so that
    // the recording sees values, and its partials as far as they are read.
    std::uint32_t share(const node& n) {
        const auto k = key_of(n);
        if (const auto found = shared_.find(k); found != shared_.end()) {
            raise(found->second, need_);
            return found->second;
        }
        const std::size_t before = nodes_.size();
        const auto id = push(n);
        shared_.emplace(k, id);  // before its partials, which may find it
        try {
            compute_value(id);
            if (need_ > 0 && n.partials != nullptr)
                record_partials(id);
        } catch (...) {
            rollback(before);  // a domain error at the recording leaves no half-made operation
            throw;
        }
        return id;
    }

    void rollback(std::size_t size) {
        for (auto it = shared_.begin(); it != shared_.end();)
            it = it->second >= size ? shared_.erase(it) : std::next(it);
        nodes_.resize(size);
        coefficients_.resize(size * (order_ + 1));
        compiled_ = false;
    }

    void record_partials(std::uint32_t id) {
        struct restore {  // also when the partial throws
            series_tape& tape;
            std::size_t need;
            ~restore() {
                tape.need_ = need;
                --tape.partial_depth_;
            }
        } guard{*this, need_};
        need_ = nodes_[id].need - 1;
        ++partial_depth_;
        nodes_[id].partials(*this, id);
    }

    // A node read at a higher order than it was recorded for: its operands and partials too.
    void raise(std::uint32_t id, std::size_t need) {
        if (nodes_[id].need >= need)
            return;
        nodes_[id].need = need;
        if (nodes_[id].a != none)
            raise(nodes_[id].a, need);
        if (nodes_[id].b != none)
            raise(nodes_[id].b, need);
        if (nodes_[id].third != none)
            raise(nodes_[id].third, need);
        if (nodes_[id].partials == nullptr)
            return;
        if (nodes_[id].p == none) {
            record_partials(id);
            return;
        }
        raise(nodes_[id].p, need - 1);
        if (nodes_[id].q != none)
            raise(nodes_[id].q, need - 1);
        if (nodes_[id].r != none)
            raise(nodes_[id].r, need - 1);
    }

    // The value (coefficient 0) of operation i, and the 1 / a_0 its recurrence multiplies by;
    // the orders above come from the compiled instructions (step).
    void compute_value(std::uint32_t i) {
        node& n = nodes_[i];
        T* y = row(i);
        const T* a = n.a == none ? nullptr : row(n.a);
        const T* b = n.b == none ? nullptr : row(n.b);
        namespace series = rules::series;
        switch (n.op) {
        case kind::input:
        case kind::time:
        case kind::constant:
        case kind::pair_mul:  // replay only
        case kind::pair_square:
        case kind::pair_unary:
        case kind::nothing:
            return;
        case kind::add:
            y[0] = a[0] + b[0];
            return;
        case kind::sub:
            y[0] = a[0] - b[0];
            return;
        case kind::neg:
            y[0] = -a[0];
            return;
        case kind::add_constant:
            y[0] = a[0] + n.c;
            return;
        case kind::constant_minus:
            y[0] = n.c - a[0];
            return;
        case kind::scale:
            y[0] = n.c * a[0];
            return;
        case kind::divide_constant:
            y[0] = a[0] / n.c;
            return;
        case kind::mul:
            y[0] = a[0] * b[0];
            return;
        case kind::square:
            y[0] = a[0] * a[0];
            return;
        case kind::div:
            if (b[0] == T(0) && n.need > 0)
                series::domain_error(
                    "nabla::taylor: division by a series whose constant term is 0");
            y[0] = a[0] / b[0];
            n.inverse = T(1) / b[0];
            return;
        case kind::constant_over:
            if (a[0] == T(0) && n.need > 0)
                series::domain_error(
                    "nabla::taylor: division by a series whose constant term is 0");
            y[0] = n.c / a[0];
            n.inverse = T(1) / a[0];
            return;
        case kind::power:
            if (a[0] == T(0) && n.need > 0)
                series::domain_error("nabla::taylor: a real power of a series that is 0 at the "
                                     "point has no Taylor series there");
            y[0] = rules::pow_rule::value(a[0], n.c);
            n.inverse = T(1) / a[0];
            return;
        case kind::root:
            y[0] = rules::sqrt_rule::value(a[0]);
            if (y[0] == T(0) && n.need > 0)
                series::domain_error(
                    "nabla::taylor: sqrt of a series that is 0 at the point has no Taylor series");
            n.inverse = T(1) / (T(2) * y[0]);
            return;
        case kind::unary:
            y[0] = n.value1(a[0], n.c);
            return;
        case kind::binary:
            y[0] = n.value2(a[0], b[0]);
            return;
        case kind::ternary:
            y[0] = n.value3(a[0], b[0], row(n.third)[0]);
            return;
        case kind::algorithm:
            y[0] = n.value3(a[0], b == nullptr ? T(0) : b[0],
                            n.third == none ? T(0) : row(n.third)[0]);
            return;
        }
    }

    // The replay at orders k >= 1 runs a flat list of the operations that compute something, with
    // their rows resolved, so the recording's bookkeeping stays out of the loop. The operations of
    // cost O(1) per order (sums, scalings) after an instruction join it as follow-ups (their
    // operands come earlier, so they are known at order k): 10 (y - x) is one instruction.
    // A linear operation at orders k >= 1, exactly: a_k + b_k, a_k - b_k or alpha a_k (negations,
    // and scalings and divisions where they are exact as a product: a finite factor, a divisor
    // that is a power of 2).
    struct follow_up {
        enum class form : std::uint8_t { plus, minus, times };
        T* y;
        const T* a;
        const T* b;
        T alpha;
        form as;
        T* next = nullptr;  // the row of an input linked to y (link)

        NABLA_ALWAYS_INLINE T operator()(const T& av, const T& bv) const {
            switch (as) {
            case form::plus:
                return av + bv;
            case form::minus:
                return av - bv;
            default:
                return alpha * av;
            }
        }
    };
    static constexpr std::size_t max_follow_ups = 6;

    bool as_follow_up(const node& n, T* y, follow_up& f) const {
        using std::isfinite;
        using form = typename follow_up::form;
        const auto at = [&](std::uint32_t j) -> const T* {
            return j == none ? zeros_.data() : row(j);
        };
        f = {y, at(n.a), at(n.b), T(1), form::times};
        switch (n.op) {
        case kind::add:
            f.as = form::plus;
            return true;
        case kind::sub:
            f.as = form::minus;
            return true;
        case kind::neg:
        case kind::constant_minus:
            f.alpha = T(-1);
            return true;
        case kind::add_constant:
            return true;
        case kind::scale:
            f.alpha = n.c;
            return isfinite(n.c);
        case kind::divide_constant: {
            int exponent = 0;
            using std::frexp;
            f.alpha = T(1) / n.c;
            return isfinite(n.c) && n.c != T(0) && frexp(n.c, &exponent) == T(0.5) &&
                   isfinite(f.alpha) && f.alpha * n.c == T(1);
        }
        default:
            return false;
        }
    }

    struct instruction {
        kind op;
        T* y;
        const T* a;
        const T* b;
        const T* p;
        const T* q;
        T c;
        const T* inverse;
        std::uint32_t follow_ups = 0;
        std::array<follow_up, max_follow_ups> then{};
        T* y2 = nullptr;  // the second of a pair
        const T* a2 = nullptr;
        const T* b2 = nullptr;  // pair_unary: the partial's row (ternary: a2, b2 the third's)
        T* next = nullptr;      // the row of an input linked to y (link), and to y2
        T* next2 = nullptr;
        coefficient_function coefficient = nullptr;  // algorithm (a2: the third operand)
    };

    // Pairs each product, square or unary function with a later one of its kind that reads
    // nothing computed in between (at order k; a partial is read below k only).
    void pair_up() {
        std::vector<const T*> written;
        const auto writes = [&](const instruction& in) {
            written.push_back(in.y);
            for (std::uint32_t f = 0; f < in.follow_ups; ++f)
                written.push_back(in.then[f].y);
        };
        const auto reads_written = [&](const T* row) {
            return std::find(written.begin(), written.end(), row) != written.end();
        };
        for (std::size_t i = 0; i < program_.size(); ++i) {
            instruction& first = program_[i];
            if (first.op != kind::mul && first.op != kind::square && first.op != kind::unary)
                continue;
            written.clear();
            writes(first);
            for (std::size_t j = i + 1; j < program_.size() && j < i + 16; ++j) {
                instruction& second = program_[j];
                const bool independent = !reads_written(second.a) &&
                                         (second.op != kind::mul || !reads_written(second.b));
                if (second.op == first.op && independent) {
                    first.y2 = second.y;
                    first.a2 = second.a;
                    first.b2 = second.op == kind::unary ? second.p : second.b;
                    first.op = first.op == kind::mul      ? kind::pair_mul
                               : first.op == kind::square ? kind::pair_square
                                                          : kind::pair_unary;
                    second.op = kind::nothing;
                    break;
                }
                writes(second);
            }
        }
    }

    void compile() {
        program_.clear();
        for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
            const node& n = nodes_[i];
            if (n.op == kind::input || n.op == kind::time || n.op == kind::constant ||
                ((n.op == kind::unary || n.op == kind::binary || n.op == kind::ternary) &&
                 n.p == none))
                continue;
            const auto at = [&](std::uint32_t j) -> const T* {
                return j == none ? nullptr : row(j);
            };
            follow_up f;
            const bool linear_op = as_follow_up(n, row(i), f);
            if (linear_op && (program_.empty() || program_.back().follow_ups == max_follow_ups))
                program_.push_back(
                    {kind::nothing, nullptr, nullptr, nullptr, nullptr, nullptr, T(0), nullptr});
            if (linear_op) {
                auto& in = program_.back();
                in.then[in.follow_ups++] = f;
            } else {
                program_.push_back(
                    {n.op, row(i), at(n.a), at(n.b), at(n.p), at(n.q), n.c, &nodes_[i].inverse});
                if (n.op == kind::ternary) {
                    program_.back().a2 = at(n.third);
                    program_.back().b2 = at(n.r);
                }
                if (n.op == kind::algorithm) {
                    program_.back().a2 = at(n.third);
                    program_.back().coefficient = n.coefficient;
                }
            }
        }
        pair_up();
        // Each link where its f is computed; the rest (f an input, a constant, or the f of an
        // earlier link) after the program.
        open_links_.clear();
        for (const auto& [y, f] : links_) {
            T** writer = nullptr;
            for (instruction& in : program_) {
                // (The second of a pair is left as `nothing` with its row: the first writes it.)
                if (in.op != kind::nothing && in.y == row(f) && in.next == nullptr)
                    writer = &in.next;
                else if (in.y2 == row(f) && in.next2 == nullptr)
                    writer = &in.next2;
                for (std::uint32_t u = 0; u < in.follow_ups && writer == nullptr; ++u)
                    if (in.then[u].y == row(f) && in.then[u].next == nullptr)
                        writer = &in.then[u].next;
                if (writer != nullptr)
                    break;
            }
            if (writer != nullptr)
                *writer = row(y);
            else
                open_links_.emplace_back(row(y), row(f));
        }
        compiled_ = true;
    }

    // A linear operation at an order k >= 1 on the values of its operands there.
    static T linear(kind op, const T& a, const T& b, const T& c) {
        switch (op) {
        case kind::add:
            return a + b;
        case kind::sub:
            return a - b;
        case kind::neg:
        case kind::constant_minus:
            return -a;
        case kind::add_constant:
            return a;
        case kind::scale:
            // A zero coefficient stays zero under an infinite factor, as in nabla::taylor.
            return a == T(0) ? T(0) : c * a;
        case kind::divide_constant:
            return a / c;
        default:
            return a;
        }
    }

    // Coefficient k + 1 of a linked input from coefficient k of its f.
    NABLA_ALWAYS_INLINE void link_from(T* next, const T& v, std::size_t k) const {
        if (next != nullptr && k < order_)
            next[k + 1] = v * reciprocal_[k + 1];
    }

    void step(const instruction& in, std::size_t k) const {
        namespace series = rules::series;
        const T* a = in.a;
        T v;
        switch (in.op) {
        case kind::mul:
            v = series::product_at(a, in.b, k);
            break;
        case kind::square:
            v = series::square_at(a, k);
            break;
        case kind::div:
            v = series::quotient_at(in.y, in.b, a[k], *in.inverse, k);
            break;
        case kind::constant_over:
            v = series::quotient_at(in.y, a, T(0), *in.inverse, k);
            break;
        case kind::power:
            v = series::power_at(in.y, a, in.c, k) * reciprocal_[k] * *in.inverse;
            break;
        case kind::root:
            v = series::square_root_at(in.y, a[k], *in.inverse, k);
            break;
        case kind::unary:
            v = series::chain_sum(a, in.p, k) * reciprocal_[k];
            break;
        case kind::binary:
            v = (series::chain_sum(a, in.p, k) + series::chain_sum(in.b, in.q, k)) * reciprocal_[k];
            break;
        case kind::algorithm:
            v = in.coefficient(a, in.b, in.a2, k);
            break;
        case kind::ternary:
            v = (series::chain_sum(a, in.p, k) + series::chain_sum(in.b, in.q, k) +
                 series::chain_sum(in.a2, in.b2, k)) *
                reciprocal_[k];
            break;
        case kind::pair_mul: {
            const T *b = in.b, *a2 = in.a2, *b2 = in.b2;
            T s1 = T(0), s2 = T(0);
            for (std::size_t j = 0; j <= k; ++j) {
                s1 += a[j] * b[k - j];
                s2 += a2[j] * b2[k - j];
            }
            in.y2[k] = s2;
            link_from(in.next2, s2, k);
            v = s1;
            break;
        }
        case kind::pair_square: {
            const T* a2 = in.a2;
            T s1 = T(0), s2 = T(0);
            for (std::size_t j = 0; 2 * j < k; ++j) {
                s1 += a[j] * a[k - j];
                s2 += a2[j] * a2[k - j];
            }
            s1 += s1;
            s2 += s2;
            if (k % 2 == 0) {
                s1 += a[k / 2] * a[k / 2];
                s2 += a2[k / 2] * a2[k / 2];
            }
            in.y2[k] = s2;
            link_from(in.next2, s2, k);
            v = s1;
            break;
        }
        case kind::pair_unary: {
            const T *p = in.p, *a2 = in.a2, *p2 = in.b2;
            T s1 = T(0), s2 = T(0);
            for (std::size_t j = 1; j <= k; ++j) {
                s1 += T(j) * a[j] * p[k - j];
                s2 += T(j) * a2[j] * p2[k - j];
            }
            in.y2[k] = s2 * reciprocal_[k];
            link_from(in.next2, in.y2[k], k);
            v = s1 * reciprocal_[k];
            break;
        }
        case kind::nothing:
            for (std::uint32_t f = 0; f < in.follow_ups; ++f) {
                const follow_up& then = in.then[f];
                const T v = then(then.a[k], then.as == follow_up::form::times ? T(0) : then.b[k]);
                then.y[k] = v;
                link_from(then.next, v, k);
            }
            return;
        default:
            v = linear(in.op, a[k], in.b == nullptr ? T(0) : in.b[k], in.c);
            break;
        }
        in.y[k] = v;
        link_from(in.next, v, k);
        // A follow-up that reads the value just computed takes it from the register, not back
        // from the row it was stored to (a chain such as 10 (y - x) stays in registers).
        const T* last = in.y;
        for (std::uint32_t f = 0; f < in.follow_ups; ++f) {
            const follow_up& then = in.then[f];
            T av, bv = T(0);
            if (then.a == last)
                av = v;
            else
                av = then.a[k];
            if (then.b == last)
                bv = v;
            else if (then.as != follow_up::form::times)
                bv = then.b[k];
            v = then(av, bv);
            then.y[k] = v;
            link_from(then.next, v, k);
            last = then.y;
        }
    }

    std::vector<instruction> program_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> links_;  // (y, f)
    std::vector<std::pair<T*, const T*>> open_links_;
    bool compiled_ = false;  // cleared by every change to the recording

    std::size_t order_;
    std::vector<T> reciprocal_;
    std::vector<T> zeros_;
    std::vector<node> nodes_;
    std::vector<T> coefficients_;
    std::map<key, std::uint32_t> shared_;
    std::size_t need_;  // the order the operations recorded now are read at
    int partial_depth_ = 0;
    bool refuse_kinks_ = false;
};

template <class T>
T series_variable<T>::value() const {
    return tape_ == nullptr ? constant_ : tape_->row(node_)[0];
}

namespace detail {
template <class T>
series_tape<T>* tape_of(const series_variable<T>& a, const series_variable<T>& b) {
    if (a.tape() != nullptr && b.tape() != nullptr && a.tape() != b.tape())
        throw std::invalid_argument(
            "nabla: the series_variables of two recordings met in one operation");
    return a.tape() != nullptr ? a.tape() : b.tape();
}
// Whether a strong-zero product or quotient is exactly 0 for every coefficient: a factor (the
// numerator) that is the constant 0, whose other operand may be infinite at the point (n j_(n-1)
// at n = 0, x = 0 in the spherical Bessel functions' derivative), where the chain rule's sums would
// give 0 times inf.
template <class Rule, class T>
bool strong_zero_of(const series_variable<T>& a, const series_variable<T>& b) {
    const auto zero = [](const series_variable<T>& u) {
        return u.is_constant() && u.constant() == T(0);
    };
    if constexpr (std::is_same_v<Rule, rules::mul_strong_zero_rule>)
        return zero(a) || zero(b);
    else if constexpr (std::is_same_v<Rule, rules::div_strong_zero_rule>)
        return zero(a);
    else
        return false;
}
template <class U>
concept ConstantForSeries =
    std::is_arithmetic_v<std::remove_cvref_t<U>> && !std::is_same_v<std::remove_cvref_t<U>, bool>;
}  // namespace detail

// Arithmetic. Two constants fold; a constant operand takes the cheaper recurrence.
template <class T>
series_variable<T> operator+(const series_variable<T>& a, const series_variable<T>& b) {
    using kind = typename series_tape<T>::kind;
    if (a.is_constant() && b.is_constant())
        return a.constant() + b.constant();
    if (a.is_constant())
        return b.recording()->make(kind::add_constant, b, a.constant());
    if (b.is_constant())
        return a.recording()->make(kind::add_constant, a, b.constant());
    return detail::tape_of(a, b)->make(kind::add, a, b);
}
template <class T>
series_variable<T> operator-(const series_variable<T>& a, const series_variable<T>& b) {
    using kind = typename series_tape<T>::kind;
    if (a.is_constant() && b.is_constant())
        return a.constant() - b.constant();
    if (a.is_constant())
        return b.recording()->make(kind::constant_minus, b, a.constant());
    if (b.is_constant())
        return a.recording()->make(kind::add_constant, a, -b.constant());
    return detail::tape_of(a, b)->make(kind::sub, a, b);
}
template <class T>
series_variable<T> operator-(const series_variable<T>& a) {
    using kind = typename series_tape<T>::kind;
    if (a.is_constant())
        return -a.constant();
    return a.recording()->make(kind::neg, a, T(0));
}
template <class T>
series_variable<T> operator+(const series_variable<T>& a) {
    return a;
}
template <class T>
series_variable<T> operator*(const series_variable<T>& a, const series_variable<T>& b) {
    using kind = typename series_tape<T>::kind;
    if (a.is_constant() && b.is_constant())
        return a.constant() * b.constant();
    if (a.is_constant())
        return b.recording()->make(kind::scale, b, a.constant());
    if (b.is_constant())
        return a.recording()->make(kind::scale, a, b.constant());
    if (a.tape() == b.tape() && a.node() == b.node())
        return a.recording()->make(kind::square, a, T(0));
    return detail::tape_of(a, b)->make(kind::mul, a, b);
}
template <class T>
series_variable<T> operator/(const series_variable<T>& a, const series_variable<T>& b) {
    using kind = typename series_tape<T>::kind;
    if (a.is_constant() && b.is_constant())
        return a.constant() / b.constant();
    if (a.is_constant())
        return b.recording()->make(kind::constant_over, b, a.constant());
    if (b.is_constant())
        return a.recording()->make(kind::divide_constant, a, b.constant());
    return detail::tape_of(a, b)->make(kind::div, a, b);
}

#define NABLA_SERIES_MIXED(op)                                                                     \
    template <class T, detail::ConstantForSeries U>                                                \
    series_variable<T> operator op(const series_variable<T>& a, const U& b) {                      \
        return a op series_variable<T>(static_cast<T>(b));                                         \
    }                                                                                              \
    template <class T, detail::ConstantForSeries U>                                                \
    series_variable<T> operator op(const U& a, const series_variable<T>& b) {                      \
        return series_variable<T>(static_cast<T>(a)) op b;                                         \
    }
NABLA_SERIES_MIXED(+)
NABLA_SERIES_MIXED(-)
NABLA_SERIES_MIXED(*)
NABLA_SERIES_MIXED(/)
#undef NABLA_SERIES_MIXED

// Comparisons compare values; comparing a value of the state in the recorded function throws
// (series_tape::compared), since the branch would be replayed at every step.
template <class T>
bool operator==(const series_variable<T>& a, const series_variable<T>& b) {
    if (auto* tape = detail::tape_of(a, b))
        tape->compared();
    return a.value() == b.value();
}
template <class T>
auto operator<=>(const series_variable<T>& a, const series_variable<T>& b) {
    if (auto* tape = detail::tape_of(a, b))
        tape->compared();
    return a.value() <=> b.value();
}
template <class T, detail::ConstantForSeries U>
bool operator==(const series_variable<T>& a, const U& b) {
    return a == series_variable<T>(static_cast<T>(b));
}
template <class T, detail::ConstantForSeries U>
auto operator<=>(const series_variable<T>& a, const U& b) {
    return a <=> series_variable<T>(static_cast<T>(b));
}

namespace detail {
// sqrt has a recurrence of half the cost of its partial's; the other functions go through their
// partials.
template <class Rule, class T>
series_variable<T> series_function(const series_variable<T>& u) {
    if (u.is_constant())
        return Rule::value(u.constant());
    if constexpr (std::is_same_v<Rule, rules::sqrt_rule>)
        return u.recording()->make(series_tape<T>::kind::root, u, T(0));
    else
        return u.recording()->template apply<Rule>(u);
}
}  // namespace detail

#define NABLA_SERIES_UNARY(function, rule)                                                         \
    template <class T>                                                                             \
    series_variable<T> function(const series_variable<T>& u) {                                     \
        return detail::series_function<rules::rule>(u);                                            \
    }
NABLA_UNARY_FUNCTIONS(NABLA_SERIES_UNARY)
#undef NABLA_SERIES_UNARY

#define NABLA_SERIES_BINARY(function, rule)                                                        \
    template <class T>                                                                             \
    series_variable<T> function(const series_variable<T>& a, const series_variable<T>& b) {        \
        if (a.is_constant() && b.is_constant())                                                    \
            return rules::rule::value(a.constant(), b.constant());                                 \
        if (detail::strong_zero_of<rules::rule>(a, b))                                             \
            return T(0);                                                                           \
        return detail::tape_of(a, b)->template apply<rules::rule>(a, b);                           \
    }                                                                                              \
    template <class T, detail::ConstantForSeries U>                                                \
    series_variable<T> function(const series_variable<T>& a, const U& b) {                         \
        return function(a, series_variable<T>(static_cast<T>(b)));                                 \
    }                                                                                              \
    template <class T, detail::ConstantForSeries U>                                                \
    series_variable<T> function(const U& a, const series_variable<T>& b) {                         \
        return function(series_variable<T>(static_cast<T>(a)), b);                                 \
    }
NABLA_BINARY_FUNCTIONS(NABLA_SERIES_BINARY)
#undef NABLA_SERIES_BINARY

template <class T>
series_variable<T>
fma(const series_variable<T>& a, const series_variable<T>& b, const series_variable<T>& c) {
    return a * b + c;
}
// ldexp(u, n) = u 2^n: a product by a power of two, in two factors where 2^n alone would
// overflow or underflow.
template <class T, class I>
requires std::is_integral_v<I> series_variable<T> ldexp(const series_variable<T>& u, I n) {
    const int half = static_cast<int>(n) / 2;
    if (n > 1000 || n < -1000)
        return u * std::ldexp(T(1), half) * std::ldexp(T(1), static_cast<int>(n) - half);
    return u * std::ldexp(T(1), static_cast<int>(n));
}

// hypot(a, b, c) = hypot(hypot(a, b), c): the same function, from the rule of two operands.
template <class T>
series_variable<T>
hypot(const series_variable<T>& a, const series_variable<T>& b, const series_variable<T>& c) {
    return hypot(hypot(a, b), c);
}

// ellint_3(k, nu, phi): one node, or its value where every operand is a constant.
namespace detail {
template <class T>
inline constexpr bool is_series_variable = false;
template <class T>
inline constexpr bool is_series_variable<series_variable<T>> = true;
template <class T>
struct is_series_type : std::bool_constant<is_series_variable<T>> {};
template <class... X>
using series_among_t = typename first_of<is_series_type, X...>::type;
template <class U, class V>
concept SeriesOrConstant = std::is_same_v<U, V> || ConstantForSeries<U>;
template <class V, class U>
V as_series_variable(const U& u) {
    if constexpr (std::is_same_v<U, V>)
        return u;
    else
        return V(static_cast<typename V::value_type>(u));
}
template <class Rule, class T, class... V>
series_variable<T> apply_series(const V&... v) {
    series_tape<T>* tape = nullptr;
    for (series_tape<T>* t : {v.tape()...}) {
        if (t != nullptr && tape != nullptr && t != tape)
            throw std::invalid_argument(
                "nabla: the series_variables of two recordings met in one operation");
        tape = t != nullptr ? t : tape;
    }
    if (tape == nullptr)
        return Rule::value(v.constant()...);
    return tape->template apply<Rule>(v...);
}
}  // namespace detail
template <class T>
series_variable<T>
ellint_3(const series_variable<T>& k, const series_variable<T>& nu, const series_variable<T>& phi) {
    return detail::apply_series<rules::ellint_3_rule, T>(k, nu, phi);
}

// The functions of three operands with constants beside series variables.
#define NABLA_SERIES_TERNARY(function)                                                             \
    template <class A, class B, class C, class V = detail::series_among_t<A, B, C>>                \
    requires(detail::is_series_variable<V> &&                                                      \
             !(std::is_same_v<A, V> && std::is_same_v<B, V> &&                                     \
               std::is_same_v<C, V>)&&detail::SeriesOrConstant<A, V> &&                            \
             detail::SeriesOrConstant<B, V> && detail::SeriesOrConstant<C, V>) V                   \
    function(const A& a, const B& b, const C& c) {                                                 \
        return function(detail::as_series_variable<V>(a), detail::as_series_variable<V>(b),        \
                        detail::as_series_variable<V>(c));                                         \
    }
NABLA_SERIES_TERNARY(fma)
NABLA_SERIES_TERNARY(hypot)
NABLA_SERIES_TERNARY(ellint_3)
#undef NABLA_SERIES_TERNARY

// f(n, x) of a constant integer index n.
#define NABLA_SERIES_INDEXED(function, rule)                                                       \
    template <class T, class I>                                                                    \
    requires rules::index_argument<rules::rule, I> series_variable<T> function(                    \
        I n, const series_variable<T>& u) {                                                        \
        const auto index = rules::index_cast<rules::rule, T>(n);                                   \
        if (u.is_constant())                                                                       \
            return rules::rule::value(index, u.constant());                                        \
        return u.recording()->template apply_indexed<rules::rule>(T(index), u);                    \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_SERIES_INDEXED)
#undef NABLA_SERIES_INDEXED
// f(n, a, x) of a constant degree n and a constant parameter a: the polynomial's three-term
// recurrence in n (rules::detail::parametric_polynomial), recorded as the arithmetic it is.
namespace detail {
template <bool Laguerre, class T>
series_variable<T> parametric_polynomial(int n, T a, const series_variable<T>& x) {
    if (x.is_constant())
        return rules::detail::parametric_polynomial<Laguerre>(n, a, x.constant());
    return rules::detail::parametric_polynomial<Laguerre>(n, a, x);
}
}  // namespace detail
template <class T, class I, class A>
requires(std::is_integral_v<I>&& std::is_arithmetic_v<A>)
    series_variable<T> gegenbauer(I n, A a, const series_variable<T>& x) {
    return detail::parametric_polynomial<false>(static_cast<int>(n), T(a), x);
}
template <class T, class I, class A>
requires(std::is_integral_v<I>&& std::is_arithmetic_v<A>)
    series_variable<T> assoc_laguerre(I n, A a, const series_variable<T>& x) {
    return detail::parametric_polynomial<true>(static_cast<int>(n), T(a), x);
}

template <class T>
series_variable<T> digamma(const series_variable<T>& u) {
    return polygamma(0, u);
}

// Powers: an integer exponent multiplies (exact at a zero base, as nabla::taylor), a constant
// real one has the power recurrence, a varying one its partials.
template <class T, class I>
requires std::is_integral_v<I> series_variable<T> pow(const series_variable<T>& a, I n) {
    if (n < 0)
        return T(1) / pow(a, -static_cast<long long>(n));
    series_variable<T> result(T(1)), base = a;
    bool first = true;
    for (auto e = n; e > 0; e /= 2) {
        if (e % 2 == 1) {
            result = first ? base : result * base;
            first = false;
        }
        if (e > 1)
            base = base * base;
    }
    return result;
}
template <class T, detail::ConstantForSeries U>
requires(!std::is_integral_v<U>) series_variable<T> pow(const series_variable<T>& a, const U& r) {
    using kind = typename series_tape<T>::kind;
    if (a.is_constant())
        return rules::pow_rule::value(a.constant(), static_cast<T>(r));
    return a.recording()->make(kind::power, a, static_cast<T>(r));
}
template <class T>
series_variable<T> pow(const series_variable<T>& a, const series_variable<T>& b) {
    if (b.is_constant())
        return pow(a, b.constant());
    if (a.is_constant() && a.constant() == T(1))
        return T(1);
    return detail::tape_of(a, b)->power_of(a, b);
}
template <class T, detail::ConstantForSeries U>
series_variable<T> pow(const U& a, const series_variable<T>& b) {
    return pow(series_variable<T>(static_cast<T>(a)), b);
}

template <class T>
bool isfinite(const series_variable<T>& x) {
    using std::isfinite;
    return isfinite(x.value());
}
template <class T>
bool isnan(const series_variable<T>& x) {
    using std::isnan;
    return isnan(x.value());
}

}  // namespace nabla

template <class T, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<nabla::series_variable<T>, U> {
    using type = nabla::series_variable<T>;
};
template <class T, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<U, nabla::series_variable<T>> {
    using type = nabla::series_variable<T>;
};
