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

template <class T>
class basic_var_array;
// An array of active doubles; basic_var_array<dual<double, N>> carries tangents too (second order:
// nabla::hvp and nabla::hessian with mode::arrays, and forward mode without a tape).
using var_array = basic_var_array<double>;

namespace detail {
struct var_array_access;

// Memory for the values and partials of arrays on the tape, given back to the thread that frees
// it and handed out again: a function recorded again finds its arrays' pages already there
// (fresh pages from the system cost a gradient of 10^5 elements several times its loops). At
// most 32 buffers and 512 MiB are kept per thread and element type.
template <class T>
class basic_array_memory {
public:
    using buffer = std::shared_ptr<T[]>;
    static buffer take(std::size_t n) {
        std::vector<spare>& spares = pool();
        std::size_t best = spares.size();
        for (std::size_t k = 0; k < spares.size(); ++k)
            if (spares[k].capacity >= n &&
                (best == spares.size() || spares[k].capacity < spares[best].capacity))
                best = k;
        if (best == spares.size())
            return {new T[n > 0 ? n : 1], giver{n}};
        spare chosen = std::move(spares[best]);
        spares.erase(spares.begin() + static_cast<std::ptrdiff_t>(best));
        kept() -= chosen.capacity;
        return {chosen.data.release(), giver{chosen.capacity}};
    }

private:
    struct spare {
        std::size_t capacity;
        std::unique_ptr<T[]> data;
    };
    struct giver {
        std::size_t capacity;
        void operator()(T* p) const { give_back(p, capacity); }
    };
    static constexpr std::size_t max_buffers = 32;
    static constexpr std::size_t max_elements = (std::size_t{512} << 20) / sizeof(T);
    static void give_back(T* p, std::size_t capacity) {
        if (!alive() || capacity > max_elements) {
            delete[] p;
            return;
        }
        std::vector<spare>& spares = pool();
        // Room is made by dropping the oldest spares.
        while (!spares.empty() &&
               (spares.size() >= max_buffers || kept() + capacity > max_elements)) {
            kept() -= spares.front().capacity;
            spares.erase(spares.begin());
        }
        spares.push_back({capacity, std::unique_ptr<T[]>(p)});
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

// The element types of arrays on the tape: double, with SIMD loops, or a dual number over double
// (nabla::dual<double, N>), whose loops are element by element.
template <class T>
concept ArrayElement = std::is_same_v<T, double> ||(DualLike<T>&& requires {
    requires std::is_same_v<typename T::value_type, double>;
    std::tuple_size<decltype(T::tangent)>::value;  // a fixed number of directions
});

// A buffer of n elements from the thread's pool of T.
template <class T>
std::shared_ptr<T[]> take_buffer(std::size_t n) {
    return basic_array_memory<T>::take(n);
}

using array_memory = basic_array_memory<double>;

}  // namespace detail

// A one-dimensional array of active numbers, T = double (nabla::var_array) or a dual number over
// double. Made by nabla::input_array (independent variables), by array operations on other
// arrays, or from a container of doubles (a constant array, recorded nowhere). Its values cannot
// be changed: an operation makes a new array.
template <class T>
class basic_var_array {
    static_assert(detail::ArrayElement<T>,
                  "nabla::basic_var_array<T>: T is double or nabla::dual<double, N>");

public:
    using value_type = active<T>;

    basic_var_array() = default;
    // A constant array with these values (implicit, so that data mixes with active arrays:
    // sum(x * weights)).
    template <class C>
    requires detail::ArrayArgument<C> basic_var_array(const C& values)  // NOLINT
        : values_(copy_of(values)),
          size_(static_cast<std::size_t>(values.size())) {}
    // The array of these variables (each element refers to its variable; one tape entry).
    explicit basic_var_array(std::span<const active<T>> elements);
    explicit basic_var_array(const std::vector<active<T>>& elements)
        : basic_var_array(std::span<const active<T>>(elements.data(), elements.size())) {}

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    // Element i's value, and all of them.
    T value(std::size_t i) const { return data()[i]; }
    std::span<const T> values() const { return {data(), size_}; }
    // Element i as an active variable (no new statement: it is the array's own variable).
    active<T> operator[](std::size_t i) const {
        return first_ == 0
                   ? active<T>(value(i))
                   : detail::tape_access::variable(
                         value(i), static_cast<detail::tape_index>(first_ + i), generation_);
    }
    active<T> operator()(std::size_t i) const { return (*this)[i]; }
    // Checked: a tape_error past the end.
    active<T> at(std::size_t i) const {
        if (i >= size_)
            detail::throw_tape_error(detail::message()
                                     << "var_array::at(" << i << "): the array has " << size_
                                     << " elements");
        return (*this)[i];
    }
    // Elements begin .. end - 1, sharing this array's values and variables (a shape_error unless
    // begin <= end <= size()).
    basic_var_array slice(std::size_t begin, std::size_t end) const {
        if (begin > end || end > size_)
            throw shape_error("nabla: var_array::slice(" + std::to_string(begin) + ", " +
                              std::to_string(end) + ") of an array of " + std::to_string(size_) +
                              " elements");
        basic_var_array view = *this;
        view.offset_ = offset_ + begin;
        view.size_ = end - begin;
        if (first_ != 0)
            view.first_ = static_cast<detail::tape_index>(first_ + begin);
        return view;
    }
    // The compile-time views of static array expressions work here too: x(nabla::from<1>).
    template <std::size_t Begin, long End>
    basic_var_array operator()(nabla::slice<Begin, End>) const {
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
        using value_type = active<T>;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        iterator(const basic_var_array* a, std::size_t i) : array_(a), i_(i) {}
        active<T> operator*() const { return (*array_)[i_]; }
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
        const basic_var_array* array_ = nullptr;
        std::size_t i_ = 0;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size_}; }

private:
    friend struct detail::var_array_access;

