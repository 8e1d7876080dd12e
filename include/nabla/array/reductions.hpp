#pragma once
// Reductions of array expressions: sum, mean, prod, max, min, norm, dot and logsumexp.
//
// A kind says how a reduction accumulates (a state per lane of a batch, merged across lanes and
// accumulators at the end, in a fixed order so results do not depend on timing) and what adjoint
// each element receives, its seed, when the reduction's own adjoint is known. The element
// expression's partials then come from the rules, in the same loop.
//
// Conventions (docs/arrays.md): max and min of an array holding a NaN are NaN, and so is their
// gradient; ties share the adjoint equally; max of an empty array is -inf, min +inf, mean NaN.
// prod's gradient is exact with zeros in the array (one zero: only that element's entry is
// nonzero). norm's gradient at the zero vector is 0. logsumexp accumulates in one pass, rescaling
// when the running maximum grows, and is +inf when an element is +inf.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "../config.hpp"
#include "../core/build.hpp"
#include "../rules/exp_log.hpp"
#include "../rules/rule.hpp"
#include "expression.hpp"

namespace nabla {

namespace detail {

template <class L>
NABLA_ALWAYS_INLINE double lane_of(const L& x, std::size_t k) {
    if constexpr (std::is_same_v<L, double>) {
        return x;
    } else {
        std::array<double, L::size> lanes{};
        x.store_unaligned(lanes.data());
        return lanes[k];
    }
}

template <class M>
NABLA_ALWAYS_INLINE bool any_lane(const M& mask) {
    if constexpr (std::is_same_v<M, bool>)
        return mask;
    else
        return any(mask);
}

template <class L, class M>
NABLA_ALWAYS_INLINE L pick(const M& mask, const L& a, const L& b) {
    using rules::select;
    return select(mask, a, b);
}

inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr double nan = std::numeric_limits<double>::quiet_NaN();

}  // namespace detail

namespace reduction {

struct sum_kind {
    static constexpr const char* name = "sum";
    template <class L>
    struct state {
        L total = L(0.0);
        NABLA_ALWAYS_INLINE void add(const L& v) { total += v; }
        NABLA_ALWAYS_INLINE void merge(const state& o) { total += o.total; }
        state<double> lane(std::size_t k) const { return {detail::lane_of(total, k)}; }
    };
    static double result(const state<double>& s, std::size_t) { return s.total; }
    template <class L>
    NABLA_ALWAYS_INLINE static L
    seed(const L&, const state<double>&, double, double adjoint, std::size_t) {
        return L(adjoint);
    }
    // The seed factored as scale * shape(v), the shape known in the forward loop: the gradient
    // can then be taken in that loop and scaled once the adjoint is known. (The second argument
    // is the result of a kind's prepass, where it has one.)
    template <class L>
    NABLA_ALWAYS_INLINE static L shape(const L&, double) {
        return L(1.0);
    }
    static double scale(const state<double>&, double, double adjoint, std::size_t) {
        return adjoint;
    }
};

struct mean_kind : sum_kind {
    static constexpr const char* name = "mean";
    static double result(const state<double>& s, std::size_t n) {
        return s.total / static_cast<double>(n);
    }
    template <class L>
    NABLA_ALWAYS_INLINE static L
    seed(const L&, const state<double>&, double, double adjoint, std::size_t n) {
        return L(adjoint / static_cast<double>(n));
    }
    static double scale(const state<double>&, double, double adjoint, std::size_t n) {
        return adjoint / static_cast<double>(n);
    }
};

// The product of the nonzero elements and the number of zeros, so that the gradient stays exact
// where elements are zero.
struct prod_kind {
    static constexpr const char* name = "prod";
    template <class L>
    struct state {
        L product = L(1.0);
        L zeros = L(0.0);
        NABLA_ALWAYS_INLINE void add(const L& v) {
            const auto zero = v == L(0.0);
            zeros += detail::pick(zero, L(1.0), L(0.0));
            product *= detail::pick(zero, L(1.0), v);
        }
        NABLA_ALWAYS_INLINE void merge(const state& o) {
            product *= o.product;
            zeros += o.zeros;
        }
        state<double> lane(std::size_t k) const {
            return {detail::lane_of(product, k), detail::lane_of(zeros, k)};
        }
    };
    // An infinite or NaN factor times a zero is NaN, as in IEEE arithmetic.
    static double result(const state<double>& s, std::size_t) {
        return s.zeros > 0.0 ? s.product * 0.0 : s.product;
    }
    template <class L>
    NABLA_ALWAYS_INLINE static L
    seed(const L& v, const state<double>& s, double, double adjoint, std::size_t) {
        if (s.zeros == 0.0)
            return L(adjoint * s.product) / v;
        if (s.zeros == 1.0)
            return detail::pick(v == L(0.0), L(adjoint * s.product), L(0.0));
        return L(0.0);
    }
};

// max (Greater = true) and min: the extreme and how many elements reach it, per lane; a NaN
// sticks.
template <bool Greater>
struct extreme_kind {
    static constexpr const char* name = Greater ? "max" : "min";
    template <class L>
    NABLA_ALWAYS_INLINE static auto beats(const L& a, const L& b) {
        if constexpr (Greater)
            return a > b;
        else
            return a < b;
    }
    template <class L>
    struct state {
        L best = L(Greater ? -detail::inf : detail::inf);
        L count = L(0.0);
        NABLA_ALWAYS_INLINE void add(const L& v) { take(v, L(1.0)); }
        NABLA_ALWAYS_INLINE void merge(const state& o) { take(o.best, o.count); }
        NABLA_ALWAYS_INLINE void take(const L& v, const L& c) {
            const auto better = beats(v, best);
            count = detail::pick(better, c, detail::pick(v == best, count + c, count));
            best = detail::pick(better || rules::is_nan(v), v, best);
        }
        state<double> lane(std::size_t k) const {
            return {detail::lane_of(best, k), detail::lane_of(count, k)};
        }
    };
    static double result(const state<double>& s, std::size_t) { return s.best; }
    template <class L>
    NABLA_ALWAYS_INLINE static L
    seed(const L& v, const state<double>& s, double, double adjoint, std::size_t) {
        if (s.best != s.best)
            return L(detail::nan);
        return detail::pick(v == L(s.best), L(adjoint / s.count), L(0.0));
    }
};

using max_kind = extreme_kind<true>;
using min_kind = extreme_kind<false>;

// The Euclidean norm, sqrt(sum v^2).
struct norm_kind {
    static constexpr const char* name = "norm";
    template <class L>
    struct state {
        L squares = L(0.0);
        NABLA_ALWAYS_INLINE void add(const L& v) { squares += v * v; }
        NABLA_ALWAYS_INLINE void merge(const state& o) { squares += o.squares; }
        state<double> lane(std::size_t k) const { return {detail::lane_of(squares, k)}; }
    };
    static double result(const state<double>& s, std::size_t) { return std::sqrt(s.squares); }
    template <class L>
    NABLA_ALWAYS_INLINE static L
    seed(const L& v, const state<double>&, double result, double adjoint, std::size_t) {
        if (result == 0.0)
            return L(0.0);
        return v * L(adjoint / result);
    }
    template <class L>
    NABLA_ALWAYS_INLINE static L shape(const L& v, double) {
        return v;
    }
    static double scale(const state<double>&, double result, double adjoint, std::size_t) {
        return result == 0.0 ? 0.0 : adjoint / result;
    }
};

// log(sum(exp(v))), stably: the running maximum m and sum(exp(v - m)), rescaled when m grows.
// exp(v - m) is taken as 1 where v == m, so infinite elements give +inf or -inf, not NaN.
struct logsumexp_kind {
    static constexpr const char* name = "logsumexp";
    // exp(a - b) for a <= b: the exp rule's, on lanes nabla's own kernel, whose results are the C
    // library's within an ulp (subnormal weights included) in a batch and in the scalar tail.
    template <class L>
    NABLA_ALWAYS_INLINE static L exp_difference(const L& a, const L& b) {
        return rules::exp_rule::value(detail::pick(a == b, L(0.0), a - b));
    }
    template <class L>
    struct state {
        L top = L(-detail::inf);
        L sum = L(0.0);
        NABLA_ALWAYS_INLINE void add(const L& v) {
            if (detail::any_lane(v > top)) {
                using std::fmax;
                const L grown = fmax(top, v);
                sum *= exp_difference(top, grown);
                top = grown;
            }
            sum += exp_difference(v, top);
        }
        NABLA_ALWAYS_INLINE void merge(const state& o) {
            using std::fmax;
            const L grown = fmax(top, o.top);
            sum = sum * exp_difference(top, grown) + o.sum * exp_difference(o.top, grown);
            top = grown;
        }
        state<double> lane(std::size_t k) const {
            return {detail::lane_of(top, k), detail::lane_of(sum, k)};
        }
    };
    static double result(const state<double>& s, std::size_t) { return s.top + std::log(s.sum); }
    // exp(v - m) / s rather than exp(v - result), which is NaN at an infinite element.
    template <class L>
    NABLA_ALWAYS_INLINE static L
    seed(const L& v, const state<double>& s, double, double adjoint, std::size_t) {
        return L(adjoint / s.sum) * exp_difference(v, L(s.top));
    }
    // With the gradient, two passes instead: the maximum m first, then sum(exp(v - m)) with each
    // exp(v - m) the shape of the element's seed, so that no exponential is taken twice.
    using prepass = extreme_kind<true>;
    template <class L>
    NABLA_ALWAYS_INLINE static L shape(const L& v, double top) {
        return exp_difference(v, L(top));
    }
    template <class L>
    static state<L> initial(double top) {
        return {L(top), L(0.0)};
    }
    template <class L>
    NABLA_ALWAYS_INLINE static void fused_add(state<L>& s, const L&, const L& shape) {
        s.sum += shape;
    }
    static double scale(const state<double>& s, double, double adjoint, std::size_t) {
        return adjoint / s.sum;
    }
};

}  // namespace reduction

namespace detail {

// Whether a kind's seed factors as scale * shape(v) (sum, mean, norm, logsumexp).
template <class Kind>
concept FactoredSeed = requires(const typename Kind::template state<double>& s) {
    Kind::shape(1.0, 1.0);
    Kind::scale(s, 1.0, 1.0, std::size_t{1});
};

// Accumulates v, whose seed's shape is `shape`, into a fused loop's state.
template <class Kind, class State, class L>
NABLA_ALWAYS_INLINE void fused_add(State& s, const L& v, const L& shape) {
    if constexpr (requires { Kind::fused_add(s, v, shape); })
        Kind::fused_add(s, v, shape);
    else
        s.add(v);
}

// A fused loop's first state: the kind's own after a prepass, else the empty one.
template <class Kind, class L>
typename Kind::template state<L> fused_initial([[maybe_unused]] double pre) {
    if constexpr (requires { Kind::template initial<L>(pre); })
        return Kind::template initial<L>(pre);
    else
        return {};
}

template <class Kind, class Body>
constexpr auto reduce(const array_expression<Body>& x) {
    static_assert(array_expression<Body>::is_array,
                  "nabla: a reduction (sum, mean, prod, max, min, norm, dot, logsumexp) takes "
                  "an array expression; this one is already a scalar.");
    return make_array(combine([](auto g) { return make_node<reduce_rule<Kind>>(g); }, x.body));
}

}  // namespace detail

template <class Body>
constexpr auto sum(const array_expression<Body>& x) {
    return detail::reduce<reduction::sum_kind>(x);
}
template <class Body>
constexpr auto mean(const array_expression<Body>& x) {
    return detail::reduce<reduction::mean_kind>(x);
}
template <class Body>
constexpr auto prod(const array_expression<Body>& x) {
    return detail::reduce<reduction::prod_kind>(x);
}
template <class Body>
constexpr auto max(const array_expression<Body>& x) {
    return detail::reduce<reduction::max_kind>(x);
}
template <class Body>
constexpr auto min(const array_expression<Body>& x) {
    return detail::reduce<reduction::min_kind>(x);
}
// xtensor's names for max and min, so one generic function serves both libraries.
template <class Body>
constexpr auto amax(const array_expression<Body>& x) {
    return max(x);
}
template <class Body>
constexpr auto amin(const array_expression<Body>& x) {
    return min(x);
}
template <class Body>
constexpr auto norm(const array_expression<Body>& x) {
    return detail::reduce<reduction::norm_kind>(x);
}
template <class Body>
constexpr auto logsumexp(const array_expression<Body>& x) {
    return detail::reduce<reduction::logsumexp_kind>(x);
}
template <class A, class B>
requires detail::ArrayExpression<A> && detail::ArrayExpression<B>
constexpr auto dot(const A& a, const B& b) {
    return sum(a * b);
}

}  // namespace nabla
