#pragma once
// Arrays on the run-time tape: nabla::var_array, a one-dimensional array of active numbers that
// the tape (reverse/tape.hpp) records as a whole. Each array operation, an element-wise function
// or arithmetic or a reduction, is one entry of the tape whatever the array's length: its
// elements are consecutive variables of the tape, its partials are kept as arrays, and the sweep
// pulls the adjoints back in one SIMD loop per operation. Slices are free: they share the values
// and refer to a range of the same variables. An element, x[i], is an ordinary nabla::var, so
// arrays and scalar statements mix, and control flow on values works as with scalars.
//
//   nabla::tape<> t;
//   auto recording = t.record();
//   nabla::var_array x = nabla::input_array(t, xs);
//   nabla::var m = amax(x);
//   nabla::var f = log(sum(exp(x - m))) + m;         // three array entries, one statement
//   t.gradient(f);
//   std::vector<double> g = nabla::adjoints(t, x);
//
// nabla::value_and_grad(nabla::mode::arrays, f, xs, ...) records a generic callable this way
// (api/arrays.hpp). The partials come from the rule table, as in every other mode; the element
// conventions are the scalar tape's: an element whose adjoint is zero passes nothing back, even
// through an infinite partial.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../literal.hpp"
#include "../reverse/active.hpp"
#include "../reverse/detail/access.hpp"
#include "../reverse/errors.hpp"
#include "../reverse/tape.hpp"
#include "../rules/functions.hpp"
#include "../rules/rule.hpp"
#include "evaluate.hpp"
#include "reductions.hpp"

namespace nabla {

class var_array;

namespace detail {
struct var_array_access;

// Memory for the values and partials of arrays on the tape, given back to the thread that frees
// it and handed out again: a function recorded again finds its arrays' pages already there
// (fresh pages from the system cost a gradient of 10^5 elements several times its loops). At
// most 32 buffers and 512 MiB are kept per thread.
class array_memory {
public:
    using buffer = std::shared_ptr<double[]>;
    static buffer take(std::size_t n) {
        std::vector<spare>& spares = pool();
        std::size_t best = spares.size();
        for (std::size_t k = 0; k < spares.size(); ++k)
            if (spares[k].capacity >= n &&
                (best == spares.size() || spares[k].capacity < spares[best].capacity))
                best = k;
        if (best == spares.size())
            return {new double[n > 0 ? n : 1], giver{n}};
        spare chosen = std::move(spares[best]);
        spares.erase(spares.begin() + static_cast<std::ptrdiff_t>(best));
        kept() -= chosen.capacity;
        return {chosen.data.release(), giver{chosen.capacity}};
    }

private:
    struct spare {
        std::size_t capacity;
        std::unique_ptr<double[]> data;
    };
    struct giver {
        std::size_t capacity;
        void operator()(double* p) const { give_back(p, capacity); }
    };
    static constexpr std::size_t max_buffers = 32;
    static constexpr std::size_t max_doubles = (std::size_t{512} << 20) / sizeof(double);
    static void give_back(double* p, std::size_t capacity) {
        if (!alive() || capacity > max_doubles) {
            delete[] p;
            return;
        }
        std::vector<spare>& spares = pool();
        // Room is made by dropping the oldest spares.
        while (!spares.empty() &&
               (spares.size() >= max_buffers || kept() + capacity > max_doubles)) {
            kept() -= spares.front().capacity;
            spares.erase(spares.begin());
        }
        spares.push_back({capacity, std::unique_ptr<double[]>(p)});
        kept() += capacity;
    }
    struct holder {
        std::vector<spare> spares;
        ~holder() { alive() = false; }
    };
    static std::vector<spare>& pool() {
        thread_local holder h;
        return h.spares;
    }
    // false once the thread's pool is gone (a buffer freed later is deleted).
    static bool& alive() {
        thread_local bool a = true;
        return a;
    }
    static std::size_t& kept() {
        thread_local std::size_t k = 0;
        return k;
    }
};

}  // namespace detail

// A one-dimensional array of active doubles. Made by nabla::input_array (independent variables),
// by array operations on other var_arrays, or from a container of doubles (a constant array,
// recorded nowhere). Its values cannot be changed: an operation makes a new array.
class var_array {
public:
    using value_type = var;