    const T* data() const { return values_ ? values_.get() + offset_ : nullptr; }
    template <class C>
    static std::shared_ptr<T[]> copy_of(const C& values) {
        detail::check_array_argument(values, 0);
        const auto n = static_cast<std::size_t>(values.size());
        std::shared_ptr<T[]> b = detail::take_buffer<T>(n);
        std::copy(detail::first_element(values), detail::first_element(values) + n, b.get());
        return b;
    }

    std::shared_ptr<const T[]> values_;
    std::size_t offset_ = 0;
    std::size_t size_ = 0;
    detail::tape_index first_ = 0;  // the variable of element 0; 0: a constant
    std::uint32_t generation_ = 0;
};

template <class T>
inline constexpr bool is_var_array_v = false;
template <class T>
inline constexpr bool is_var_array_v<basic_var_array<T>> = true;

namespace detail {

struct var_array_access {
    template <class T>
    static basic_var_array<T>
    make(std::shared_ptr<const T[]> values, std::size_t n, tape_index first, std::uint32_t g) {
        basic_var_array<T> a;
        a.size_ = n;
        a.values_ = std::move(values);
        a.first_ = first;
        a.generation_ = g;
        return a;
    }
    template <class T>
    static const T* data(const basic_var_array<T>& a) {
        return a.data();
    }
    template <class T>
    static tape_index first(const basic_var_array<T>& a) {
        return a.first_;
    }
    template <class T>
    static std::uint32_t generation(const basic_var_array<T>& a) {
        return a.generation_;
    }
    // The values, kept alive for a pullback, and where this view starts in them.
    template <class T>
    static std::shared_ptr<const T[]> values(const basic_var_array<T>& a) {
        return a.values_;
    }
};

// The tape an operation on these operands records on: the thread's active tape when any operand
// is active (after checking that each is of its current recording), null when all are constants.
template <class T = double>
tape<T>* tape_for(std::initializer_list<std::pair<tape_index, std::uint32_t>> ops) {
    tape<T>* on = active_tape<T>;
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

// An operand of an element-wise operation: an array (read at every element), a variable
// broadcast to every element, or a plain number (a constant: on dual elements it stays a plain
// number, so that no partial is taken with respect to it, as with dual numbers).
template <class T>
struct array_side {
    const T* values;
    std::size_t size;
    tape_index index;
    std::uint32_t generation;
    std::shared_ptr<const T[]> keep;  // for partials recomputed in the sweep
    static constexpr bool is_array = true;
    template <class L>
    NABLA_ALWAYS_INLINE L at(std::size_t i) const {
        return load<L>(values + i);
    }
};
template <class T>
struct scalar_side {
    T value;
    tape_index index;
    std::uint32_t generation;
    static constexpr bool is_array = false;
    template <class L>
    NABLA_ALWAYS_INLINE L at(std::size_t) const {
        return L(value);
    }
};
struct constant_side {
    double value;
    tape_index index = 0;
    std::uint32_t generation = 0;
    static constexpr bool is_array = false;
    template <class L>
    NABLA_ALWAYS_INLINE auto at(std::size_t) const {
        if constexpr (DualLike<L>)
            return value;
        else
            return L(value);
    }
};

template <class T>
array_side<T> side_of(const basic_var_array<T>& a) {
    return {var_array_access::data(a), a.size(), var_array_access::first(a),
            var_array_access::generation(a), var_array_access::values(a)};
}
template <class T>
scalar_side<T> side_of(const active<T>& v) {
    return {v.value, v.index(), v.generation()};
}
inline constant_side side_of(double v) {
    return {v};
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

// adjoint * partial, except that a zero adjoint gives 0 even through an infinite partial (on
// dual numbers, an adjoint whose value and tangents all are zero).
template <class L>
NABLA_ALWAYS_INLINE L pulled(const L& adjoint, const L& partial) {
    if constexpr (DualLike<L>) {
        return exactly_zero(adjoint) ? L(0.0) : adjoint * partial;
    } else {
        using rules::select;
        return select(adjoint == L(0.0), L(0.0), adjoint * partial);
    }
}

// Whether loops over elements of type T run in SIMD lanes.
template <class T>
inline constexpr bool in_lanes = NABLA_ARRAY_LANES&& std::is_same_v<T, double>;

// Pulls the outputs' adjoints back into one operand: into each element's (an array), or summed
// into one variable (a broadcast number). `partial(i)` gives the partials at element i as lanes.
template <bool IsArray, class T, class Partial>
void pull_back(
    T* adjoints, tape_index output, tape_index operand, std::size_t n, const Partial& partial) {
    const T* const out = adjoints + output;
    T* const in = adjoints + operand;
    std::size_t i = 0;
    if constexpr (IsArray) {
        if constexpr (in_lanes<T>)
            for (; i + width<lanes> <= n; i += width<lanes>)
                add_to(in + i, pulled(load<lanes>(out + i), partial.template operator()<lanes>(i)));
        for (; i < n; ++i)
            in[i] += pulled(out[i], partial.template operator()<T>(i));
    } else {
        T total(0.0);
        if constexpr (in_lanes<T>) {
            lanes sum(0.0);
            for (; i + width<lanes> <= n; i += width<lanes>)
                sum += pulled(load<lanes>(out + i), partial.template operator()<lanes>(i));
            total = add_lanes(sum);
        }
        for (; i < n; ++i)
            total += pulled(out[i], partial.template operator()<T>(i));
        *in += total;
    }
}

// Runs step<L>(i) over 0 .. n - 1: in SIMD lanes, then the rest one by one, for doubles; one by
// one for dual elements.
template <class T, class Step>
NABLA_ALWAYS_INLINE void for_elements(std::size_t n, const Step& step) {
    std::size_t i = 0;
    if constexpr (in_lanes<T>)
        for (; i + width<lanes> <= n; i += width<lanes>)
            step.template operator()<lanes>(i);
    for (; i < n; ++i)
        step.template operator()<T>(i);
}

// An element-wise operation: its values in one loop, with the partials of the active operands
// kept as arrays where they cost more to recompute than to read back (rules::cheap_partials;
// constants are never kept), and one tape entry whose pullback is one loop per active operand.
template <class Rule, class T, class... Operands>
basic_var_array<T> elementwise(const Operands&... operands) {
    constexpr std::size_t arity = sizeof...(Operands);
    const std::tuple sides{side_of(operands)...};
    const std::size_t n = std::apply([](const auto&... s) { return common_length(s...); }, sides);
    tape<T>* const on = std::apply(
        [](const auto&... s) {
            return tape_for<T>({{s.index, s.generation}...});
        },
        sides);
    const std::array<bool, arity> active = std::apply(
        [on](const auto&... s) {
            return std::array<bool, arity>{(on != nullptr && s.index != 0)...};
        },
        sides);

    std::shared_ptr<T[]> values = take_buffer<T>(n);
    std::array<std::shared_ptr<T[]>, arity> partials;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((active[I] && !constant_partial<Rule, I, arity> && !rules::cheap_partials<Rule>
              ? void(partials[I] = take_buffer<T>(n))
              : void()),
         ...);
    }
    (std::make_index_sequence<arity>{});

    for_elements<T>(n, [&]<class L>(std::size_t i) {
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
    });

    if (on == nullptr || n == 0)
        return var_array_access::make<T>(std::move(values), n, 0, 0);
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
         kept = rules::cheap_partials<Rule> ? values : std::shared_ptr<T[]>{}](T* adjoints) {
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
                        const T* y = kept.get();
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
                        const T* d = partials[K].get();
                        pull_back<is_array>(adjoints, first, side.index, n,
                                            [d]<class L>(std::size_t j) { return load<L>(d + j); });
                    }
                };
                (one.template operator()<I>(), ...);
            }
            (std::make_index_sequence<arity>{});
        });
    return var_array_access::make<T>(std::move(values), n, first, on->generation());
}

