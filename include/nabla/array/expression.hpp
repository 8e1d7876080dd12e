#pragma once
// Array expressions: element-wise arithmetic and functions over whole arrays, views shifted by
// compile-time offsets, and reductions, written as in the scalar case and kept as a static graph.
//
//   auto [x, y] = nabla::array_variables<2>();
//   auto f = sum(exp(sin(x) * y) + log1p(x * x));
//   auto rosenbrock = sum(100.0 * square(x(nabla::from<1>) - square(x(nabla::upto<-1>))) +
//                         square(1.0 - x(nabla::upto<-1>)));
//
// An array expression wraps a graph of the static core (core/): its leaves are placeholders
// whose index codes which argument they read and at what offset (so the core's deduplication
// shares x(from<1>) wherever it occurs, and tells it from x), and each reduction is a node of its
// own. Element-wise operations use the core's rules, so every mode shares one definition of each
// derivative; array/plan.hpp cuts the graph into loops at its reductions.

#include <cstddef>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/build.hpp"
#include "../core/functions.hpp"
#include "../core/held.hpp"
#include "../core/leaves.hpp"
#include "../core/node.hpp"
#include "../core/operators.hpp"
#include "../rules/functions.hpp"

namespace nabla {

// A range of an array by compile-time offsets, numpy's x[Begin:End] with End <= 0 counted from
// the end: from<1> is x[1:], upto<-1> is x[:-1], range<1, -1> is x[1:-1].
template <std::size_t Begin, long End>
struct slice {
    static_assert(End <= 0,
                  "nabla: an array view's end is counted from the end of the array: upto<-1> "
                  "drops the last element, upto<0> keeps them all; a positive end is not "
                  "supported.");
    static constexpr std::size_t begin = Begin;
    static constexpr std::size_t trim = static_cast<std::size_t>(-End);
};

template <std::size_t Begin>
inline constexpr slice<Begin, 0> from{};
template <long End>
inline constexpr slice<0, End> upto{};
template <std::size_t Begin, long End>
inline constexpr slice<Begin, End> range{};
// Every element of an axis, numpy's `:`: u(whole, from<1>) is u[:, 1:].
inline constexpr slice<0, 0> whole{};

namespace detail {

template <class T>
inline constexpr bool is_slice_v = false;
template <std::size_t Begin, long End>
inline constexpr bool is_slice_v<slice<Begin, End>> = true;

// Leaf codes: what a placeholder of an array expression reads. An array leaf reads argument
// `argument` through a view on each axis: axis 0 from element `begin` to `trim` before the end,
// axis 1 likewise (a one-dimensional argument has axis 0 only; of a two-dimensional one, axis 0
// is the rows and axis 1 the columns). A scalar leaf (made by array/plan.hpp when it cuts the
// graph at a reduction) reads reduction number `k`'s result.
inline constexpr std::size_t array_leaf_flag = std::size_t{1} << 62;
inline constexpr std::size_t scalar_leaf_flag = std::size_t{1} << 61;
inline constexpr std::size_t offset_limit = 1 << 12;

constexpr std::size_t array_leaf_code(std::size_t argument,
                                      std::size_t begin,
                                      std::size_t trim,
                                      std::size_t begin1 = 0,
                                      std::size_t trim1 = 0) {
    return array_leaf_flag | argument | begin << 12 | trim << 24 | begin1 << 36 | trim1 << 48;
}

struct leaf_view {
    std::size_t argument;
    std::size_t begin;
    std::size_t trim;
    std::size_t begin1;
    std::size_t trim1;
};

constexpr bool is_array_leaf_code(std::size_t code) {
    return (code & array_leaf_flag) != 0;
}
constexpr leaf_view decode_leaf(std::size_t code) {
    return {code & (offset_limit - 1), (code >> 12) & (offset_limit - 1),
            (code >> 24) & (offset_limit - 1), (code >> 36) & (offset_limit - 1),
            (code >> 48) & (offset_limit - 1)};
}

// A reduction as a node of the graph: Kind (array/reductions.hpp) says how it accumulates and
// what each element's adjoint is; the core never evaluates it.
template <class Kind>
struct reduce_rule {
    static constexpr const char* name = Kind::name;
    static constexpr std::size_t arity = 1;
    using kind = Kind;
};

template <class G>
inline constexpr bool is_reduction_v = false;
template <class Kind, class B>
inline constexpr bool is_reduction_v<node<reduce_rule<Kind>, B>> = true;

// Matrix-vector and matrix products and the linear solve as nodes of the graph, over two array
// leaves (array/products.hpp): opaque to the loops, computed before them and pulled back after
// them.
struct matvec_rule {
    static constexpr const char* name = "matvec";
    static constexpr std::size_t arity = 2;
};

struct matmul_rule {
    static constexpr const char* name = "matmul";
    static constexpr std::size_t arity = 2;
};

// x = A^-1 b for a square matrix A and a vector b.
struct solve_rule {
    static constexpr const char* name = "solve";
    static constexpr std::size_t arity = 2;
};

// A function of one-dimensional arrays with a value and a pullback of the caller's
// (nabla::custom_array, array/operands.hpp), both held in the type: function objects without
// state, such as lambdas without captures.
template <class Value, class Pullback, std::size_t K>
struct custom_rule {
    static constexpr const char* name = "custom_array";
    static constexpr std::size_t arity = K;
};

template <class G>
inline constexpr bool is_custom_v = false;
template <class Value, class Pullback, std::size_t K, class... Ops>
inline constexpr bool is_custom_v<node<custom_rule<Value, Pullback, K>, Ops...>> = true;

// Products, solves and functions of the caller's: opaque nodes, computed before the loops that
// read them and pulled back after.
template <class G>
inline constexpr bool is_product_v = is_custom_v<G>;
template <class A, class X>
inline constexpr bool is_product_v<node<matvec_rule, A, X>> = true;
template <class A, class B>
inline constexpr bool is_product_v<node<matmul_rule, A, B>> = true;
template <class A, class B>
inline constexpr bool is_product_v<node<solve_rule, A, B>> = true;

// Whether a graph holds a product anywhere.
template <class G>
inline constexpr bool has_products = is_product_v<G>;
template <class Rule, class... Ops>
inline constexpr bool has_products<node<Rule, Ops...>> = is_product_v<node<Rule, Ops...>> ||
                                                         (has_products<Ops> || ...);

// Whether a graph is array-valued: it reads an array leaf other than through a reduction.
template <class G>
struct array_valued {
    static constexpr bool value = false;
};
template <std::size_t Code>
struct array_valued<placeholder<Code>> {
    static constexpr bool value = is_array_leaf_code(Code);
};
template <class Rule, class... Ops>
struct array_valued<node<Rule, Ops...>> {
    static constexpr bool value = (array_valued<Ops>::value || ...);
};
template <class Kind, class B>
struct array_valued<node<reduce_rule<Kind>, B>> {
    static constexpr bool value = false;
};

// The graph with every array leaf viewed through slice S on axis 0 and S1 on axis 1 (reductions
// inside keep their own leaves: a reduction's result is a scalar, the same at every element).
template <class G, class S, class S1>
struct view_of {
    using type = G;
};
template <std::size_t Code, class S, class S1>
requires(is_array_leaf_code(Code)) struct view_of<placeholder<Code>, S, S1> {
    static constexpr leaf_view leaf = decode_leaf(Code);
    static_assert(leaf.begin + S::begin < offset_limit && leaf.trim + S::trim < offset_limit &&
                      leaf.begin1 + S1::begin < offset_limit &&
                      leaf.trim1 + S1::trim < offset_limit,
                  "nabla: an array view's offsets must stay below 4096.");
    using type = placeholder<array_leaf_code(leaf.argument,
                                             leaf.begin + S::begin,
                                             leaf.trim + S::trim,
                                             leaf.begin1 + S1::begin,
                                             leaf.trim1 + S1::trim)>;
};
template <class Rule, class... Ops, class S, class S1>
struct view_of<node<Rule, Ops...>, S, S1> {
    using type = node<Rule, typename view_of<Ops, S, S1>::type...>;
};
template <class Kind, class B, class S, class S1>
struct view_of<node<reduce_rule<Kind>, B>, S, S1> {
    using type = node<reduce_rule<Kind>, B>;
};
// A view of A x is the product of the view of A's rows: (A x)[1:] is A[1:, :] x.
template <class A, class X, class S, class S1>
struct view_of<node<matvec_rule, A, X>, S, S1> {
    static_assert(S1::begin == 0 && S1::trim == 0,
                  "nabla: matvec(A, x) is one-dimensional; view it on one axis.");
    using type = node<matvec_rule, typename view_of<A, S, slice<0, 0>>::type, X>;
};
// (A B)[r0:r1, c0:c1] is A[r0:r1, :] B[:, c0:c1].
template <class A, class B, class S, class S1>
struct view_of<node<matmul_rule, A, B>, S, S1> {
    using type = node<matmul_rule,
                      typename view_of<A, S, slice<0, 0>>::type,
                      typename view_of<B, slice<0, 0>, S1>::type>;
};

// Each element of A^-1 b depends on every row of A, so a view of it is no solve of views.
template <class A, class B, class S, class S1>
struct view_of<node<solve_rule, A, B>, S, S1> {
    static_assert(S::begin == 0 && S::trim == 0 && S1::begin == 0 && S1::trim == 0,
                  "nabla: a view of solve(A, b) is not supported in an array expression; solve "
                  "into an array first, or use the tape (nabla::mode::arrays).");
    using type = node<solve_rule, A, B>;
};

// Nor is a view of a function of the caller's its function of views.
template <class Value, class Pullback, std::size_t K, class... Ops, class S, class S1>
struct view_of<node<custom_rule<Value, Pullback, K>, Ops...>, S, S1> {
    static_assert(S::begin == 0 && S::trim == 0,
                  "nabla: a view of custom_array(...) is not supported in an array expression; "
                  "view its arguments, or compute it into an array first.");
    using type = node<custom_rule<Value, Pullback, K>, Ops...>;
};

template <class E, class S, class S1>
constexpr auto view_expression(const E& e) {
    if constexpr (is_held_v<E>) {
        held<typename view_of<graph_t<E>, S, S1>::type, constant_type_t<E>, constant_count<E>> r{};
        r.constants = e.constants;
        return r;
    } else {
        return typename view_of<E, S, S1>::type{};
    }
}

}  // namespace detail

// An array expression: Body is a graph of the static core over leaf-coded placeholders. Called
// with slices it is a view (one slice: axis 0, the rows of a two-dimensional array, as numpy's
// u[1:]; two: rows and columns, u[1:-1, 2:]); called with arrays it is evaluated
// (array/evaluate.hpp).
template <class Body>
struct array_expression {
    using body_type = Body;
    Body body;