    var_array() = default;
    // A constant array with these values (implicit, so that data mixes with active arrays:
    // sum(x * weights)).
    template <class C>
    requires detail::ArrayArgument<C> &&(!std::is_same_v<std::remove_cvref_t<C>, var_array>)
        var_array(const C& values)  // NOLINT(google-explicit-constructor)
        : values_(copy_of(values)),
          size_(static_cast<std::size_t>(values.size())) {}
    // The array of these variables (each element refers to its variable; one tape entry).
    explicit var_array(std::span<const var> elements);
    explicit var_array(const std::vector<var>& elements)
        : var_array(std::span<const var>(elements.data(), elements.size())) {}

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    // Element i's value, and all of them.
    double value(std::size_t i) const { return data()[i]; }
    std::span<const double> values() const { return {data(), size_}; }
    // Element i as an active variable (no new statement: it is the array's own variable).
    var operator[](std::size_t i) const {
        return first_ == 0
                   ? var(value(i))
                   : detail::tape_access::variable(
                         value(i), static_cast<detail::tape_index>(first_ + i), generation_);
    }
    var operator()(std::size_t i) const { return (*this)[i]; }
    // Checked: a tape_error past the end.
    var at(std::size_t i) const {
        if (i >= size_)
            detail::throw_tape_error("var_array::at(" + std::to_string(i) + "): the array has " +
                                     std::to_string(size_) + " elements");
        return (*this)[i];
    }
    // Elements begin .. end - 1, sharing this array's values and variables (a shape_error unless
    // begin <= end <= size()).
    var_array slice(std::size_t begin, std::size_t end) const {
        if (begin > end || end > size_)
            throw shape_error("nabla: var_array::slice(" + std::to_string(begin) + ", " +
                              std::to_string(end) + ") of an array of " + std::to_string(size_) +
                              " elements");
        var_array view = *this;
        view.offset_ = offset_ + begin;
        view.size_ = end - begin;
        if (first_ != 0)
            view.first_ = static_cast<detail::tape_index>(first_ + begin);
        return view;
    }
    // The compile-time views of static array expressions work here too: x(nabla::from<1>).
    template <std::size_t Begin, long End>
    var_array operator()(nabla::slice<Begin, End>) const {
        constexpr std::size_t drop = Begin + nabla::slice<Begin, End>::trim;
        if (drop > size_)
            throw shape_error("nabla: a view drops " + std::to_string(drop) +
                              " elements of an array of " + std::to_string(size_));
        return slice(Begin, size_ - nabla::slice<Begin, End>::trim);
    }
    // Whether the array is recorded nowhere (a constant).
    bool is_constant() const { return first_ == 0; }

    // Iteration yields the elements as variables (for code written over containers of numbers).
    class iterator {
    public:
        using value_type = var;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        iterator(const var_array* a, std::size_t i) : array_(a), i_(i) {}
        var operator*() const { return (*array_)[i_]; }
        iterator& operator++() {
            ++i_;
            return *this;
        }
        iterator operator++(int) {
            iterator old = *this;
            ++i_;
            return old;
        }
        bool operator==(const iterator& o) const { return i_ == o.i_; }

    private:
        const var_array* array_ = nullptr;
        std::size_t i_ = 0;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size_}; }

private:
    friend struct detail::var_array_access;

    const double* data() const { return values_ ? values_.get() + offset_ : nullptr; }
    template <class C>
    static detail::array_memory::buffer copy_of(const C& values) {
        detail::check_array_argument(values, 0);
        const auto n = static_cast<std::size_t>(values.size());
        detail::array_memory::buffer b = detail::array_memory::take(n);
        std::copy(detail::first_element(values), detail::first_element(values) + n, b.get());
        return b;
    }

    std::shared_ptr<const double[]> values_;
    std::size_t offset_ = 0;
    std::size_t size_ = 0;
    detail::tape_index first_ = 0;  // the variable of element 0; 0: a constant
    std::uint32_t generation_ = 0;
};