// Records a reduction's result, one new variable, with an entry whose pullback adds
// seed(adjoint, j) into element j's adjoint; a constant without a tape or for an empty array.
template <class T, class Seed>
active<T> record_reduction(const basic_var_array<T>& x, const T& result, Seed&& seed) {
    tape<T>* const on =
        tape_for<T>({{var_array_access::first(x), var_array_access::generation(x)}});
    if (on == nullptr || x.empty())
        return active<T>(result);
    const tape_index out = tape_access::add_variables(*on, 1);
    tape_access::add_array_operation(*on, out, 1,
                                     [out, n = x.size(), operand = var_array_access::first(x),
                                      seed = std::forward<Seed>(seed)](T* adjoints) {
                                         const T a = adjoints[out];
                                         if (exactly_zero(a))
                                             return;
                                         T* const in = adjoints + operand;
                                         std::size_t j = 0;
                                         if constexpr (in_lanes<T>)
                                             for (; j + width<lanes> <= n; j += width<lanes>)
                                                 add_to(in + j,
                                                        seed.template operator()<lanes>(a, j));
                                         for (; j < n; ++j)
                                             in[j] += seed.template operator()<T>(a, j);
                                     });
    return tape_access::variable(result, out, on->generation());
}

// A reduction of doubles: its value in one loop with four accumulators (the kinds of
// array/reductions.hpp, merged in a fixed order), and the kind's seed in the pullback.
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
    auto keep = var_array_access::values(x);
    const auto offset = static_cast<std::size_t>(v - keep.get());
    return record_reduction(
        x, result,
        [n, total, result, offset, keep = std::move(keep)]<class L>(double a, std::size_t j) {
            return Kind::seed(load<L>(keep.get() + offset + j), total, result, a, n);
        });
}