    static constexpr bool is_array = detail::array_valued<detail::graph_t<Body>>::value;

    template <std::size_t Begin, long End, std::size_t Begin1 = 0, long End1 = 0>
    constexpr auto operator()(slice<Begin, End>, slice<Begin1, End1> = {}) const {
        static_assert(is_array, "nabla: a view (from<k>, upto<k>, range<a, b>) applies to an array "
                                "expression; this one is a scalar (a reduction's result).");
        using S = slice<Begin, End>;
        using S1 = slice<Begin1, End1>;
        using viewed = decltype(detail::view_expression<Body, S, S1>(body));
        return array_expression<viewed>{detail::view_expression<Body, S, S1>(body)};
    }

    template <class... Args>
    requires(sizeof...(Args) > 0 && !(detail::is_slice_v<Args> || ...)) auto
    operator()(const Args&... args) const;
};

template <class Body>
array_expression(Body) -> array_expression<Body>;

namespace detail {

template <class T>
inline constexpr bool is_array_expression_v = false;
template <class Body>
inline constexpr bool is_array_expression_v<array_expression<Body>> = true;

template <class T>
concept ArrayExpression = is_array_expression_v<std::remove_cvref_t<T>>;

// What an array expression's operators accept: array expressions and plain numbers (broadcast).
template <class T>
concept ArrayOperand = ArrayExpression<T> || Number<T>;

template <class A, class B>
concept ArrayOperands = ArrayOperand<A> && ArrayOperand<B> &&
    (ArrayExpression<A> || ArrayExpression<B>);

template <class T>
constexpr decltype(auto) body_of(const T& x) {
    if constexpr (ArrayExpression<T>)
        return (x.body);
    else
        return (x);
}

template <class Body>
constexpr auto make_array(const Body& body) {
    return array_expression<Body>{body};
}

}  // namespace detail

// N array placeholders, bound to arrays (std::vector<double>, std::array, std::span,
// xt::xtensor<double, 1>) when the expression is called: auto [x, y] = array_variables<2>().
template <std::size_t N>
constexpr auto array_variables() {
    static_assert(N < detail::offset_limit, "nabla: at most 4095 array variables.");
    return []<std::size_t... I>(std::index_sequence<I...>) {
        return std::tuple<array_expression<placeholder<detail::array_leaf_code(I, 0, 0)>>...>{};
    }
    (std::make_index_sequence<N>{});
}

#define NABLA_ARRAY_OPERATOR(op)                                                                   \
    template <class A, class B>                                                                    \
    requires detail::ArrayOperands<A, B>                                                           \
    constexpr auto operator op(const A& a, const B& b) {                                           \
        return detail::make_array(detail::body_of(a) op detail::body_of(b));                       \
    }

NABLA_ARRAY_OPERATOR(+)
NABLA_ARRAY_OPERATOR(-)
NABLA_ARRAY_OPERATOR(*)
NABLA_ARRAY_OPERATOR(/)
#undef NABLA_ARRAY_OPERATOR

template <class Body>
constexpr auto operator-(const array_expression<Body>& a) {
    return detail::make_array(-a.body);
}
template <class Body>
constexpr auto operator+(const array_expression<Body>& a) {
    return a;
}

#define NABLA_ARRAY_UNARY(function, rule)                                                          \
    template <class Body>                                                                          \
    constexpr auto function(const array_expression<Body>& x) {                                     \
        return detail::make_array(function(x.body));                                               \
    }

#define NABLA_ARRAY_BINARY(function, rule)                                                         \
    template <class A, class B>                                                                    \
    requires detail::ArrayOperands<A, B>                                                           \
    constexpr auto function(const A& a, const B& b) {                                              \
        return detail::make_array(function(detail::body_of(a), detail::body_of(b)));               \
    }

NABLA_UNARY_FUNCTIONS(NABLA_ARRAY_UNARY)
NABLA_BINARY_FUNCTIONS(NABLA_ARRAY_BINARY)
NABLA_ARRAY_BINARY(pow, pow_rule)
#undef NABLA_ARRAY_UNARY
#undef NABLA_ARRAY_BINARY

template <class Body>
constexpr auto square(const array_expression<Body>& x) {
    return x * x;
}

// digamma, and f(n, x) of a constant integer index (literal<N> or an int): polygamma, hermite,
// ...
template <class Body>
constexpr auto digamma(const array_expression<Body>& x) {
    return detail::make_array(digamma(x.body));
}
#define NABLA_ARRAY_INDEXED(function, rule)                                                        \
    template <class N, class Body>                                                                 \
    requires(rules::index_argument<rules::rule, N> || is_literal_v<N>) constexpr auto function(    \
        const N& n, const array_expression<Body>& x) {                                             \
        return detail::make_array(function(n, x.body));                                            \
    }
NABLA_INDEXED_FUNCTIONS(NABLA_ARRAY_INDEXED)
#undef NABLA_ARRAY_INDEXED
// f(n, a, x) of a constant integer degree n and a constant parameter a: gegenbauer,
// assoc_laguerre.
#define NABLA_ARRAY_PARAMETRIC(function, rule)                                                     \
    template <class N, class A, class Body>                                                        \
    requires((std::is_integral_v<N> || is_literal_v<N>)&&std::is_arithmetic_v<A>) constexpr auto   \
    function(const N& n, const A& a, const array_expression<Body>& x) {                            \
        return detail::make_array(function(n, a, x.body));                                         \
    }
NABLA_PARAMETRIC_FUNCTIONS(NABLA_ARRAY_PARAMETRIC)
#undef NABLA_ARRAY_PARAMETRIC

template <class A, class B, class C>
requires(detail::ArrayOperand<A>&& detail::ArrayOperand<B>&& detail::ArrayOperand<C> &&
         (detail::ArrayExpression<A> || detail::ArrayExpression<B> ||
          detail::ArrayExpression<C>)) constexpr auto fma(const A& a, const B& b, const C& c) {
    return detail::make_array(fma(detail::body_of(a), detail::body_of(b), detail::body_of(c)));
}
template <class A, class B, class C>
requires(detail::ArrayOperand<A>&& detail::ArrayOperand<B>&& detail::ArrayOperand<C> &&
         (detail::ArrayExpression<A> || detail::ArrayExpression<B> ||
          detail::ArrayExpression<C>)) constexpr auto hypot(const A& a, const B& b, const C& c) {
    return detail::make_array(hypot(detail::body_of(a), detail::body_of(b), detail::body_of(c)));
}
template <class A, class B, class C>
requires(detail::ArrayOperand<A>&& detail::ArrayOperand<B>&& detail::ArrayOperand<C> &&
         (detail::ArrayExpression<A> || detail::ArrayExpression<B> ||
          detail::ArrayExpression<C>)) constexpr auto ellint_3(const A& k,
                                                               const B& nu,
                                                               const C& phi) {
    return detail::make_array(
        ellint_3(detail::body_of(k), detail::body_of(nu), detail::body_of(phi)));
}

}  // namespace nabla