namespace detail {

struct var_array_access {
    static var_array
    make(std::shared_ptr<const double[]> values, std::size_t n, tape_index first, std::uint32_t g) {
        var_array a;
        a.size_ = n;
        a.values_ = std::move(values);
        a.first_ = first;
        a.generation_ = g;
        return a;
    }
    static const double* data(const var_array& a) { return a.data(); }
    static tape_index first(const var_array& a) { return a.first_; }
    static std::uint32_t generation(const var_array& a) { return a.generation_; }
    // The values, kept alive for a pullback, and where this view starts in them.
    static std::shared_ptr<const double[]> values(const var_array& a) { return a.values_; }
};

// The tape an operation on these operands records on: the thread's active tape when any operand
// is active (after checking that each is of its current recording), null when all are constants.
inline tape<double>* tape_for(std::initializer_list<std::pair<tape_index, std::uint32_t>> ops) {
    tape<double>* on = active_tape<double>;
    bool active = false;
    for (const auto& [index, generation] : ops) {
        if (index == 0)
            continue;
        if (on == nullptr)
            throw_stale();
        tape_access::check(*on, generation, index);
        active = true;
    }
    return active ? on : nullptr;
}

// An operand of an element-wise operation: an array (read at every element), or a number or a
// variable broadcast to every element.
struct array_side {
    const double* values;
    std::size_t size;
    tape_index index;
    std::uint32_t generation;
    std::shared_ptr<const double[]> keep;  // for partials recomputed in the sweep
    static constexpr bool is_array = true;
    template <class L>
    NABLA_ALWAYS_INLINE L at(std::size_t i) const {
        return load<L>(values + i);
    }
};
struct scalar_side {
    double value;
    tape_index index;
    std::uint32_t generation;
    static constexpr bool is_array = false;
    template <class L>
    NABLA_ALWAYS_INLINE L at(std::size_t) const {
        return L(value);
    }
};

inline array_side side_of(const var_array& a) {
    return {var_array_access::data(a), a.size(), var_array_access::first(a),
            var_array_access::generation(a), var_array_access::values(a)};
}
inline scalar_side side_of(const var& v) {
    return {v.value, v.index(), v.generation()};
}
inline scalar_side side_of(double v) {
    return {v, 0, 0};
}

// The length of the array operands; a shape_error if they differ.
template <class... Sides>
std::size_t common_length(const Sides&... sides) {
    std::size_t n = 0;
    bool found = false;
    const auto take = [&](const auto& side) {
        if constexpr (std::remove_cvref_t<decltype(side)>::is_array) {
            if (found && side.size != n)
                throw shape_error("nabla: element-wise operands of different lengths, " +
                                  std::to_string(n) + " and " + std::to_string(side.size));
            n = side.size;
            found = true;
        }
    };
    (take(sides), ...);
    return n;
}

// Whether partial I of Rule is a compile-time constant (add's 1): then nothing is stored.
template <class Rule, std::size_t I, std::size_t Arity>
inline constexpr bool constant_partial = []<std::size_t... J>(std::index_sequence<J...>) {
    return CompileTimeConstant<decltype(rules::partial_on<Rule, I>(0.0, (void(J), 0.0)...))>;
}
(std::make_index_sequence<Arity>{});

template <class Rule, std::size_t I, std::size_t Arity>
constexpr double constant_partial_value() {
    return []<std::size_t... J>(std::index_sequence<J...>) {
        return as<double>(decltype(rules::partial_on<Rule, I>(0.0, (void(J), 0.0)...)){});
    }
    (std::make_index_sequence<Arity>{});
}

// adjoint * partial, except that a zero adjoint gives 0 even through an infinite partial.
template <class L>
NABLA_ALWAYS_INLINE L pulled(const L& adjoint, const L& partial) {
    using rules::select;
    return select(adjoint == L(0.0), L(0.0), adjoint * partial);
}

// Pulls the outputs' adjoints back into one operand: into each element's (an array), or summed
// into one variable (a broadcast number). `partial(i)` gives the partials at element i as lanes.
template <bool IsArray, class Partial>
void pull_back(double* adjoints,
               tape_index output,
               tape_index operand,
               std::size_t n,
               const Partial& partial) {
    const double* const out = adjoints + output;
    double* const in = adjoints + operand;
    std::size_t i = 0;
    if constexpr (IsArray) {
#if NABLA_ARRAY_LANES
        for (; i + width<lanes> <= n; i += width<lanes>)
            add_to(in + i, pulled(load<lanes>(out + i), partial.template operator()<lanes>(i)));
#endif
        for (; i < n; ++i)
            in[i] += pulled(out[i], partial.template operator()<double>(i));
    } else {
        double total = 0.0;
#if NABLA_ARRAY_LANES
        lanes sum(0.0);
        for (; i + width<lanes> <= n; i += width<lanes>)
            sum += pulled(load<lanes>(out + i), partial.template operator()<lanes>(i));
        total = add_lanes(sum);
#endif
        for (; i < n; ++i)
            total += pulled(out[i], partial.template operator()<double>(i));
        *in += total;
    }
}

// An element-wise operation: its values in one loop, with the partials of the active operands
// kept as arrays where they cost more to recompute than to read back (rules::cheap_partials;
// constants are never kept), and one tape entry whose pullback is one loop per active operand.
template <class Rule, class... Operands>
var_array elementwise(const Operands&... operands) {
    constexpr std::size_t arity = sizeof...(Operands);
    const std::tuple sides{side_of(operands)...};
    const std::size_t n = std::apply([](const auto&... s) { return common_length(s...); }, sides);
    tape<double>* const on = std::apply(
        [](const auto&... s) {
            return tape_for({{s.index, s.generation}...});
        },
        sides);
    const std::array<bool, arity> active = std::apply(
        [on](const auto&... s) {
            return std::array<bool, arity>{(on != nullptr && s.index != 0)...};
        },
        sides);

    array_memory::buffer values = array_memory::take(n);
    std::array<array_memory::buffer, arity> partials;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((active[I] && !constant_partial<Rule, I, arity> && !rules::cheap_partials<Rule>
              ? void(partials[I] = array_memory::take(n))
              : void()),
         ...);
    }
    (std::make_index_sequence<arity>{});