// A reduction of dual numbers, in their arithmetic (so that the pullback's seeds carry their
// own derivatives, for second order): the value, and the gradient kept whole for the pullback.
template <class Kind, class T>
active<T> reduce_duals(const basic_var_array<T>& x);

}  // namespace detail

namespace detail {

// The value of a reduction of dual numbers v[0 .. n - 1] in their own arithmetic, with its
// gradient into g (the seeds for an adjoint of 1), by the kind's conventions for doubles: ties of
// max and min share the gradient (and their value's tangent is the ties' mean), the gradient of
// norm at 0 is 0, prod's is exact at zeros (products of the others, from both ends).
template <class Kind, class T>
T dual_reduction(const T* v, std::size_t n, T* g) {
    const T one(1.0);
    // NaN in the value and every tangent, as in the gradient.
    const auto not_a_number = [g, n] {
        T r(nan);
        for (auto& t : r.tangent)
            t = nan;
        std::fill(g, g + n, r);
        return r;
    };
    if constexpr (std::is_same_v<Kind, reduction::sum_kind> ||
                  std::is_same_v<Kind, reduction::mean_kind>) {
        T total(0.0);
        for (std::size_t i = 0; i < n; ++i)
            total += v[i];
        const double scale =
            std::is_same_v<Kind, reduction::mean_kind> ? 1.0 / static_cast<double>(n) : 1.0;
        std::fill(g, g + n, T(scale));
        return std::is_same_v<Kind, reduction::mean_kind> ? total / static_cast<double>(n) : total;
    } else if constexpr (std::is_same_v<Kind, reduction::prod_kind>) {
        // g[i] = (v[0] ... v[i-1]) (v[i+1] ... v[n-1]).
        T before = one;
        for (std::size_t i = 0; i < n; ++i) {
            g[i] = before;
            before *= v[i];
        }
        T after = one;
        for (std::size_t i = n; i-- > 0;) {
            g[i] *= after;
            after *= v[i];
        }
        return before;
    } else if constexpr (std::is_same_v<Kind, reduction::norm_kind>) {
        T squares(0.0);
        for (std::size_t i = 0; i < n; ++i)
            squares += v[i] * v[i];
        if (squares.value == 0.0) {
            std::fill(g, g + n, T(0.0));
            return T(0.0);
        }
        using std::sqrt;
        const T r = sqrt(squares);
        for (std::size_t i = 0; i < n; ++i)
            g[i] = v[i] / r;
        return r;
    } else if constexpr (std::is_same_v<Kind, reduction::logsumexp_kind>) {
        // y = m + log(sum(exp(v - m))) for the largest value m, a constant; an element equal to
        // m (infinite ones too) contributes exp of its tangent alone.
        double m = -inf;
        bool nan_found = false;
        for (std::size_t i = 0; i < n; ++i) {
            nan_found = nan_found || v[i].value != v[i].value;
            m = v[i].value > m ? v[i].value : m;
        }
        if (nan_found)
            return not_a_number();
        using std::exp;
        using std::log;
        T total(0.0);
        for (std::size_t i = 0; i < n; ++i) {
            T d = v[i] - m;
            if (v[i].value == m)
                d.value = 0.0;
            g[i] = exp(d);
            total += g[i];
        }
        for (std::size_t i = 0; i < n; ++i)
            g[i] = g[i] / total;
        return log(total) + m;
    } else {
        static_assert(std::is_same_v<Kind, reduction::max_kind> ||
                      std::is_same_v<Kind, reduction::min_kind>);
        constexpr bool greater = std::is_same_v<Kind, reduction::max_kind>;
        double best = greater ? -inf : inf;
        for (std::size_t i = 0; i < n; ++i) {
            const double x = v[i].value;
            if (x != x)
                return not_a_number();
            best = (greater ? x > best : x < best) ? x : best;
        }
        std::size_t ties = 0;
        for (std::size_t i = 0; i < n; ++i)
            ties += v[i].value == best ? 1 : 0;
        const double weight = 1.0 / static_cast<double>(ties);
        T result(0.0);
        for (std::size_t i = 0; i < n; ++i) {
            g[i] = T(v[i].value == best ? weight : 0.0);
            if (v[i].value == best)
                result += v[i] * weight;
        }
        result.value = best;
        return result;
    }
}

template <class Kind, class T>
active<T> reduce_duals(const basic_var_array<T>& x) {
    const std::size_t n = x.size();
    if (n == 0)
        return active<T>(T(Kind::result(typename Kind::template state<double>{}, 0)));
    std::shared_ptr<T[]> gradient = take_buffer<T>(n);
    const T result = dual_reduction<Kind>(var_array_access::data(x), n, gradient.get());
    return record_reduction(x, result,
                            [gradient = std::shared_ptr<const T[]>(std::move(gradient))]<class L>(
                                const T& a, std::size_t j) { return a * gradient[j]; });
}

template <class Kind, class T>
active<T> reduce(const basic_var_array<T>& x) {
    if constexpr (std::is_same_v<T, double>)
        return reduce_on_tape<Kind>(x);
    else
        return reduce_duals<Kind>(x);
}

}  // namespace detail