    const auto step = [&]<class L>(std::size_t i) {
        const auto at = [&]<std::size_t K>() { return std::get<K>(sides).template at<L>(i); };
        [&]<std::size_t... I>(std::index_sequence<I...>) {
            const std::tuple x{at.template operator()<I>()...};
            const L y = to_number<L>(rules::value_on<Rule>(std::get<I>(x)...));
            store_lanes(values.get() + i, y);
            const auto keep_partial = [&]<std::size_t K>() {
                if constexpr (!constant_partial<Rule, K, arity>)
                    if (partials[K])
                        store_lanes(partials[K].get() + i,
                                    to_number<L>(rules::partial_on<Rule, K>(y, std::get<I>(x)...)));
            };
            (keep_partial.template operator()<I>(), ...);
        }
        (std::make_index_sequence<arity>{});
    };
    std::size_t i = 0;
#if NABLA_ARRAY_LANES
    for (; i + width<lanes> <= n; i += width<lanes>)
        step.template operator()<lanes>(i);
#endif
    for (; i < n; ++i)
        step.template operator()<double>(i);

    if (on == nullptr || n == 0)
        return var_array_access::make(std::move(values), n, 0, 0);
    const tape_index first = tape_access::add_variables(*on, n);
    // Operand values are kept only where the sweep recomputes partials from them.
    std::tuple held = sides;
    if constexpr (!rules::cheap_partials<Rule>)
        std::apply(
            [](auto&... s) {
                const auto drop = [](auto& side) {
                    if constexpr (std::remove_cvref_t<decltype(side)>::is_array)
                        side.keep = {};
                };
                (drop(s), ...);
            },
            held);
    tape_access::add_array_operation(
        *on, first, static_cast<tape_index>(n),
        [first, n, active, partials = std::move(partials), sides = std::move(held),
         kept = rules::cheap_partials<Rule> ? values : array_memory::buffer{}](double* adjoints) {
            [&]<std::size_t... I>(std::index_sequence<I...>) {
                const auto one = [&]<std::size_t K>() {
                    if (!active[K])
                        return;
                    const auto& side = std::get<K>(sides);
                    constexpr bool is_array = std::remove_cvref_t<decltype(side)>::is_array;
                    if constexpr (constant_partial<Rule, K, arity>) {
                        pull_back<is_array>(adjoints, first, side.index, n,
                                            []<class L>(std::size_t) {
                                                return L(constant_partial_value<Rule, K, arity>());
                                            });
                    } else if constexpr (rules::cheap_partials<Rule>) {
                        const double* y = kept.get();
                        pull_back<is_array>(
                            adjoints, first, side.index, n, [y, &sides]<class L>(std::size_t j) {
                                return std::apply(
                                    [&](const auto&... s) {
                                        return to_number<L>(rules::partial_on<Rule, K>(
                                            load<L>(y + j), s.template at<L>(j)...));
                                    },
                                    sides);
                            });
                    } else {
                        const double* d = partials[K].get();
                        pull_back<is_array>(adjoints, first, side.index, n,
                                            [d]<class L>(std::size_t j) { return load<L>(d + j); });
                    }
                };
                (one.template operator()<I>(), ...);
            }
            (std::make_index_sequence<arity>{});
        });
    return var_array_access::make(std::move(values), n, first, on->generation());
}

// A reduction: its value in one loop with four accumulators (the kinds of array/reductions.hpp,
// merged in a fixed order), one new variable, and an entry whose pullback gives each element the
// kind's seed.
template <class Kind>
var reduce_on_tape(const var_array& x) {
    const double* const v = var_array_access::data(x);
    const std::size_t n = x.size();
    using state = typename Kind::template state<double>;
    state total{};
    std::size_t i = 0;
#if NABLA_ARRAY_LANES
    constexpr std::size_t w = width<lanes>;
    std::array<typename Kind::template state<lanes>, 4> states{};
    for (; i + 4 * w <= n; i += 4 * w)
        for (std::size_t u = 0; u < 4; ++u)
            states[u].add(load<lanes>(v + i + u * w));
    for (; i + w <= n; i += w)
        states[0].add(load<lanes>(v + i));
    total = fold_states<w>(states);
#endif
    for (; i < n; ++i)
        total.add(v[i]);
    const double result = Kind::result(total, n);
    tape<double>* const on =
        tape_for({{var_array_access::first(x), var_array_access::generation(x)}});
    if (on == nullptr || n == 0)
        return var(result);
    const tape_index out = tape_access::add_variables(*on, 1);
    auto keep = var_array_access::values(x);
    const auto offset = static_cast<std::size_t>(v - keep.get());
    tape_access::add_array_operation(
        *on, out, 1,
        [out, n, total, result, offset, operand = var_array_access::first(x),
         keep = std::move(keep)](double* adjoints) {
            const double a = adjoints[out];
            if (a == 0.0)
                return;
            const double* const values = keep.get() + offset;
            double* const in = adjoints + operand;
            std::size_t j = 0;
#if NABLA_ARRAY_LANES
            for (; j + width<lanes> <= n; j += width<lanes>)
                add_to(in + j, Kind::seed(load<lanes>(values + j), total, result, a, n));
#endif
            for (; j < n; ++j)
                in[j] += Kind::seed(values[j], total, result, a, n);
        });
    return tape_access::variable(result, out, on->generation());
}

}  // namespace detail

inline var_array::var_array(std::span<const var> elements) {
    detail::array_memory::buffer values = detail::array_memory::take(elements.size());
    std::vector<detail::tape_index> sources(elements.size());
    tape<double>* on = detail::active_tape<double>;
    bool any = false;
    for (std::size_t k = 0; k < elements.size(); ++k) {
        values[k] = elements[k].value;
        const detail::tape_index index = elements[k].index();
        if (index != 0) {
            if (on == nullptr)
                detail::throw_stale();
            detail::tape_access::check(*on, elements[k].generation(), index);
            any = true;
        }
        sources[k] = index;
    }
    size_ = elements.size();
    values_ = std::move(values);
    if (!any)
        return;
    first_ = detail::tape_access::add_variables(*on, size_);
    generation_ = on->generation();
    detail::tape_access::add_array_operation(
        *on, first_, static_cast<detail::tape_index>(size_),
        [first = first_, sources = std::move(sources)](double* adjoints) {
            for (std::size_t k = 0; k < sources.size(); ++k)
                adjoints[sources[k]] += adjoints[first + k];
        });
}