template <class T>
basic_var_array<T>::basic_var_array(std::span<const active<T>> elements) {
    std::shared_ptr<T[]> values = detail::take_buffer<T>(elements.size());
    std::vector<detail::tape_index> sources(elements.size());
    tape<T>* on = detail::active_tape<T>;
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
        [first = first_, sources = std::move(sources)](T* adjoints) {
            for (std::size_t k = 0; k < sources.size(); ++k)
                adjoints[sources[k]] += adjoints[first + k];
        });
}

namespace detail {

// n new independent variables on t with these values (shared, not copied).
template <class T>
basic_var_array<T> input_values(tape<T>& t, std::shared_ptr<const T[]> values, std::size_t n) {
    if (n == 0)
        return var_array_access::make<T>(std::move(values), 0, 0, 0);
    const tape_index index = tape_access::add_variables(t, n);
    return var_array_access::make<T>(std::move(values), n, index, t.generation());
}

// n new independent variables whose values are read in place from the caller's memory, not
// copied: for a transformation whose recording ends before it returns to the caller.
template <class T>
basic_var_array<T> input_in_place(tape<T>& t, const T* values, std::size_t n) {
    return input_values<T>(t, std::shared_ptr<const T[]>(std::shared_ptr<const void>(), values), n);
}

}  // namespace detail

// n new independent variables with these values, recorded one after another on t.
template <class C>
requires detail::ArrayArgument<C> var_array input_array(tape<double>& t, const C& values) {
    detail::check_array_argument(values, 0);
    const double* const first = detail::first_element(values);
    const auto n = static_cast<std::size_t>(values.size());
    detail::array_memory::buffer kept = detail::array_memory::take(n);
    std::copy(first, first + n, kept.get());
    return detail::input_values<double>(t, std::move(kept), n);
}

namespace detail {

// The adjoints of x's elements after a sweep of t, into g (of x's length; left alone for a
// constant array).
template <class G>
void read_array_adjoints(const tape<double>& t, const var_array& x, G& g) {
    if (x.empty() || x.is_constant())
        return;
    const std::span<const double> a = t.adjoints_from(x[0], x.size());
    std::copy(a.begin(), a.end(), g.data());
}

// An operand that mixes with an array of T in element-wise operations: a plain number, an active
// scalar of T or an expression of them (broadcast), or a container of doubles (a constant array).
template <class S, class T>
concept ArrayOperandFor =
    !is_var_array_v<std::remove_cvref_t<S>> &&
    (std::is_arithmetic_v<S> || std::is_same_v<S, active<T>> || ArrayArgument<S> ||
     (ActiveExpression<S> && std::is_same_v<active_value_t<S>, T>));

template <class T, class S>
auto operand_for(const S& s) {
    if constexpr (std::is_arithmetic_v<S>)
        return static_cast<double>(s);
    else if constexpr (ArrayArgument<S>)
        return basic_var_array<T>(s);
    else
        return active<T>(s);
}

}  // namespace detail

// The adjoints of x's elements after a sweep of t (zeros for a constant array).
inline std::vector<double> adjoints(const tape<double>& t, const var_array& x) {
    std::vector<double> out(x.size());
    detail::read_array_adjoints(t, x, out);
    return out;
}

// Element-wise arithmetic and functions, with arrays, numbers, variables and containers of
// doubles as operands. Each is a template, so that only the functions a program calls are
// compiled: as plain functions they cost every translation unit 3.5 s.
#define NABLA_VAR_ARRAY_BINARY(name, rule)                                                         \
    template <class T>                                                                             \
    basic_var_array<T> name(const basic_var_array<T>& a, const basic_var_array<T>& b) {            \
        return detail::elementwise<rules::rule, T>(a, b);                                          \
    }                                                                                              \
    template <class T, detail::ArrayOperandFor<T> S>                                               \
    basic_var_array<T> name(const basic_var_array<T>& a, const S& b) {                             \
        return detail::elementwise<rules::rule, T>(a, detail::operand_for<T>(b));                  \
    }                                                                                              \
    template <class T, detail::ArrayOperandFor<T> S>                                               \
    basic_var_array<T> name(const S& a, const basic_var_array<T>& b) {                             \
        return detail::elementwise<rules::rule, T>(detail::operand_for<T>(a), b);                  \
    }

NABLA_VAR_ARRAY_BINARY(operator+, add_rule)
NABLA_VAR_ARRAY_BINARY(operator-, sub_rule)
NABLA_VAR_ARRAY_BINARY(operator*, mul_rule)
NABLA_VAR_ARRAY_BINARY(operator/, div_rule)
NABLA_VAR_ARRAY_BINARY(pow, pow_rule)
#define NABLA_VAR_ARRAY_FUNCTION(name, rule) NABLA_VAR_ARRAY_BINARY(name, rule)
NABLA_BINARY_FUNCTIONS(NABLA_VAR_ARRAY_FUNCTION)
#undef NABLA_VAR_ARRAY_FUNCTION

template <class T>
basic_var_array<T> operator-(const basic_var_array<T>& a) {
    return detail::elementwise<rules::neg_rule, T>(a);
}
template <class T>
basic_var_array<T> operator+(const basic_var_array<T>& a) {
    return a;
}
#define NABLA_VAR_ARRAY_UNARY(name, rule)                                                          \
    template <class T>                                                                             \
    basic_var_array<T> name(const basic_var_array<T>& a) {                                         \
        return detail::elementwise<rules::rule, T>(a);                                             \
    }
NABLA_UNARY_FUNCTIONS(NABLA_VAR_ARRAY_UNARY)
#undef NABLA_VAR_ARRAY_UNARY
#undef NABLA_VAR_ARRAY_BINARY

template <class T>
basic_var_array<T> square(const basic_var_array<T>& a) {
    return a * a;
}
template <class T>
basic_var_array<T>
fma(const basic_var_array<T>& a, const basic_var_array<T>& b, const basic_var_array<T>& c) {
    return detail::elementwise<rules::fma_rule, T>(a, b, c);
}
template <class T>
basic_var_array<T>
hypot(const basic_var_array<T>& a, const basic_var_array<T>& b, const basic_var_array<T>& c) {
    return detail::elementwise<rules::hypot3_rule, T>(a, b, c);
}
template <class T>
basic_var_array<T>
ellint_3(const basic_var_array<T>& k, const basic_var_array<T>& nu, const basic_var_array<T>& phi) {
    return detail::elementwise<rules::ellint_3_rule, T>(k, nu, phi);
}