// n new independent variables with these values, recorded one after another on t.
template <class C>
requires detail::ArrayArgument<C> var_array input_array(tape<double>& t, const C& values) {
    detail::check_array_argument(values, 0);
    const double* const first = detail::first_element(values);
    const auto n = static_cast<std::size_t>(values.size());
    detail::array_memory::buffer kept = detail::array_memory::take(n);
    std::copy(first, first + n, kept.get());
    if (n == 0)
        return detail::var_array_access::make(std::move(kept), 0, 0, 0);
    const detail::tape_index index = detail::tape_access::add_variables(t, n);
    return detail::var_array_access::make(std::move(kept), n, index, t.generation());
}

namespace detail {

// n new independent variables whose values are read in place from the caller's memory, not
// copied: for a transformation whose recording ends before it returns to the caller.
inline var_array input_in_place(tape<double>& t, const double* values, std::size_t n) {
    std::shared_ptr<const double[]> borrowed(std::shared_ptr<const void>(), values);
    if (n == 0)
        return var_array_access::make(std::move(borrowed), 0, 0, 0);
    const tape_index index = tape_access::add_variables(t, n);
    return var_array_access::make(std::move(borrowed), n, index, t.generation());
}

// The adjoints of x's elements after a sweep of t, into g (of x's length; left alone for a
// constant array).
template <class G>
void read_array_adjoints(const tape<double>& t, const var_array& x, G& g) {
    if (x.empty() || x.is_constant())
        return;
    const std::span<const double> a = t.adjoints_from(x[0], x.size());
    std::copy(a.begin(), a.end(), g.data());
}

}  // namespace detail

// The adjoints of x's elements after a sweep of t (zeros for a constant array).
inline std::vector<double> adjoints(const tape<double>& t, const var_array& x) {
    std::vector<double> out(x.size());
    detail::read_array_adjoints(t, x, out);
    return out;
}

// Element-wise arithmetic and functions, with arrays, numbers and variables as operands (the
// numbers taken by templates, so that an int matches these before the core's catch-all). Each is
// a template (`template <int = 0>`: its parameters still convert) so that only the functions a
// program calls are compiled: as plain functions they cost every translation unit 3.5 s.
#define NABLA_VAR_ARRAY_BINARY(name, rule)                                                         \
    template <int = 0>                                                                             \
    var_array name(const var_array& a, const var_array& b) {                                       \
        return detail::elementwise<rules::rule>(a, b);                                             \
    }                                                                                              \
    template <class N>                                                                             \
    requires std::is_arithmetic_v<N> var_array name(const var_array& a, N b) {                     \
        return detail::elementwise<rules::rule>(a, static_cast<double>(b));                        \
    }                                                                                              \
    template <class N>                                                                             \
    requires std::is_arithmetic_v<N> var_array name(N a, const var_array& b) {                     \
        return detail::elementwise<rules::rule>(static_cast<double>(a), b);                        \
    }                                                                                              \
    template <int = 0>                                                                             \
    var_array name(const var_array& a, const var& b) {                                             \
        return detail::elementwise<rules::rule>(a, b);                                             \
    }                                                                                              \
    template <int = 0>                                                                             \
    var_array name(const var& a, const var_array& b) {                                             \
        return detail::elementwise<rules::rule>(a, b);                                             \
    }

NABLA_VAR_ARRAY_BINARY(operator+, add_rule)
NABLA_VAR_ARRAY_BINARY(operator-, sub_rule)
NABLA_VAR_ARRAY_BINARY(operator*, mul_rule)
NABLA_VAR_ARRAY_BINARY(operator/, div_rule)
NABLA_VAR_ARRAY_BINARY(pow, pow_rule)
#define NABLA_VAR_ARRAY_FUNCTION(name, rule) NABLA_VAR_ARRAY_BINARY(name, rule)
NABLA_BINARY_FUNCTIONS(NABLA_VAR_ARRAY_FUNCTION)
#undef NABLA_VAR_ARRAY_FUNCTION