namespace detail {
// f(c..., x) element by element for constants c (an index, a parameter), differentiable in x.
template <class Rule, class T, class... C>
basic_var_array<T> elementwise_last(const basic_var_array<T>& x, const C&... c) {
    const std::size_t size = x.size();
    const T* const v = var_array_access::data(x);
    tape<T>* const on =
        tape_for<T>({{var_array_access::first(x), var_array_access::generation(x)}});
    std::shared_ptr<T[]> values = take_buffer<T>(size);
    std::shared_ptr<T[]> partials = on != nullptr ? take_buffer<T>(size) : nullptr;
    for (std::size_t i = 0; i < size; ++i) {
        values[i] = rules::value_on<Rule>(c..., v[i]);
        if (partials)
            partials[i] =
                to_number<T>(rules::partial_on<Rule, sizeof...(C)>(values[i], c..., v[i]));
    }
    if (on == nullptr || size == 0)
        return var_array_access::make<T>(std::move(values), size, 0, 0);
    const tape_index first = tape_access::add_variables(*on, size);
    tape_access::add_array_operation(
        *on, first, static_cast<tape_index>(size),
        [first, size, operand = var_array_access::first(x),
         partials = std::shared_ptr<const T[]>(std::move(partials))](T* adjoints) {
            const T* const d = partials.get();
            pull_back<true>(adjoints, first, operand, size,
                            [d]<class L>(std::size_t j) { return load<L>(d + j); });
        });
    return var_array_access::make<T>(std::move(values), size, first, on->generation());
}
}  // namespace detail

// f(n, x) element by element for a constant index n, an integer or a real order (not
// differentiable): polygamma, hermite, cyl_bessel_j, ...; and digamma.
#define NABLA_VAR_ARRAY_INDEXED(function, rule)                                                    \
    template <class T, class I>                                                                    \
    requires rules::index_argument<rules::rule, I> basic_var_array<T> function(                    \
        I index, const basic_var_array<T>& x) {                                                    \
        return detail::elementwise_last<rules::rule>(x, rules::index_cast<rules::rule, T>(index)); \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_VAR_ARRAY_INDEXED)
#undef NABLA_VAR_ARRAY_INDEXED
// f(n, a, x) element by element for a constant integer degree n and a constant parameter a.
#define NABLA_VAR_ARRAY_PARAMETRIC(function, rule)                                                 \
    template <class T, class I, class A>                                                           \
    requires(std::is_integral_v<I> && std::is_arithmetic_v<A>) basic_var_array<T> function(        \
        I n, A a, const basic_var_array<T>& x) {                                                   \
        return detail::elementwise_last<rules::rule>(x, static_cast<int>(n), T(a));                \
    }
NABLA_PARAMETRIC_FUNCTIONS(NABLA_VAR_ARRAY_PARAMETRIC)
#undef NABLA_VAR_ARRAY_PARAMETRIC
template <class T>
basic_var_array<T> digamma(const basic_var_array<T>& x) {
    return polygamma(0, x);
}

// The arrays one after another (numpy's concatenate): one entry, whose pullback hands each part
// its adjoints back.
template <class T, class... Rest>
requires(std::is_same_v<Rest, basic_var_array<T>>&&...)
    basic_var_array<T> concat(const basic_var_array<T>& first, const Rest&... rest) {
    using namespace detail;
    const std::array<const basic_var_array<T>*, 1 + sizeof...(Rest)> parts{&first, &rest...};
    std::size_t n = 0;
    for (const basic_var_array<T>* part : parts)
        n += part->size();
    std::shared_ptr<T[]> values = take_buffer<T>(n);
    std::array<std::pair<tape_index, std::size_t>, 1 + sizeof...(Rest)> pieces{};
    std::size_t at = 0, k = 0;
    bool any = false;
    for (const basic_var_array<T>* part : parts) {
        std::copy(part->values().begin(), part->values().end(), values.get() + at);
        pieces[k++] = {var_array_access::first(*part), part->size()};
        at += part->size();
        any = any || !part->is_constant();
    }
    tape<T>* const on =
        any ? tape_for<T>({{var_array_access::first(first), var_array_access::generation(first)},
                           {var_array_access::first(rest), var_array_access::generation(rest)}...})
            : nullptr;
    if (on == nullptr || n == 0)
        return var_array_access::make<T>(std::move(values), n, 0, 0);
    const tape_index out = tape_access::add_variables(*on, n);
    tape_access::add_array_operation(
        *on, out, static_cast<tape_index>(n), [out, pieces](T* adjoints) {
            std::size_t offset = 0;
            for (const auto& [index, size] : pieces) {
                if (index != 0)
                    for (std::size_t i = 0; i < size; ++i)
                        adjoints[index + i] += adjoints[out + offset + i];
                offset += size;
            }
        });
    return var_array_access::make<T>(std::move(values), n, out, on->generation());
}