template <int = 0>
var_array operator-(const var_array& a) {
    return detail::elementwise<rules::neg_rule>(a);
}
inline var_array operator+(const var_array& a) {
    return a;
}
#define NABLA_VAR_ARRAY_UNARY(name, rule)                                                          \
    template <int = 0>                                                                             \
    var_array name(const var_array& a) {                                                           \
        return detail::elementwise<rules::rule>(a);                                                \
    }
NABLA_UNARY_FUNCTIONS(NABLA_VAR_ARRAY_UNARY)
#undef NABLA_VAR_ARRAY_UNARY
#undef NABLA_VAR_ARRAY_BINARY

template <int = 0>
var_array square(const var_array& a) {
    return a * a;
}
template <int = 0>
var_array fma(const var_array& a, const var_array& b, const var_array& c) {
    return detail::elementwise<rules::fma_rule>(a, b, c);
}

// polygamma(n, x) element by element for an integer order n (not differentiable), and digamma.
template <int = 0>
var_array polygamma(int n, const var_array& x) {
    using namespace detail;
    const std::size_t size = x.size();
    const double* const v = var_array_access::data(x);
    tape<double>* const on =
        tape_for({{var_array_access::first(x), var_array_access::generation(x)}});
    array_memory::buffer values = array_memory::take(size);
    array_memory::buffer partials = on != nullptr ? array_memory::take(size) : nullptr;
    for (std::size_t i = 0; i < size; ++i) {
        values[i] = rules::value_on<rules::polygamma_rule>(n, v[i]);
        if (partials)
            partials[i] =
                to_number<double>(rules::partial_on<rules::polygamma_rule, 1>(values[i], n, v[i]));
    }
    if (on == nullptr || size == 0)
        return var_array_access::make(std::move(values), size, 0, 0);
    const tape_index first = tape_access::add_variables(*on, size);
    tape_access::add_array_operation(
        *on, first, static_cast<tape_index>(size),
        [first, size, operand = var_array_access::first(x),
         partials = std::shared_ptr<const double[]>(std::move(partials))](double* adjoints) {
            const double* const d = partials.get();
            pull_back<true>(adjoints, first, operand, size,
                            [d]<class L>(std::size_t j) { return load<L>(d + j); });
        });
    return var_array_access::make(std::move(values), size, first, on->generation());
}
template <int = 0>
var_array digamma(const var_array& x) {
    return polygamma(0, x);
}

// The arrays one after another (numpy's concatenate): one entry, whose pullback hands each part
// its adjoints back.
template <class... Rest>
requires(std::is_same_v<Rest, var_array>&&...) var_array
    concat(const var_array& first, const Rest&... rest) {
    using namespace detail;
    const std::array<const var_array*, 1 + sizeof...(Rest)> parts{&first, &rest...};
    std::size_t n = 0;
    for (const var_array* part : parts)
        n += part->size();
    array_memory::buffer values = array_memory::take(n);
    std::array<std::pair<tape_index, std::size_t>, 1 + sizeof...(Rest)> pieces{};
    std::size_t at = 0, k = 0;
    bool any = false;
    for (const var_array* part : parts) {
        std::copy(part->values().begin(), part->values().end(), values.get() + at);
        pieces[k++] = {var_array_access::first(*part), part->size()};
        at += part->size();
        any = any || !part->is_constant();
    }
    tape<double>* const on =
        any ? tape_for({{var_array_access::first(first), var_array_access::generation(first)},
                        {var_array_access::first(rest), var_array_access::generation(rest)}...})
            : nullptr;
    if (on == nullptr || n == 0)
        return var_array_access::make(std::move(values), n, 0, 0);
    const tape_index out = tape_access::add_variables(*on, n);
    tape_access::add_array_operation(
        *on, out, static_cast<tape_index>(n), [out, pieces](double* adjoints) {
            std::size_t offset = 0;
            for (const auto& [index, size] : pieces) {
                if (index != 0)
                    for (std::size_t i = 0; i < size; ++i)
                        adjoints[index + i] += adjoints[out + offset + i];
                offset += size;
            }
        });
    return var_array_access::make(std::move(values), n, out, on->generation());
}