namespace detail {

// The entry of a custom array function whose n values are in `values`.
template <class Pullback, class... Arrays>
var_array record_custom(array_memory::buffer values,
                        std::size_t n,
                        const Pullback& pullback,
                        const Arrays&... xs) {
    const bool any = (!xs.is_constant() || ...);
    tape<double>* const on =
        any ? tape_for({{var_array_access::first(xs), var_array_access::generation(xs)}...})
            : nullptr;
    if (on == nullptr || n == 0)
        return var_array_access::make<double>(std::move(values), n, 0, 0);
    const tape_index out = tape_access::add_variables(*on, n);
    var_array y = var_array_access::make<double>(values, n, out, on->generation());
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

}  // namespace detail

// An array function with a derivative of the caller's, recorded as one entry: a function nabla
// has no rule for (a cumulative sum, a sort, a call into another library).
//   var_array y = nabla::custom_array(value, pullback, x, z);
// value(x, z) gets each argument's values as std::span<const double> and returns the result's
// (a std::vector<double>). pullback(x, z, y, dy, dx, dz) gets the arguments' and the result's
// values and the result's adjoint dy (spans of const double), and adds dy^T J into dx and dz,
// spans of double the size of their arguments (empty for a constant argument, which takes no
// adjoint). Without an active argument nothing is recorded.
template <class Value, class Pullback, class... Arrays>
requires(sizeof...(Arrays) > 0 && (is_var_array_v<Arrays> && ...)) var_array
    custom_array(const Value& value, const Pullback& pullback, const Arrays&... xs) {
    using namespace detail;
    static_assert((std::is_same_v<Arrays, var_array> && ...),
                  "nabla::custom_array: a custom array function has a first derivative only (its "
                  "pullback), so nabla::hvp, nabla::hessian and nabla::jvp with mode::arrays "
                  "cannot go through it; use it with grad, vjp and jacobian.");
    static_assert(std::is_invocable_r_v<std::vector<double>, const Value&,
                                        decltype((void(xs), std::span<const double>{}))...>,
                  "nabla::custom_array: value(x...) takes each argument's values as "
                  "std::span<const double> and returns the result's values as a "
                  "std::vector<double>.");
    const std::vector<double> result = value(xs.values()...);
    const std::size_t n = result.size();
    array_memory::buffer values = array_memory::take(n);
    std::copy(result.begin(), result.end(), values.get());
    return record_custom(std::move(values), n, pullback, xs...);
}

// The same with a result of n elements that value writes in place: value(y, x, z) gets y, a
// std::span<double> of n elements (memory the tape reuses, holding anything), and the arguments'
// values, and writes every element of y.
//   var_array y = nabla::custom_array(n, value, pullback, x, z);
template <class Value, class Pullback, class... Arrays>
requires(sizeof...(Arrays) > 0 && (is_var_array_v<Arrays> && ...)) var_array
    custom_array(std::size_t n, const Value& value, const Pullback& pullback, const Arrays&... xs) {
    using namespace detail;
    static_assert((std::is_same_v<Arrays, var_array> && ...),
                  "nabla::custom_array: a custom array function has a first derivative only (its "
                  "pullback), so nabla::hvp, nabla::hessian and nabla::jvp with mode::arrays "
                  "cannot go through it; use it with grad, vjp and jacobian.");
    static_assert(std::is_invocable_v<const Value&, std::span<double>,
                                      decltype((void(xs), std::span<const double>{}))...>,
                  "nabla::custom_array(n, value, pullback, x...): value(y, x...) takes the "
                  "result's n elements as a std::span<double> to write and each argument's "
                  "values as std::span<const double>.");
    array_memory::buffer values = array_memory::take(n);
    value(std::span<double>(values.get(), n), xs.values()...);
    return record_custom(std::move(values), n, pullback, xs...);
}

// Reductions, each one new variable.
#define NABLA_VAR_ARRAY_REDUCTION(name, kind)                                                      \
    template <class T>                                                                             \
    active<T> name(const basic_var_array<T>& x) {                                                  \
        return detail::reduce<reduction::kind>(x);                                                 \
    }
NABLA_VAR_ARRAY_REDUCTION(sum, sum_kind)
NABLA_VAR_ARRAY_REDUCTION(mean, mean_kind)
NABLA_VAR_ARRAY_REDUCTION(prod, prod_kind)
NABLA_VAR_ARRAY_REDUCTION(max, max_kind)
NABLA_VAR_ARRAY_REDUCTION(min, min_kind)
NABLA_VAR_ARRAY_REDUCTION(amax, max_kind)
NABLA_VAR_ARRAY_REDUCTION(amin, min_kind)
NABLA_VAR_ARRAY_REDUCTION(norm, norm_kind)
NABLA_VAR_ARRAY_REDUCTION(logsumexp, logsumexp_kind)
#undef NABLA_VAR_ARRAY_REDUCTION
template <class T>
active<T> dot(const basic_var_array<T>& a, const std::type_identity_t<basic_var_array<T>>& b) {
    return sum(a * b);
}
template <class T, detail::ArrayArgument C>
active<T> dot(const C& a, const basic_var_array<T>& b) {
    return sum(a * b);
}

}  // namespace nabla