// An array function with a derivative of the caller's, recorded as one entry: a function nabla
// has no rule for (a cumulative sum, a sort, a call into another library).
//   var_array y = nabla::custom_array(value, pullback, x, z);
// value(x, z) gets each argument's values as std::span<const double> and returns the result's
// (a std::vector<double>). pullback(x, z, y, dy, dx, dz) gets the arguments' and the result's
// values and the result's adjoint dy (spans of const double), and adds dy^T J into dx and dz,
// spans of double the size of their arguments (empty for a constant argument, which takes no
// adjoint). Without an active argument nothing is recorded.
template <class Value, class Pullback, class... Arrays>
requires(sizeof...(Arrays) > 0 && (std::is_same_v<Arrays, var_array> && ...)) var_array
    custom_array(const Value& value, const Pullback& pullback, const Arrays&... xs) {
    using namespace detail;
    static_assert(std::is_invocable_r_v<std::vector<double>, const Value&,
                                        decltype((void(xs), std::span<const double>{}))...>,
                  "nabla::custom_array: value(x...) takes each argument's values as "
                  "std::span<const double> and returns the result's values as a "
                  "std::vector<double>.");
    const std::vector<double> result = value(xs.values()...);
    const std::size_t n = result.size();
    array_memory::buffer values = array_memory::take(n);
    std::copy(result.begin(), result.end(), values.get());
    const bool any = (!xs.is_constant() || ...);
    tape<double>* const on =
        any ? tape_for({{var_array_access::first(xs), var_array_access::generation(xs)}...})
            : nullptr;
    if (on == nullptr || n == 0)
        return var_array_access::make(std::move(values), n, 0, 0);
    const tape_index out = tape_access::add_variables(*on, n);
    var_array y = var_array_access::make(values, n, out, on->generation());
    // The entry keeps the arguments' values and the result's (shared, not copied).
    tape_access::add_array_operation(
        *on, out, static_cast<tape_index>(n),
        [out, n, pullback, inputs = std::tuple{xs...}, kept = y](double* adjoints) {
            const std::span<const double> dy(adjoints + out, n);
            std::apply(
                [&](const auto&... x) {
                    const auto adjoint_of = [adjoints](const var_array& a) {
                        return a.is_constant()
                                   ? std::span<double>()
                                   : std::span<double>(adjoints + var_array_access::first(a),
                                                       a.size());
                    };
                    pullback(x.values()..., kept.values(), dy, adjoint_of(x)...);
                },
                inputs);
        });
    return y;
}

// Reductions, each one new variable.
template <int = 0>
var sum(const var_array& x) {
    return detail::reduce_on_tape<reduction::sum_kind>(x);
}
template <int = 0>
var mean(const var_array& x) {
    return detail::reduce_on_tape<reduction::mean_kind>(x);
}
template <int = 0>
var prod(const var_array& x) {
    return detail::reduce_on_tape<reduction::prod_kind>(x);
}
template <int = 0>
var max(const var_array& x) {
    return detail::reduce_on_tape<reduction::max_kind>(x);
}
template <int = 0>
var min(const var_array& x) {
    return detail::reduce_on_tape<reduction::min_kind>(x);
}
template <int = 0>
var amax(const var_array& x) {
    return max(x);
}
template <int = 0>
var amin(const var_array& x) {
    return min(x);
}
template <int = 0>
var norm(const var_array& x) {
    return detail::reduce_on_tape<reduction::norm_kind>(x);
}
template <int = 0>
var logsumexp(const var_array& x) {
    return detail::reduce_on_tape<reduction::logsumexp_kind>(x);
}
template <int = 0>
var dot(const var_array& a, const var_array& b) {
    return sum(a * b);
}

}  // namespace nabla
