#pragma once
// Running an array expression's plan (array/plan.hpp): one loop over SIMD lanes per group of
// reductions, forward for the values, and for the gradient one loop per group in reverse order
// that recomputes the element expression and sweeps its adjoints (core/evaluate.hpp) with the
// seed its reduction gives each element. Nothing is allocated inside a loop; the gradients are
// the only arrays made.
//
// The lanes are xsimd::batch<double> of the compiler's widest instruction set (8 doubles with
// AVX-512), read and written unaligned; the elements that do not fill a batch run the same
// expression on plain doubles. Define NABLA_NO_SIMD, or build without xsimd, for plain loops.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/evaluate.hpp"
#include "../core/graph.hpp"
#include "../values.hpp"
#include "expression.hpp"
#include "plan.hpp"
#include "reductions.hpp"
#include "threads.hpp"

#if !defined(NABLA_NO_SIMD) && __has_include(<xsimd/xsimd.hpp>)
#include "../simd/lanes.hpp"
#define NABLA_ARRAY_LANES 1
#else
#define NABLA_ARRAY_LANES 0
#endif

namespace nabla {

// Arrays whose lengths do not fit an expression: element-wise operands of different lengths, a
// view longer than its array, an argument that is not one-dimensional.
struct shape_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// A two-dimensional array of doubles held elsewhere: `rows` rows of `cols` elements, row-major,
// rows `stride` elements apart. An argument or destination of array expressions where the data
// is not an xt::xtensor: std::vector storage, or the interior of a larger grid.
//   nabla::evaluate_into(step, nabla::matrix_ref(next.data() + n + 1, n - 2, n - 2, n), u);
template <class T>
class matrix_ref {
public:
    matrix_ref(T* data, std::size_t rows, std::size_t cols) : matrix_ref(data, rows, cols, cols) {}
    matrix_ref(T* data, std::size_t rows, std::size_t cols, std::size_t stride)
        : data_(data),
          rows_(rows),
          cols_(cols),
          stride_(stride) {
        if (rows > 1 && stride < cols)
            throw shape_error("nabla::matrix_ref: rows of " + std::to_string(cols) +
                              " elements cannot be " + std::to_string(stride) + " apart");
    }

    T* data() const { return data_; }
    std::size_t size() const { return rows_ * cols_; }
    std::array<std::size_t, 2> shape() const { return {rows_, cols_}; }
    std::array<std::size_t, 2> strides() const { return {stride_, 1}; }
    T& operator()(std::size_t i, std::size_t j) const { return data_[i * stride_ + j]; }

private:
    T* data_;
    std::size_t rows_;
    std::size_t cols_;
    std::size_t stride_;
};

// The value and the gradient with respect to each array argument, each shaped like its argument:
// auto [value, gx, gy] = nabla::value_and_grad(f, xs, ys).
template <class... Gradients>
struct array_value_and_gradient {
    double value;
    std::tuple<Gradients...> gradient;

    template <std::size_t I>
    decltype(auto) get() const& {
        if constexpr (I == 0)
            return (value);
        else
            return (std::get<I - 1>(gradient));
    }
    template <std::size_t I>
    decltype(auto) get() && {
        if constexpr (I == 0)
            return std::move(value);
        else
            return std::move(std::get<I - 1>(gradient));
    }
};

namespace detail {

#if NABLA_ARRAY_LANES
using lanes = xsimd::batch<double>;
#else
using lanes = double;
#endif

template <class L>
inline constexpr std::size_t width = [] {
    if constexpr (std::is_same_v<L, double>)
        return std::size_t{1};
    else
        return L::size;
}();

// Lanes from memory and back; L the element type itself (a double, or a dual number on the
// tape's second-order arrays) reads and writes one element.
template <class L, class T>
NABLA_ALWAYS_INLINE L load(const T* p) {
    if constexpr (std::is_same_v<L, T>)
        return *p;
    else
        return L::load_unaligned(p);
}

template <class L, class T>
NABLA_ALWAYS_INLINE void store_lanes(T* p, const L& v) {
    if constexpr (std::is_same_v<L, T>)
        *p = v;
    else
        v.store_unaligned(p);
}

template <class L, class T>
NABLA_ALWAYS_INLINE void add_to(T* p, const L& v) {
    if constexpr (std::is_same_v<L, T>)
        *p += v;
    else
        (L::load_unaligned(p) + v).store_unaligned(p);
}

template <class L>
NABLA_ALWAYS_INLINE double add_lanes(const L& v) {
    if constexpr (std::is_same_v<L, double>) {
        return v;
    } else {
        double total = 0.0;
        for (std::size_t k = 0; k < L::size; ++k)
            total += lane_of(v, k);
        return total;
    }
}

// A one-dimensional array argument: contiguous doubles with data() and size().
template <class C>
concept ArrayArgument = requires(const C& c) {
    { c.data() } -> std::convertible_to<const double*>;
    { c.size() } -> std::convertible_to<std::size_t>;
};

// A two-dimensional one: row-major with rows strides()[0] apart (xt::xtensor<double, 2>, its
// views with contiguous rows, nabla::matrix_ref). Its rank is part of its type.
template <class C>
concept TwoDimensional = ArrayArgument<C> && requires(const C& c) {
    c.shape()[1];
    c.strides()[1];
} && std::tuple_size<std::remove_cvref_t<decltype(std::declval<const C&>().shape())>>::value == 2;

// Bit k set where argument k is two-dimensional.
template <class... Args>
constexpr std::uint64_t two_d_mask() {
    std::uint64_t mask = 0;
    std::size_t k = 0;
    ((mask |= (TwoDimensional<Args> && k < 64 ? std::uint64_t{1} << k : 0), ++k), ...);
    return mask;
}

// Bit k set where graph G reads argument k (the first 64).
template <class G>
inline constexpr std::uint64_t read_mask = [] {
    std::uint64_t m = 0;
    for (const auto code : codes_of<filter_t<placeholder_predicate, schedule<G>>>::value)
        if (is_array_leaf_code(code) && decode_leaf(code).argument < 64)
            m |= std::uint64_t{1} << decode_leaf(code).argument;
    return m;
}();

// An argument the expression does not read does not make its loops two-dimensional.
template <class Body, class... Args>
using program_for = program<graph_t<Body>, two_d_mask<Args...>() & read_mask<graph_t<Body>>>;

// Where a leaf reads its argument: rows and columns of a two-dimensional one; a one-dimensional
// one has columns only (its axis 0), the same in every row of the loop.
template <class P, std::size_t Code>
struct leaf_place {
    static constexpr leaf_view view = decode_leaf(Code);
    static constexpr std::size_t argument = view.argument;
    static constexpr bool two_d = P::two_d(view.argument);
    static constexpr std::size_t row_begin = two_d ? view.begin : 0;
    static constexpr std::size_t row_trim = two_d ? view.trim : 0;
    static constexpr std::size_t col_begin = two_d ? view.begin1 : view.begin;
    static constexpr std::size_t col_trim = two_d ? view.trim1 : view.trim;
};

// Whether a leaf's adjoints go into a gradient array: it reads an argument that is not constant.
template <class P>
constexpr bool takes_gradient(std::size_t code) {
    return is_array_leaf_code(code) && !P::constant(decode_leaf(code).argument);
}

// The rows and columns of a loop; a one-dimensional loop has one row.
struct extent {
    std::size_t rows = 1;
    std::size_t cols = 0;
    std::size_t size() const { return rows * cols; }
};

// The first element of an argument: an xtensor view's starts at data() + data_offset().
template <class C>
const double* first_element(const C& c) {
    if constexpr (requires { c.data_offset(); })
        return c.data() + c.data_offset();
    else
        return c.data();
}

template <class C>
auto gradient_like(const C& c) {
    if constexpr (TwoDimensional<C> && requires { C::from_shape(std::array<std::size_t, 2>{}); })
        return C::from_shape(std::array<std::size_t, 2>{static_cast<std::size_t>(c.shape()[0]),
                                                        static_cast<std::size_t>(c.shape()[1])});
    else if constexpr (container_traits<C>::supported)
        return container_traits<C>::template make_like<double>(c);
    else
        return std::vector<double>(c.size());
}

// The shape errors of array_run::extent_of, out of the loops' way.
[[noreturn]] NABLA_OUT_OF_LINE inline void view_too_short(
    std::size_t drop, std::size_t have, const char* axis, std::size_t argument, const char* what) {
    throw shape_error("nabla: a view drops " + std::to_string(drop) + " " + axis + " of argument " +
                      std::to_string(argument) + ", which has " + std::to_string(have) + " (in " +
                      what + ")");
}
[[noreturn]] NABLA_OUT_OF_LINE inline void rows_differ(std::size_t first,
                                                       std::size_t other,
                                                       std::size_t argument,
                                                       std::size_t begin,
                                                       const char* what) {
    throw shape_error("nabla: element-wise operands with different numbers of rows, " +
                      std::to_string(first) + " and " + std::to_string(other) + " (argument " +
                      std::to_string(argument) + " viewed from row " + std::to_string(begin) +
                      ", in " + what + ")");
}
[[noreturn]] NABLA_OUT_OF_LINE inline void lengths_differ(std::size_t first,
                                                          std::size_t other,
                                                          std::size_t argument,
                                                          std::size_t begin,
                                                          bool two,
                                                          const char* what) {
    throw shape_error(std::string("nabla: element-wise operands of different lengths, ") +
                      std::to_string(first) + " and " + std::to_string(other) +
                      " elements (argument " + std::to_string(argument) + " viewed from " +
                      std::to_string(begin) + (two ? " on its rows" : "") + ", in " + what + ")");
}

// One evaluation of a program: the arguments, the reductions' results, states and adjoints.
template <class P, std::size_t Arguments, std::size_t PoolSize>
struct array_run {
    using plan = P;
    static constexpr std::size_t pool_size = PoolSize;
    std::array<const double*, Arguments> data{};
    std::array<std::size_t, Arguments> size{};
    // Of two-dimensional arguments: rows, columns and the distance between rows (a gradient's
    // rows are `cols` apart). A one-dimensional argument has one row of `size` columns.
    std::array<std::size_t, Arguments> rows{};
    std::array<std::size_t, Arguments> cols{};
    std::array<std::size_t, Arguments> stride{};
    std::array<double*, Arguments> gradient{};
    std::array<double, PoolSize> pool{};
    std::array<double, P::count + 1> result{};
    std::array<double, P::count + 1> adjoint{};
    std::array<std::size_t, P::count + 1> length{};
    std::array<extent, P::count + 1> shape{};
    // The row a loop is at.
    std::size_t row = 0;

    // The adjoints of scalar leaves taken in fused loops with a unit scale, per reduction.
    std::array<std::array<double, P::count + 1>, P::count + 1> unit_adjoint{};

    using states = decltype([]<std::size_t... J>(std::index_sequence<J...>) {
        return std::tuple<typename P::template kind<J>::template state<double>...>{};
    }(std::make_index_sequence<P::count>{}));
    states state{};

    template <class L>
    NABLA_ALWAYS_INLINE std::array<L, PoolSize> pool_lanes() const {
        std::array<L, PoolSize> lanes_pool{};
        for (std::size_t k = 0; k < PoolSize; ++k)
            lanes_pool[k] = L(pool[k]);
        return lanes_pool;
    }

    template <class L>
    NABLA_ALWAYS_INLINE std::array<L, P::count + 1> result_lanes() const {
        std::array<L, P::count + 1> lanes_result{};
        for (std::size_t k = 0; k <= P::count; ++k)
            lanes_result[k] = L(result[k]);
        return lanes_result;
    }

    // The rows and columns of the loop over an element expression's leaves; throws if they
    // disagree (the errors out of line, so that the check inlines into every loop's start).
    template <class E>
    NABLA_ALWAYS_INLINE extent extent_of(const char* what) const {
        extent e{};
        bool have_rows = false;
        bool have_cols = false;
        for (const std::size_t code : E::codes) {
            if (!is_array_leaf_code(code))
                continue;
            const leaf_view v = decode_leaf(code);
            const std::size_t a = v.argument;
            const bool two = P::two_d(a);
            const std::size_t col_drop = two ? v.begin1 + v.trim1 : v.begin + v.trim;
            if (two) {
                const std::size_t row_drop = v.begin + v.trim;
                if (rows[a] < row_drop) [[unlikely]]
                    view_too_short(row_drop, rows[a], "rows", a, what);
                const std::size_t r = rows[a] - row_drop;
                if (!have_rows) {
                    e.rows = r;
                    have_rows = true;
                } else if (r != e.rows) [[unlikely]] {
                    rows_differ(e.rows, r, a, v.begin, what);
                }
            }
            if (cols[a] < col_drop) [[unlikely]]
                view_too_short(col_drop, cols[a], two ? "columns" : "elements", a, what);
            const std::size_t c = cols[a] - col_drop;
            if (!have_cols) {
                e.cols = c;
                have_cols = true;
            } else if (c != e.cols) [[unlikely]] {
                lengths_differ(e.cols, c, a, two ? v.begin1 : v.begin, two, what);
            }
        }
        return e;
    }

    template <std::size_t Code>
    NABLA_ALWAYS_INLINE const double* value_at(std::size_t i) const {
        using G = leaf_place<P, Code>;
        const double* p = data[G::argument] + G::col_begin + i;
        if constexpr (G::two_d)
            p += (row + G::row_begin) * stride[G::argument];
        return p;
    }

    template <std::size_t Code>
    NABLA_ALWAYS_INLINE double* gradient_at(std::size_t i) const {
        using G = leaf_place<P, Code>;
        double* p = gradient[G::argument] + G::col_begin + i;
        if constexpr (G::two_d)
            p += (row + G::row_begin) * cols[G::argument];
        return p;
    }
};

// Where each array leaf of E reads in the loop's current row, and where its adjoint goes (with
// Gradients): taken out of the run once per row, so that the inner loop keeps them in
// registers. A SIMD store may alias any memory, and would otherwise make the compiler reload
// them for every batch.
template <class E>
struct row_pointers {
    std::array<const double*, E::leaf_count> value{};
    std::array<double*, E::leaf_count> gradient{};

    template <bool Gradients, class Run>
    NABLA_ALWAYS_INLINE static row_pointers of(const Run& run) {
        using P = typename Run::plan;
        row_pointers r;
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (
                [&] {
                    if constexpr (is_array_leaf_code(E::codes[K])) {
                        r.value[K] = run.template value_at<E::codes[K]>(0);
                        if constexpr (Gradients && !P::constant(decode_leaf(E::codes[K]).argument))
                            r.gradient[K] = run.template gradient_at<E::codes[K]>(0);
                    }
                }(),
                ...);
        }
        (std::make_index_sequence<E::leaf_count>{});
        return r;
    }
};

template <class L, class E, std::size_t K, std::size_t Count>
NABLA_ALWAYS_INLINE L leaf_value(const row_pointers<E>& at,
                                 const std::array<L, Count>& results,
                                 std::size_t i) {
    constexpr std::size_t code = E::codes[K];
    if constexpr (is_array_leaf_code(code)) {
        return load<L>(at.value[K] + i);
    } else {
        return results[code & ~scalar_leaf_flag];
    }
}

template <class L, class E, std::size_t Count>
NABLA_ALWAYS_INLINE std::array<L, E::leaf_count>
load_leaves(const row_pointers<E>& at, const std::array<L, Count>& results, std::size_t i) {
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
        return std::array<L, E::leaf_count>{leaf_value<L, E, K>(at, results, i)...};
    }
    (std::make_index_sequence<E::leaf_count>{});
}

// The same read from the run, for one element outside a loop.
template <class L, class E, class Run, std::size_t Count>
NABLA_ALWAYS_INLINE std::array<L, E::leaf_count>
load_leaves(const Run& run, const std::array<L, Count>& results, std::size_t i) {
    return load_leaves<L, E>(row_pointers<E>::template of<false>(run), results, i);
}

// How a loop over e is cut into chunks (array/threads.hpp): elements of its one row, or whole
// rows of a grid; chunk_size elements each, a multiple of the unrolled batches, the last shorter.
struct chunking {
    extent whole;
    std::size_t count = 1;
    std::size_t rows_each = 0;  // rows per chunk of a grid; 0: elements of one row
    std::size_t cols_each = 0;

    explicit chunking(extent e) : whole(e) {
        if (e.rows <= 1) {
            cols_each = chunk_size;
            count = e.cols > chunk_size ? (e.cols + chunk_size - 1) / chunk_size : 1;
        } else {
            rows_each = std::max<std::size_t>(1, chunk_size / std::max<std::size_t>(1, e.cols));
            count = e.size() > chunk_size ? (e.rows + rows_each - 1) / rows_each : 1;
        }
    }
    // The first row and element of chunk c, and its extent.
    std::size_t first_row(std::size_t c) const { return rows_each == 0 ? 0 : c * rows_each; }
    std::size_t first_col(std::size_t c) const { return rows_each == 0 ? c * cols_each : 0; }
    extent part(std::size_t c) const {
        if (rows_each == 0)
            return {whole.rows, std::min(cols_each, whole.cols - c * cols_each)};
        return {std::min(rows_each, whole.rows - c * rows_each), whole.cols};
    }
};

// Whether one of the element expressions Es reads argument k.
template <class... Es>
constexpr bool reads_argument(std::size_t k) {
    bool found = false;
    const auto look = [&](const auto& codes) {
        for (const std::size_t code : codes)
            if (is_array_leaf_code(code) && decode_leaf(code).argument == k)
                found = true;
    };
    (look(Es::codes), ...);
    return found;
}

// The run seen from chunk c of a loop over the element expressions Es: every argument they read
// (and its gradient) moved to the chunk's first element, or the grids to its first row (a
// one-dimensional argument is then the same row vector). Arguments the loop does not read stay
// where they are: they may be shorter than the offset, or empty.
template <class P, class... Es, class Run>
Run chunk_run(const Run& run, const chunking& cut, std::size_t c) {
    Run sub = run;
    const std::size_t row0 = cut.first_row(c), col0 = cut.first_col(c);
    for (std::size_t k = 0; k < sub.data.size(); ++k) {
        if (!reads_argument<Es...>(k))
            continue;
        if (cut.rows_each == 0) {
            sub.data[k] += col0;
            if (sub.gradient[k] != nullptr)
                sub.gradient[k] += col0;
        } else if (P::two_d(k)) {
            sub.data[k] += row0 * sub.stride[k];
            if (sub.gradient[k] != nullptr)
                sub.gradient[k] += row0 * sub.cols[k];
        }
    }
    return sub;
}

template <class L, class E, std::size_t PoolSize>
using element_values =
    forward_values<schedule<typename E::dense>, L, PoolSize, std::array<L, E::leaf_count>>;

template <class L, class E, std::size_t PoolSize, class Source, std::size_t Count>
NABLA_ALWAYS_INLINE L element_value(const Source& at,
                                    const std::array<L, PoolSize>& pool,
                                    const std::array<L, Count>& results,
                                    std::size_t i) {
    const auto leaves = load_leaves<L, E>(at, results, i);
    element_values<L, E, PoolSize> values{{}, pool, leaves};
    values.forward();
    return values.value[schedule<typename E::dense>::size - 1];
}

// Whether leaf K of reduction J's body hands its adjoints over through a staging buffer. Leaves
// that add into one row of one gradient array at column offsets that differ by other than a
// multiple of the batch would load lanes that a store of the previous batch wrote only in part,
// which the processor cannot forward from its store buffer: a stall of about a dozen cycles a
// batch (the heat stencil's adjoint ran 25 times slower on 2 lanes). The leaves of the offset
// class (modulo the batch) that most of a row's leaves share add directly; the others go through
// the buffers.
template <class P, std::size_t J, std::size_t K>
inline constexpr bool staged_leaf = [] {
    using E = typename P::template body<J>;
    constexpr std::size_t W = width<lanes>;
    const std::size_t code = E::codes[K];
    if (W == 1 || !is_array_leaf_code(code) || P::constant(decode_leaf(code).argument))
        return false;
    struct place {
        std::size_t argument, row, column;
    };
    const auto place_of = [](std::size_t c) {
        const leaf_view v = decode_leaf(c);
        return P::two_d(v.argument) ? place{v.argument, v.begin, v.begin1 % W}
                                    : place{v.argument, 0, v.begin % W};
    };
    const place mine = place_of(code);
    // The leaves of mine's row in each offset class.
    std::array<std::size_t, W> in_class{};
    for (std::size_t k = 0; k < E::leaf_count; ++k) {
        if (!is_array_leaf_code(E::codes[k]) || P::constant(decode_leaf(E::codes[k]).argument))
            continue;
        const place other = place_of(E::codes[k]);
        if (other.argument == mine.argument && other.row == mine.row)
            ++in_class[other.column];
    }
    std::size_t direct = 0;
    for (std::size_t c = 1; c < W; ++c)
        if (in_class[c] > in_class[direct])
            direct = c;
    return mine.column != direct;
}();

template <class P, std::size_t J>
inline constexpr bool stages = []<std::size_t... K>(std::index_sequence<K...>) {
    return (staged_leaf<P, J, K> || ...);
}
(std::make_index_sequence<P::template body<J>::leaf_count>{});

// The elements of a reverse loop that go through the staging buffers at a time.
inline constexpr std::size_t stage_block = 128;

// The staging buffers of reduction J's staged leaves, `stage_block` elements each.
template <class P, std::size_t J>
struct stage_buffers {
    stage_buffers() {}  // (left uninitialised: every element is written before it is read)
    alignas(64) std::array<std::array<double, stage_block>, P::template body<J>::leaf_count> buffer;
};

// The reverse of one element (a batch of them): recompute, seed, sweep, and deliver the leaves'
// adjoints: into the gradient arrays, or into the accumulators of the scalar leaves; with Staged,
// those of the staged leaves into `stage` (the buffers, less the block's first element).
template <class P,
          std::size_t J,
          bool Staged = false,
          class L,
          class Run,
          std::size_t PoolSize,
          std::size_t Count>
NABLA_ALWAYS_INLINE void element_reverse(Run& run,
                                         const row_pointers<typename P::template body<J>>& at,
                                         const std::array<L, PoolSize>& pool,
                                         const std::array<L, Count>& results,
                                         std::array<L, Count>& scalar_adjoints,
                                         std::size_t n,
                                         std::size_t i,
                                         double* const* stage = nullptr) {
    using E = typename P::template body<J>;
    using S = schedule<typename E::dense>;
    using kind = typename P::template kind<J>;
    const auto leaves = load_leaves<L, E>(at, results, i);
    element_values<L, E, PoolSize> values{{}, pool, leaves};
    values.forward();
    adjoint_sweep<S, L, PoolSize, std::array<L, E::leaf_count>> sweep{values, {}};
    sweep.run(kind::seed(values.value[S::size - 1], std::get<J>(run.state), run.result[J],
                         run.adjoint[J], n));
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                constexpr std::size_t code = E::codes[K];
                const L& adjoint = sweep.adjoint[index_of<S, placeholder<K>>];
                if constexpr (is_array_leaf_code(code)) {
                    if constexpr (Staged && staged_leaf<P, J, K>)
                        store_lanes(stage[K] + i, adjoint);
                    else if constexpr (!P::constant(decode_leaf(code).argument))
                        add_to(at.gradient[K] + i, adjoint);
                } else {
                    scalar_adjoints[code & ~scalar_leaf_flag] += adjoint;
                }
            }(),
            ...);
    }
    (std::make_index_sequence<E::leaf_count>{});
}

template <class P, std::size_t Group>
inline constexpr auto group_members = [] {
    std::array<std::size_t, P::count + 1> members{};
    std::size_t m = 0;
    for (std::size_t j = 0; j < P::count; ++j)
        if (P::grouping.first[j] == Group)
            members[m++] = j;
    return std::pair{members, m};
}();

// Lanes `previous` and `current` moved up by Shift lanes: lane t is previous[W - Shift + t] for
// t < Shift, current[t - Shift] after. Carries a leaf's adjoints to the elements its view reads,
// in registers.
template <std::size_t Shift, class L>
NABLA_ALWAYS_INLINE L shift_in(const L& previous, const L& current) {
    constexpr std::size_t W = width<L>;
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
    using R = typename L::register_type;
    return [&]<std::size_t... T>(std::index_sequence<T...>) {
        return L(__builtin_shufflevector(R(previous), R(current),
                                         (T < Shift ? W - Shift + T : W + T - Shift)...));
    }
    (std::make_index_sequence<W>{});
#else
    std::array<double, 2 * W> both{};
    previous.store_unaligned(both.data());
    current.store_unaligned(both.data() + W);
    return L::load_unaligned(both.data() + W - Shift);
#endif
}

template <bool Add, class L>
NABLA_ALWAYS_INLINE L add_if(const L& total, const L& x) {
    if constexpr (Add)
        return total + x;
    else
        return total;
}

// The sum of the moved adjoints of leaf K and of the leaves it leads (views of the same array).
template <auto Leader, std::size_t K, class L, std::size_t N>
NABLA_ALWAYS_INLINE L led_block(const std::array<L, N>& moved) {
    return [&]<std::size_t... M>(std::index_sequence<M...>) {
        L block = moved[K];
        ((block = add_if<(M != K && Leader[M] == K)>(block, moved[M])), ...);
        return block;
    }
    (std::make_index_sequence<N>{});
}

// Which groups take the gradient in their forward loop (value and gradient in one pass, the
// gradient stored, not accumulated): one reduction whose seed factors (sum, mean, norm), read by
// the top expression alone (so its adjoint is known right after the loops), whose arrays no other
// such group writes, and whose views of one array differ by less than a batch (their adjoints
// meet in registers): sum, mean, norm and logsumexp. The others recompute in a reverse loop.
template <class P>
struct fusion {
    static constexpr std::size_t W = width<lanes>;

    static constexpr auto read_by_body = [] {
        std::array<bool, P::count + 1> read{};
        const auto& [codes, sizes] = P::leaf_codes;
        for (std::size_t j = 0; j < P::count; ++j)
            for (std::size_t k = 0; k < sizes[j]; ++k)
                if ((codes[j][k] & scalar_leaf_flag) != 0)
                    read[codes[j][k] & ~scalar_leaf_flag] = true;
        return read;
    }();

    static constexpr auto factored = [] {
        std::array<bool, P::count + 1> f{};
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((f[J] = FactoredSeed<typename P::template kind<J>>), ...);
        }
        (std::make_index_sequence<P::count>{});
        return f;
    }();

    // Whether reduction j is a sum that is the top itself, so that its seed is 1 whatever the
    // values: then a loop that adds into the gradients (P::accumulate) can fuse, needing no scale
    // afterwards.
    static constexpr auto unit_seed = [] {
        std::array<bool, P::count + 1> unit{};
        using T = typename P::top;
        [&]<std::size_t... J>(std::index_sequence<J...>) {
            ((unit[J] = std::is_same_v<typename P::template kind<J>, reduction::sum_kind> &&
                        T::leaf_count == 1 && T::codes[0] == (J | scalar_leaf_flag) &&
                        schedule<typename T::dense>::size == 1),
             ...);
        }
        (std::make_index_sequence<P::count>{});
        return unit;
    }();

    // The smallest begin of each argument's views in body j (offset_limit where it is not read).
    static constexpr std::size_t first_begin(std::size_t j, std::size_t argument) {
        const auto& [codes, sizes] = P::leaf_codes;
        std::size_t b = offset_limit;
        for (std::size_t k = 0; k < sizes[j]; ++k)
            if (is_array_leaf_code(codes[j][k]) && decode_leaf(codes[j][k]).argument == argument)
                b = decode_leaf(codes[j][k]).begin < b ? decode_leaf(codes[j][k]).begin : b;
        return b;
    }

    // The smallest column begin of argument a's views in body j.
    static constexpr std::size_t first_column(std::size_t j, std::size_t argument) {
        const auto& [codes, sizes] = P::leaf_codes;
        std::size_t b = offset_limit;
        for (std::size_t k = 0; k < sizes[j]; ++k)
            if (is_array_leaf_code(codes[j][k])) {
                const leaf_view v = decode_leaf(codes[j][k]);
                if (v.argument == argument && v.begin1 < b)
                    b = v.begin1;
            }
        return b;
    }

    // fused[g]: the member of group g that runs fused, or P::count for none.
    static constexpr auto fused = [] {
        std::array<std::size_t, P::group_count + 1> member{};
        std::array<bool, offset_limit> written{};
        const auto& [codes, sizes] = P::leaf_codes;
        for (std::size_t g = 0; g < P::group_count; ++g) {
            member[g] = P::count;
            std::size_t only = P::count, members = 0;
            for (std::size_t j = 0; j < P::count; ++j)
                if (P::grouping.first[j] == g) {
                    only = j;
                    ++members;
                }
            if (W == 1 || members != 1 || !factored[only] || read_by_body[only] ||
                (P::accumulate && !unit_seed[only]))
                continue;
            bool ok = true;
            for (std::size_t k = 0; k < sizes[only]; ++k) {
                if (!is_array_leaf_code(codes[only][k]))
                    continue;
                const leaf_view v = decode_leaf(codes[only][k]);
                if (written[v.argument] && !P::constant(v.argument))
                    ok = false;
                if (P::two_d_mask == 0) {
                    if (v.begin - first_begin(only, v.argument) >= W)
                        ok = false;
                } else if (!P::constant(v.argument)) {
                    // A grid's views meet in registers, moved by less than a batch; a
                    // one-dimensional array broadcast along the rows is accumulated in a
                    // reverse loop.
                    if (!P::two_d(v.argument) || v.begin1 - first_column(only, v.argument) >= W)
                        ok = false;
                }
            }
            if (!ok)
                continue;
            for (std::size_t k = 0; k < sizes[only]; ++k)
                if (takes_gradient<P>(codes[only][k]))
                    written[decode_leaf(codes[only][k]).argument] = true;
            member[g] = only;
        }
        return member;
    }();

    // Whether argument a's gradient is written by a fused group (and so needs no zeroing first).
    static constexpr auto fused_argument = [] {
        std::array<bool, offset_limit> written{};
        const auto& [codes, sizes] = P::leaf_codes;
        for (std::size_t g = 0; g < P::group_count; ++g)
            if (fused[g] != P::count)
                for (std::size_t k = 0; k < sizes[fused[g]]; ++k)
                    if (is_array_leaf_code(codes[fused[g]][k]))
                        written[decode_leaf(codes[fused[g]][k]).argument] = true;
        return written;
    }();
};

// Merges states k and k + Step for every k a multiple of 2 Step, then again with 2 Step, until one
// state holds them all: a fixed order whose chain of dependent merges is log2 long. Written out
// at compile time (loops over the steps stay loops over memory).
template <std::size_t Step, class S, std::size_t N>
NABLA_ALWAYS_INLINE void merge_pairwise(std::array<S, N>& s) {
    if constexpr (Step < N) {
        [&]<std::size_t... K>(std::index_sequence<K...>) {
            (
                [&] {
                    if constexpr (K * 2 * Step + Step < N)
                        s[K * 2 * Step].merge(s[K * 2 * Step + Step]);
                }(),
                ...);
        }
        (std::make_index_sequence<(N + 2 * Step - 1) / (2 * Step)>{});
        merge_pairwise<2 * Step>(s);
    }
}

// A loop's accumulators, then its lanes, merged pairwise into one state of plain numbers.
template <std::size_t W, class State, std::size_t U>
NABLA_ALWAYS_INLINE auto fold_states(std::array<State, U>& states) {
    merge_pairwise<1>(states);
    auto lanes = [&]<std::size_t... K>(std::index_sequence<K...>) {
        return std::array{states[0].lane(K)...};
    }
    (std::make_index_sequence<W>{});
    merge_pairwise<1>(lanes);
    return lanes[0];
}

// A value-only loop over reduction J's elements with another kind (logsumexp's maximum).
template <class P, std::size_t J, class Kind, class Run>
auto prepass_range(Run& run, extent e) {
    using E = typename P::template body<J>;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    constexpr std::size_t unroll = 4;
    const std::size_t n = e.cols;
    const auto pool = run.template pool_lanes<L>();
    const auto results = run.template result_lanes<L>();
    const auto scalar_pool = run.template pool_lanes<double>();
    const auto scalar_results = run.template result_lanes<double>();
    std::array<typename Kind::template state<L>, unroll> states{};
    typename Kind::template state<double> tail{};
    for (run.row = 0; run.row < e.rows; ++run.row) {
        const auto at = row_pointers<E>::template of<false>(run);
        std::size_t i = 0;
        for (; i + unroll * W <= n; i += unroll * W)
            for (std::size_t u = 0; u < unroll; ++u)
                states[u].add(element_value<L, E>(at, pool, results, i + u * W));
        for (; i + W <= n; i += W)
            states[0].add(element_value<L, E>(at, pool, results, i));
        for (; i < n; ++i)
            tail.add(element_value<double, E>(at, scalar_pool, scalar_results, i));
    }
    run.row = 0;
    auto scalar = fold_states<W>(states);
    scalar.merge(tail);
    return scalar;
}

template <class P, std::size_t J, class Kind, class Run>
double prepass(Run& run) {
    const extent e = run.shape[J];
    const chunking cut(e);
    if (cut.count == 1)
        return Kind::result(prepass_range<P, J, Kind>(run, e), e.size());
    std::vector<typename Kind::template state<double>> parts(cut.count);
    for_each_chunk(cut.count, [&](std::size_t c) {
        Run sub = chunk_run<P, typename P::template body<J>>(run, cut, c);
        parts[c] = prepass_range<P, J, Kind>(sub, cut.part(c));
    });
    for (std::size_t c = 1; c < cut.count; ++c)
        parts[0].merge(parts[c]);
    return Kind::result(parts[0], e.size());
}

// Whether a fused loop accumulates its reduction: always, except a sum whose value nobody reads
// (a pullback's), so that what only the value needs is not computed.
template <class P, class Kind>
inline constexpr bool accumulates = P::value_wanted || !std::is_same_v<Kind, reduction::sum_kind>;

// One element of a fused loop on doubles (what is left after the batches): its value added to
// `tail`, its adjoints swept with the seed's shape, and each leaf's given to
// deliver(integral_constant<k>, adjoint).
template <class P, std::size_t J, class E, std::size_t PoolSize, class State, class Deliver>
NABLA_ALWAYS_INLINE void fused_tail_element(const row_pointers<E>& at,
                                            const std::array<double, PoolSize>& pool,
                                            const std::array<double, P::count + 1>& results,
                                            std::size_t i,
                                            double pre,
                                            State& tail,
                                            const Deliver& deliver) {
    using S = schedule<typename E::dense>;
    using kind = typename P::template kind<J>;
    const auto leaves = load_leaves<double, E>(at, results, i);
    element_values<double, E, PoolSize> values{{}, pool, leaves};
    values.forward();
    const double v = values.value[S::size - 1];
    const double shape = kind::shape(v, pre);
    if constexpr (accumulates<P, kind>)
        fused_add<kind>(tail, v, shape);
    adjoint_sweep<S, double, PoolSize, std::array<double, E::leaf_count>> sweep{values, {}};
    sweep.run(shape);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (deliver(std::integral_constant<std::size_t, K>{},
                 sweep.adjoint[index_of<S, placeholder<K>>]),
         ...);
    }
    (std::make_index_sequence<E::leaf_count>{});
}

// How a fused group's leaves write their adjoints: each view's shift from its argument's first
// view, and the leaf that stores each argument's block (its first leaf; the others add to it).
template <class P, std::size_t J>
struct fused_layout {
    using E = typename P::template body<J>;
    using F = fusion<P>;
    static constexpr std::size_t leaf_count = E::leaf_count;
    static constexpr auto shift = [] {
        std::array<std::size_t, leaf_count> s{};
        for (std::size_t k = 0; k < leaf_count; ++k)
            if (is_array_leaf_code(E::codes[k])) {
                const leaf_view v = decode_leaf(E::codes[k]);
                s[k] = v.begin - F::first_begin(J, v.argument);
            }
        return s;
    }();
    static constexpr auto leader = [] {
        std::array<std::size_t, leaf_count> first{};
        for (std::size_t k = 0; k < leaf_count; ++k) {
            first[k] = k;
            for (std::size_t m = 0; m < k; ++m)
                if (is_array_leaf_code(E::codes[k]) && is_array_leaf_code(E::codes[m]) &&
                    decode_leaf(E::codes[k]).argument == decode_leaf(E::codes[m]).argument) {
                    first[k] = m;
                    break;
                }
        }
        return first;
    }();
};

// What one chunk of a fused loop leaves: its reduction's state, the adjoints of its scalar leaves,
// and the adjoint lanes of shifted views that belong to the next chunk's first elements.
template <class P, std::size_t J>
struct fused_part {
    typename P::template kind<J>::template state<double> state{};
    std::array<double, P::template body<J>::leaf_count> scalar_adjoint{};
    std::array<lanes, P::template body<J>::leaf_count> carried{};
};

// What a fused loop does around each batch of elements (and the remaining elements): nothing,
// here; a loop over the rows of a matrix-vector product computes the rows' products before and
// pulls their adjoints back after (array/products.hpp).
struct no_hook {
    NABLA_ALWAYS_INLINE void before(std::size_t, std::size_t) const {}
    NABLA_ALWAYS_INLINE void after(std::size_t, std::size_t) const {}
};

// The fused loop over the n elements of a run (a chunk's: its first element is element c0 of the
// whole loop). Last: the chunk that ends the loop, which also zeroes the gradients past the views,
// adds the lanes it carries and runs the elements that do not fill a batch on doubles.
template <class P, std::size_t J, bool Last, class Run, class Hook = no_hook>
fused_part<P, J>
fused_range(Run& run, std::size_t n, double pre, std::size_t c0, const Hook& hook = {}) {
    using E = typename P::template body<J>;
    using S = schedule<typename E::dense>;
    using kind = typename P::template kind<J>;
    using F = fusion<P>;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    constexpr std::size_t leaf_count = E::leaf_count;
    constexpr auto shift = fused_layout<P, J>::shift;
    constexpr auto leader = fused_layout<P, J>::leader;
    fused_part<P, J> part;

    [&]<std::size_t... K>(std::index_sequence<K...>) {
        const auto pool = run.template pool_lanes<L>();
        const auto results = run.template result_lanes<L>();
        // The value accumulates as in the forward loop (four states, whole blocks of four
        // batches first), so that it equals the value computed alone, to the last bit.
        using state = typename kind::template state<L>;
        constexpr std::size_t unroll = 4;
        std::array<state, unroll> states{};
        states.fill(fused_initial<kind, L>(pre));
        std::array<L, leaf_count> previous{};
        std::array<L, leaf_count> scalar_adjoint{};
        const auto at = row_pointers<E>::template of<true>(run);
        // Where each argument's block goes: its leader's gradient from its first view.
        std::array<double*, leaf_count> block_at{};
        (
            [&] {
                if constexpr (takes_gradient<P>(E::codes[K]) && leader[K] == K) {
                    constexpr leaf_view v = decode_leaf(E::codes[K]);
                    block_at[K] = run.gradient[v.argument] + F::first_begin(J, v.argument);
                }
            }(),
            ...);
        // A copy the compiler knows no store reaches (a SIMD store may alias any memory).
        const std::size_t count = n;
        const std::size_t blocks_end = count - count % (unroll * W);
        // One batch at i: its adjoints stored; its value and its seed's shape returned, for the
        // caller to accumulate (a state passed in by reference would stay in memory).
        const auto batch = [&](std::size_t i) NABLA_INLINE_LAMBDA {
            hook.before(i, W);
            const auto leaves = load_leaves<L, E>(at, results, i);
            element_values<L, E, Run::pool_size> values{{}, pool, leaves};
            values.forward();
            const L v = values.value[S::size - 1];
            const L shape = kind::shape(v, pre);
            adjoint_sweep<S, L, Run::pool_size, std::array<L, leaf_count>> sweep{values, {}};
            sweep.run(shape);
            // Read from the sweep where used: a copy into an array of its own is kept in memory
            // by GCC, a store of 64 bytes per leaf and batch.
            const auto adjoint = [&]<std::size_t k>(std::integral_constant<std::size_t, k>) {
                return sweep.adjoint[index_of<S, placeholder<k>>];
            };
            std::array<L, leaf_count> moved{};
            (
                [&] {
                    const L a = adjoint(std::integral_constant<std::size_t, K>{});
                    if constexpr (is_array_leaf_code(E::codes[K])) {
                        if constexpr (shift[K] == 0) {
                            moved[K] = a;
                        } else {
                            moved[K] = shift_in<shift[K]>(previous[K], a);
                            previous[K] = a;
                        }
                    } else {
                        scalar_adjoint[K] += a;
                    }
                }(),
                ...);
            (
                [&] {
                    if constexpr (takes_gradient<P>(E::codes[K]) && leader[K] == K) {
                        if constexpr (P::accumulate)
                            add_to(block_at[K] + i, led_block<leader, K>(moved));
                        else
                            store_lanes(block_at[K] + i, led_block<leader, K>(moved));
                    }
                }(),
                ...);
            hook.after(i, W);
            return std::pair{v, shape};
        };
        const auto accumulate = [&](state& acc, const std::pair<L, L>& v) NABLA_INLINE_LAMBDA {
            if constexpr (accumulates<P, kind>)
                fused_add<kind>(acc, v.first, v.second);
        };
        std::size_t i = 0;
        // Whole blocks of four batches, batch u of a block into state u (indices the compiler
        // sees, so the states stay in registers), then the batches left into state 0.
        for (; i < blocks_end; i += unroll * W)
            for (std::size_t u = 0; u < unroll; ++u)
                accumulate(states[u], batch(i + u * W));
        for (; i + W <= count; i += W)
            accumulate(states[0], batch(i));
        auto scalar = fold_states<W>(states);
        if constexpr (!Last) {
            part.carried = previous;
            (
                [&] {
                    if constexpr (!is_array_leaf_code(E::codes[K]))
                        part.scalar_adjoint[K] = add_lanes(scalar_adjoint[K]);
                }(),
                ...);
            part.state = scalar;
            return;
        }
        // From here on the gradient arrays are accumulated: zero what is left of them, add the
        // lanes still carried, then run the remaining elements on doubles.
        (
            [&] {
                if constexpr (takes_gradient<P>(E::codes[K]) && leader[K] == K && !P::accumulate) {
                    constexpr leaf_view v = decode_leaf(E::codes[K]);
                    double* g = run.gradient[v.argument];
                    for (std::size_t t = i + F::first_begin(J, v.argument);
                         t < run.size[v.argument] - c0; ++t)
                        g[t] = 0.0;
                }
            }(),
            ...);
        if (i > 0) {
            (
                [&] {
                    if constexpr (takes_gradient<P>(E::codes[K]) && shift[K] > 0) {
                        constexpr leaf_view v = decode_leaf(E::codes[K]);
                        double* g = run.gradient[v.argument] + i + F::first_begin(J, v.argument);
                        for (std::size_t t = 0; t < shift[K]; ++t)
                            g[t] += lane_of(previous[K], W - shift[K] + t);
                    }
                }(),
                ...);
        }
        auto tail = fused_initial<kind, double>(pre);
        const auto scalar_pool = run.template pool_lanes<double>();
        const auto scalar_results = run.template result_lanes<double>();
        std::array<double, leaf_count> tail_adjoint{};
        const std::size_t rest = i;
        if (rest < count)
            hook.before(rest, count - rest);
        for (; i < count; ++i)
            fused_tail_element<P, J>(
                at, scalar_pool, scalar_results, i, pre, tail,
                [&]<std::size_t k>(std::integral_constant<std::size_t, k>, double a) {
                    if constexpr (takes_gradient<P>(E::codes[k]))
                        at.gradient[k][i] += a;
                    else if constexpr (!is_array_leaf_code(E::codes[k]))
                        tail_adjoint[k] += a;
                });
        if (rest < count)
            hook.after(rest, count - rest);
        (
            [&] {
                if constexpr (!is_array_leaf_code(E::codes[K]))
                    part.scalar_adjoint[K] = add_lanes(scalar_adjoint[K]) + tail_adjoint[K];
            }(),
            ...);
        scalar.merge(tail);
        part.state = scalar;
    }
    (std::make_index_sequence<leaf_count>{});
    return part;
}

// The forward loop of a fused group: the reduction's value, and each element's adjoints with the
// seed's shape, stored into the gradient arrays (the views of one array summed in registers);
// fusion<P> says when this is allowed. Over more than chunk_size elements, chunks of the loop
// run on the pool's threads; the lanes a chunk carries over are added once all are done, and the
// states merged in chunk order.
template <class P, std::size_t J, class Run, class Hook = no_hook>
void fused_group(Run& run, std::size_t n, const Hook& hook = {}) {
    using E = typename P::template body<J>;
    using kind = typename P::template kind<J>;
    using F = fusion<P>;
    constexpr std::size_t W = width<lanes>;
    constexpr auto shift = fused_layout<P, J>::shift;
    constexpr auto leader = fused_layout<P, J>::leader;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        // Elements before the first view of each argument get no adjoint.
        (
            [&] {
                if constexpr (takes_gradient<P>(E::codes[K]) && leader[K] == K && !P::accumulate) {
                    constexpr leaf_view v = decode_leaf(E::codes[K]);
                    double* g = run.gradient[v.argument];
                    for (std::size_t t = 0; t < F::first_begin(J, v.argument); ++t)
                        g[t] = 0.0;
                }
            }(),
            ...);
    }
    (std::make_index_sequence<E::leaf_count>{});
    double pre = 0.0;
    if constexpr (requires { typename kind::prepass; })
        pre = prepass<P, J, typename kind::prepass>(run);
    // A loop with a hook runs in one piece (its hook keeps state across batches).
    const chunking cut(extent{1, std::is_same_v<Hook, no_hook> ? n : 0});
    fused_part<P, J> total;
    if (cut.count == 1) {
        total = fused_range<P, J, true>(run, n, pre, 0, hook);
    } else {
        std::vector<fused_part<P, J>> parts(cut.count);
        for_each_chunk(cut.count, [&](std::size_t c) {
            Run sub = chunk_run<P, E>(run, cut, c);
            const std::size_t length = cut.part(c).cols;
            if (c + 1 == cut.count)
                parts[c] = fused_range<P, J, true>(sub, length, pre, cut.first_col(c));
            else
                parts[c] = fused_range<P, J, false>(sub, length, pre, cut.first_col(c));
        });
        total = parts[0];
        for (std::size_t c = 0; c < cut.count; ++c) {
            [&]<std::size_t... K>(std::index_sequence<K...>) {
                (
                    [&] {
                        if constexpr (takes_gradient<P>(E::codes[K]) && shift[K] > 0) {
                            if (c + 1 == cut.count)
                                return;
                            constexpr leaf_view v = decode_leaf(E::codes[K]);
                            double* g = run.gradient[v.argument] + cut.first_col(c + 1) +
                                        F::first_begin(J, v.argument);
                            for (std::size_t t = 0; t < shift[K]; ++t)
                                g[t] += lane_of(parts[c].carried[K], W - shift[K] + t);
                        }
                        if constexpr (!is_array_leaf_code(E::codes[K]))
                            if (c > 0)
                                total.scalar_adjoint[K] += parts[c].scalar_adjoint[K];
                    }(),
                    ...);
            }
            (std::make_index_sequence<E::leaf_count>{});
            if (c > 0)
                total.state.merge(parts[c].state);
        }
    }
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                if constexpr (!is_array_leaf_code(E::codes[K]))
                    run.unit_adjoint[J][E::codes[K] & ~scalar_leaf_flag] += total.scalar_adjoint[K];
            }(),
            ...);
    }
    (std::make_index_sequence<E::leaf_count>{});
    std::get<J>(run.state) = total.state;
    run.result[J] = kind::result(total.state, n);
}

// f(integral_constant<I>) for I = 0 .. N - 1, in order.
template <std::size_t N, class F>
NABLA_ALWAYS_INLINE void each_index(F&& f) {
    [&]<std::size_t... I>(std::index_sequence<I...>) NABLA_INLINE_LAMBDA {
        (f(std::integral_constant<std::size_t, I>{}), ...);
    }
    (std::make_index_sequence<N>{});
}

// How fused_grid_group writes each leaf's adjoints. All views of one argument write blocks that
// start at the argument's first column begin (a leaf's block is its adjoints moved up by its
// `shift`, the previous batch's lanes shifted in); a leaf's block goes into the gradient row its
// row begin points at.
template <class P, class E>
struct grid_plan {
    static constexpr std::size_t none = offset_limit;
    struct leaf_plan {
        bool gradient = false;         // the leaf's adjoints go into a gradient array
        std::size_t leader = 0;        // the first leaf of its argument
        std::size_t row = 0;           // its row begin
        std::size_t shift = 0;         // its column begin less its argument's first
        std::size_t first_column = 0;  // its argument's first column begin
        std::size_t first_row = 0;     // its argument's smallest row begin
        std::size_t last_row = 0;      // and largest
    };
    static constexpr auto plan = [] {
        std::array<leaf_plan, E::leaf_count + 1> out{};
        for (std::size_t k = 0; k < E::leaf_count; ++k) {
            out[k].leader = k;
            if (!takes_gradient<P>(E::codes[k]))
                continue;
            const leaf_view v = decode_leaf(E::codes[k]);
            out[k].gradient = true;
            out[k].row = v.begin;
            out[k].first_column = none;
            out[k].first_row = none;
            bool led = false;
            for (std::size_t m = 0; m < E::leaf_count; ++m) {
                if (!takes_gradient<P>(E::codes[m]))
                    continue;
                const leaf_view o = decode_leaf(E::codes[m]);
                if (o.argument != v.argument)
                    continue;
                if (!led) {
                    out[k].leader = m;
                    led = true;
                }
                out[k].first_column = std::min(out[k].first_column, o.begin1);
                out[k].first_row = std::min(out[k].first_row, o.begin);
                out[k].last_row = std::max(out[k].last_row, o.begin);
            }
            out[k].shift = v.begin1 - out[k].first_column;
        }
        return out;
    }();

    // The leaves, in pairs (u, m), whose blocks from element row r + u go into gradient row
    // r + first_row + D of leader K's argument, with U rows in a pass.
    template <std::size_t K, std::size_t D, std::size_t U>
    static constexpr auto sources = [] {
        std::array<std::pair<std::size_t, std::size_t>, U * E::leaf_count + 1> list{};
        std::size_t count = 0;
        for (std::size_t u = 0; u < U; ++u)
            for (std::size_t m = 0; m < E::leaf_count; ++m)
                if (plan[m].gradient && plan[m].leader == K &&
                    plan[m].row + u == plan[K].first_row + D)
                    list[count++] = {u, m};
        return std::pair{list, count};
    }();
};

// The sum of the blocks a gradient row of leader K's argument receives in a pass.
template <class G, std::size_t K, std::size_t D, std::size_t U, class Moved>
NABLA_ALWAYS_INLINE auto gathered_block(const Moved& moved) {
    constexpr auto sources = G::template sources<K, D, U>;
    return [&]<std::size_t... Q>(std::index_sequence<Q...>) {
        auto total = moved[sources.first[0].first][sources.first[0].second];
        ((total = total + moved[sources.first[Q + 1].first][sources.first[Q + 1].second]), ...);
        return total;
    }
    (std::make_index_sequence<sources.second - 1>{});
}

// Zeroes the few elements at the ends of a grid row with straight-line stores: a call to memset
// costs several times that for under two batches, and a loop of stores would be turned into one.
NABLA_ALWAYS_INLINE void zero_few(double* p, std::size_t count) {
    constexpr std::size_t w = width<lanes>;
    if (count > 2 * w) {
        std::fill(p, p + count, 0.0);
        return;
    }
    std::size_t k = 0;
    if (k + w <= count) {
        store_lanes(p + k, lanes(0.0));
        k += w;
    }
    if (k + w <= count) {
        store_lanes(p + k, lanes(0.0));
        k += w;
    }
    each_index<w - 1>([&]<std::size_t j>(std::integral_constant<std::size_t, j>) {
        if (k + j < count)
            p[k + j] = 0.0;
    });
}

// The fused loop of a two-dimensional group, U rows per pass (U elements of each column in
// flight). Each gradient row a pass reaches gets one block per batch: the sum of what every view
// and every row of the pass gives it. The row of the view that reads lowest is *stored* when a
// pass first reaches it; the rows above are added to, having been stored by an earlier pass. So
// a five-point stencil writes each gradient element (U + 2) / U times, not three times. What no
// view writes is zeroed.
template <class P, std::size_t J, class Run>
class grid_loop {
    using E = typename P::template body<J>;
    using S = schedule<typename E::dense>;
    using kind = typename P::template kind<J>;
    using G = grid_plan<P, E>;
    using L = lanes;
    static constexpr std::size_t W = width<L>;
    static constexpr std::size_t leaf_count = E::leaf_count;
    static constexpr auto plan = G::plan;
    static constexpr std::size_t unroll = 4;
    using adjoints = std::array<L, leaf_count + 1>;

public:
    // Two rows per pass; four where the element expression is small enough that four rows of
    // adjoints stay in registers.
    static constexpr std::size_t rows_per_pass = leaf_count <= 6 && S::size <= 16 ? 4 : 2;
    // Whether the loop can run in chunks of rows (fused_grid_group): each gradient row is reached
    // by at most two passes, so chunks two passes apart write no row in common.
    static constexpr bool chunkable = [] {
        for (std::size_t k = 0; k < leaf_count; ++k)
            if (plan[k].gradient && plan[k].last_row - plan[k].first_row > rows_per_pass)
                return false;
        return true;
    }();

    grid_loop(Run& run, extent e)
        : run_(run),
          e_(e),
          pool_(run.template pool_lanes<L>()),
          results_(run.template result_lanes<L>()),
          scalar_pool_(run.template pool_lanes<double>()),
          scalar_results_(run.template result_lanes<double>()) {}

    void operator()() {
        zero_unreached();
        prepare(first_value());
        rows(0, e_.rows, false);
        finish();
    }

    // Zeroes the gradient rows no pass stores: above the last row begin, and below the last row
    // plus it.
    void zero_unreached() {
        each_index<leaf_count>([&]<std::size_t k>(
                                   std::integral_constant<std::size_t, k>) NABLA_INLINE_LAMBDA {
            if constexpr (plan[k].gradient && plan[k].leader == k && !P::accumulate) {
                constexpr leaf_view v = decode_leaf(E::codes[k]);
                double* g = run_.gradient[v.argument];
                const std::size_t c = run_.cols[v.argument];
                std::fill(g, g + plan[k].last_row * c, 0.0);
                std::fill(g + (plan[k].last_row + e_.rows) * c, g + run_.rows[v.argument] * c, 0.0);
            }
        });
    }
    // The prepass's value over the whole loop (logsumexp's maximum), 0 without one.
    double first_value() {
        if constexpr (requires { typename kind::prepass; })
            return prepass<P, J, typename kind::prepass>(run_);
        else
            return 0.0;
    }
    void prepare(double pre) {
        pre_ = pre;
        states_.fill(fused_initial<kind, L>(pre_));
        tail_ = fused_initial<kind, double>(pre_);
    }
    // Element rows begin .. end - 1, U at a time; with `store_top`, the first pass also stores
    // the rows above its own, which the pass before it (a chunk's boundary) adds to later.
    void rows(std::size_t begin, std::size_t end, bool store_top) {
        std::size_t r = begin;
        if (store_top && r + rows_per_pass <= end) {
            pass<rows_per_pass, true, false>(r);
            r += rows_per_pass;
        }
        for (; r + rows_per_pass <= end; r += rows_per_pass)
            pass<rows_per_pass>(r);
        for (; r < end; ++r)
            pass<1>(r);
        run_.row = 0;
    }
    // The first pass of a chunk, run after the chunks: it adds to the rows below its own, which
    // the chunk's next pass stored.
    void boundary() {
        pass<rows_per_pass, false, true>(0);
        run_.row = 0;
    }
    // The state and the scalar leaves' adjoints of another part of the loop, after this one's.
    void absorb(grid_loop& part) {
        for (std::size_t k = 0; k <= leaf_count; ++k) {
            scalar_adjoint_[k] += part.scalar_adjoint_[k];
            tail_adjoint_[k] += part.tail_adjoint_[k];
        }
        auto theirs = fold_states<W>(part.states_);
        theirs.merge(part.tail_);
        tail_.merge(theirs);
    }
    // The scalar leaves' adjoints and the reduction's state and result, into the run.
    void finish() {
        each_index<leaf_count>([&]<std::size_t k>(std::integral_constant<std::size_t, k>)
                                   NABLA_INLINE_LAMBDA {
                                       if constexpr (!is_array_leaf_code(E::codes[k]))
                                           run_.unit_adjoint[J][E::codes[k] & ~scalar_leaf_flag] +=
                                               add_lanes(scalar_adjoint_[k]) + tail_adjoint_[k];
                                   });
        auto scalar = fold_states<W>(states_);
        scalar.merge(tail_);
        std::get<J>(run_.state) = scalar;
        run_.result[J] = kind::result(scalar, e_.size());
    }

private:
    // Row `row` of the gradient of leaf k's argument.
    template <std::size_t k>
    double* gradient_row(std::size_t row) const {
        constexpr leaf_view v = decode_leaf(E::codes[k]);
        return run_.gradient[v.argument] + row * run_.cols[v.argument];
    }

    // Element row `row`, batch i: the value accumulated, each gradient leaf's adjoints moved into
    // its block (the previous batch's lanes shifted in), the scalar leaves' summed.
    template <std::size_t u>
    NABLA_ALWAYS_INLINE void element(const row_pointers<E>& at,
                                     const std::array<L, Run::pool_size>& pool,
                                     const std::array<L, P::count + 1>& results,
                                     std::size_t i,
                                     adjoints& moved,
                                     adjoints& previous) {
        const auto leaves = load_leaves<L, E>(at, results, i);
        element_values<L, E, Run::pool_size> values{{}, pool, leaves};
        values.forward();
        const L v = values.value[S::size - 1];
        const L shape = kind::shape(v, pre_);
        if constexpr (accumulates<P, kind>)
            fused_add<kind>(states_[(u + (i / W) % 2 * 2) % unroll], v, shape);
        adjoint_sweep<S, L, Run::pool_size, std::array<L, leaf_count>> sweep{values, {}};
        sweep.run(shape);
        // Read through a function returning by value: a copy straight out of the sweep's array
        // keeps the array in memory with GCC, a 64-byte store per node and batch.
        const auto adjoint_of =
            [&]<std::size_t m>(std::integral_constant<std::size_t, m>)
                NABLA_INLINE_LAMBDA { return sweep.adjoint[index_of<S, placeholder<m>>]; };
        each_index<leaf_count>(
            [&]<std::size_t k>(std::integral_constant<std::size_t, k>) NABLA_INLINE_LAMBDA {
                const L a = adjoint_of(std::integral_constant<std::size_t, k>{});
                if constexpr (plan[k].gradient) {
                    if constexpr (plan[k].shift == 0) {
                        moved[k] = a;
                    } else {
                        moved[k] = shift_in<plan[k].shift>(previous[k], a);
                        previous[k] = a;
                    }
                } else if constexpr (!is_array_leaf_code(E::codes[k])) {
                    scalar_adjoint_[k] += a;
                }
            });
    }

    // Whether a pass of U rows stores gradient row d of leader k (counted from its first row
    // there), or adds to it: it stores the rows it reaches first; with StoreTop the rows above
    // those too, with AddBottom not those below its own U (see rows and boundary).
    template <std::size_t k, std::size_t U, bool StoreTop, bool AddBottom>
    static constexpr bool stores(std::size_t d) {
        return !P::accumulate && (plan[k].first_row + d >= plan[k].last_row || StoreTop) &&
               !(AddBottom && d >= U);
    }

    // Rows r .. r + U - 1.
    template <std::size_t U, bool StoreTop = false, bool AddBottom = false>
    void pass(std::size_t r) {
        const std::size_t n = e_.cols;
        // The gradient rows this pass stores; their heads zeroed.
        each_index<leaf_count>([&]<std::size_t k>(
                                   std::integral_constant<std::size_t, k>) NABLA_INLINE_LAMBDA {
            if constexpr (plan[k].gradient && plan[k].leader == k) {
                for (std::size_t d = 0; d < plan[k].last_row - plan[k].first_row + U; ++d)
                    if (stores<k, U, StoreTop, AddBottom>(d))
                        zero_few(gradient_row<k>(r + plan[k].first_row + d), plan[k].first_column);
            }
        });
        std::array<row_pointers<E>, U> at{};
        for (std::size_t u = 0; u < U; ++u) {
            run_.row = r + u;
            at[u] = row_pointers<E>::template of<false>(run_);
        }
        // Where each gradient row of the pass starts, from the first column: rows
        // r + first_row ... r + last_row + U - 1 of each argument, by leader.
        constexpr std::size_t span = [] {
            std::size_t s = 1;
            for (std::size_t k = 0; k < leaf_count; ++k)
                if (plan[k].gradient)
                    s = std::max(s, plan[k].last_row - plan[k].first_row + U);
            return s;
        }();
        std::array<std::array<double*, span>, leaf_count + 1> target{};
        each_index<leaf_count>(
            [&]<std::size_t k>(std::integral_constant<std::size_t, k>) NABLA_INLINE_LAMBDA {
                if constexpr (plan[k].gradient && plan[k].leader == k) {
                    for (std::size_t d = 0; d < plan[k].last_row - plan[k].first_row + U; ++d)
                        target[k][d] =
                            gradient_row<k>(r + plan[k].first_row + d) + plan[k].first_column;
                }
            });
        std::array<adjoints, U> previous{};
        // The constants in locals: members would be read again for every batch.
        const auto pool = pool_;
        const auto results = results_;
        std::size_t i = 0;
        for (; i + W <= n; i += W) {
            std::array<adjoints, U> moved{};
            each_index<U>([&]<std::size_t u>(std::integral_constant<std::size_t, u>)
                              NABLA_INLINE_LAMBDA {
                                  element<u>(at[u], pool, results, i, moved[u], previous[u]);
                              });
            each_index<leaf_count>(
                [&]<std::size_t k>(std::integral_constant<std::size_t, k>) NABLA_INLINE_LAMBDA {
                    if constexpr (plan[k].gradient && plan[k].leader == k) {
                        constexpr std::size_t rows = plan[k].last_row - plan[k].first_row + U;
                        each_index<rows>(
                            [&]<std::size_t d>(std::integral_constant<std::size_t, d>)
                                NABLA_INLINE_LAMBDA {
                                    if constexpr (G::template sources<k, d, U>.second > 0) {
                                        const L block = gathered_block<G, k, d, U>(moved);
                                        double* g = target[k][d] + i;
                                        if constexpr (stores<k, U, StoreTop, AddBottom>(d))
                                            store_lanes(g, block);
                                        else
                                            store_lanes(g, load<L>(g) + block);
                                    }
                                });
                    }
                });
        }
        // The rest of the stored rows is accumulated into: zero it, add the lanes still carried,
        // then run the remaining elements on doubles.
        each_index<leaf_count>(
            [&]<std::size_t k>(std::integral_constant<std::size_t, k>) NABLA_INLINE_LAMBDA {
                if constexpr (plan[k].gradient && plan[k].leader == k) {
                    constexpr leaf_view v = decode_leaf(E::codes[k]);
                    for (std::size_t d = 0; d < plan[k].last_row - plan[k].first_row + U; ++d)
                        if (stores<k, U, StoreTop, AddBottom>(d))
                            zero_few(gradient_row<k>(r + plan[k].first_row + d) +
                                         plan[k].first_column + i,
                                     run_.cols[v.argument] - plan[k].first_column - i);
                }
            });
        // (Each index of `previous` a constant, so that it can live in registers.)
        each_index<U>([&]<std::size_t u>(std::integral_constant<std::size_t, u>) {
            if (i == 0)
                return;
            each_index<leaf_count>([&]<std::size_t k>(std::integral_constant<std::size_t, k>) {
                if constexpr (plan[k].gradient && plan[k].shift > 0) {
                    const L carried = previous[u][k];
                    double* g = gradient_row<k>(r + u + plan[k].row) + plan[k].first_column + i;
                    for (std::size_t t = 0; t < plan[k].shift; ++t)
                        g[t] += lane_of(carried, W - plan[k].shift + t);
                }
            });
        });
        for (std::size_t u = 0; u < U; ++u) {
            run_.row = r + u;
            const auto at_tail = row_pointers<E>::template of<true>(run_);
            for (std::size_t t = i; t < n; ++t)
                fused_tail_element<P, J>(
                    at_tail, scalar_pool_, scalar_results_, t, pre_, tail_,
                    [&]<std::size_t k>(std::integral_constant<std::size_t, k>, double a) {
                        if constexpr (plan[k].gradient)
                            at_tail.gradient[k][t] += a;
                        else if constexpr (!is_array_leaf_code(E::codes[k]))
                            tail_adjoint_[k] += a;
                    });
        }
    }

    Run& run_;
    extent e_;
    std::array<L, Run::pool_size> pool_;
    std::array<L, P::count + 1> results_;
    std::array<double, Run::pool_size> scalar_pool_;
    std::array<double, P::count + 1> scalar_results_;
    double pre_ = 0.0;
    std::array<typename kind::template state<L>, unroll> states_{};
    typename kind::template state<double> tail_{};
    adjoints scalar_adjoint_{};
    std::array<double, leaf_count + 1> tail_adjoint_{};
};

// A grid's fused gradient loop. Over more than chunk_size elements it runs in chunks of whole
// rows, on threads if asked: each chunk but the first leaves its first pass, and starts with a
// pass that stores the rows above its own too; those first passes run after the chunks, adding
// to the rows both sides stored. Every gradient row is reached by at most two passes (else it
// runs in one piece), so chunks write no row in common, and each row is stored once and added to
// once whatever the order: the result is the same with any number of threads.
template <class P, std::size_t J, class Run>
void fused_grid_group(Run& run, extent e) {
    using G = grid_loop<P, J, Run>;
    using E = typename P::template body<J>;
    constexpr std::size_t U = G::rows_per_pass;
    chunking cut(e);
    if constexpr (G::chunkable) {
        // Whole passes per chunk, at least two; the last chunk takes the rows left over.
        cut.rows_each = std::max(2 * U, chunk_size / std::max<std::size_t>(1, e.cols) / U * U);
        cut.count = e.size() > chunk_size ? std::max<std::size_t>(1, e.rows / cut.rows_each) : 1;
    } else {
        cut.count = 1;
    }
    G whole{run, e};
    if (cut.count == 1) {
        whole();
        return;
    }
    whole.zero_unreached();
    const double pre = whole.first_value();
    whole.prepare(pre);
    std::vector<Run> runs;
    runs.reserve(cut.count);
    std::vector<G> parts;
    parts.reserve(cut.count);
    for (std::size_t c = 0; c < cut.count; ++c) {
        runs.push_back(chunk_run<P, E>(run, cut, c));
        const std::size_t rows = c + 1 < cut.count ? cut.rows_each : e.rows - cut.first_row(c);
        parts.emplace_back(runs.back(), extent{rows, e.cols});
        parts.back().prepare(pre);
    }
    for_each_chunk(cut.count, [&](std::size_t c) {
        parts[c].rows(c == 0 ? 0 : U, c + 1 < cut.count ? cut.rows_each : e.rows - cut.first_row(c),
                      c > 0);
    });
    for_each_chunk(cut.count - 1, [&](std::size_t c) { parts[c + 1].boundary(); });
    for (G& part : parts)
        whole.absorb(part);
    whole.finish();
}

// The fused groups' gradients, scaled once their reductions' adjoints are known.
template <class P, class Run>
void scale_fused(Run& run) {
    using F = fusion<P>;
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (
            [&] {
                constexpr std::size_t j = F::fused[Group];
                if constexpr (j != P::count) {
                    using kind = typename P::template kind<j>;
                    using E = typename P::template body<j>;
                    const std::size_t n = run.length[j];
                    if (n == 0)
                        return;
                    const double c =
                        kind::scale(std::get<j>(run.state), run.result[j], run.adjoint[j], n);
                    // Only what the loop read and wrote: an infinite scale must not turn the
                    // zeros elsewhere, or the adjoints of leaves it does not read, into NaN.
                    for (const std::size_t code : E::codes)
                        if (!is_array_leaf_code(code))
                            run.adjoint[code & ~scalar_leaf_flag] +=
                                c * run.unit_adjoint[j][code & ~scalar_leaf_flag];
                    if (c != 1.0) {
                        std::array<bool, offset_limit> done{};
                        for (const std::size_t code : E::codes) {
                            if (!takes_gradient<P>(code) || done[decode_leaf(code).argument])
                                continue;
                            const std::size_t a = decode_leaf(code).argument;
                            done[a] = true;
                            if constexpr (P::two_d_mask != 0) {
                                // Row by row, the columns some view reads in that row, each
                                // once: scaling a cell no view reads would turn its 0 into NaN
                                // when the scale is infinite.
                                const extent e = run.shape[j];
                                std::array<std::pair<std::size_t, std::size_t>, E::codes.size() + 1>
                                    spans{};
                                std::size_t top = offset_limit, bottom = 0;
                                for (const std::size_t other : E::codes)
                                    if (is_array_leaf_code(other) &&
                                        decode_leaf(other).argument == a) {
                                        top = std::min(top, decode_leaf(other).begin);
                                        bottom = std::max(bottom, decode_leaf(other).begin);
                                    }
                                for (std::size_t r = top; r < bottom + e.rows; ++r) {
                                    std::size_t count = 0;
                                    for (const std::size_t other : E::codes) {
                                        if (!is_array_leaf_code(other) ||
                                            decode_leaf(other).argument != a)
                                            continue;
                                        const leaf_view v = decode_leaf(other);
                                        if (r >= v.begin && r < v.begin + e.rows)
                                            spans[count++] = {v.begin1, v.begin1 + e.cols};
                                    }
                                    // Insertion sort: a handful of spans (std::sort here
                                    // draws a false -Warray-bounds from g++ 12).
                                    for (std::size_t q = 1; q < count; ++q)
                                        for (std::size_t t = q; t > 0 && spans[t] < spans[t - 1];
                                             --t)
                                            std::swap(spans[t], spans[t - 1]);
                                    double* g = run.gradient[a] + r * run.cols[a];
                                    std::size_t done_to = 0;
                                    for (std::size_t q = 0; q < count; ++q) {
                                        for (std::size_t t = std::max(done_to, spans[q].first);
                                             t < spans[q].second; ++t)
                                            g[t] *= c;
                                        done_to = std::max(done_to, spans[q].second);
                                    }
                                }
                                continue;
                            }
                            std::size_t last = 0;
                            for (const std::size_t other : E::codes)
                                if (is_array_leaf_code(other) && decode_leaf(other).argument == a &&
                                    decode_leaf(other).begin > last)
                                    last = decode_leaf(other).begin;
                            for (std::size_t t = F::first_begin(j, a); t < last + n; ++t)
                                run.gradient[a][t] *= c;
                        }
                    }
                }
            }(),
            ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

// The rows and columns of a group's loop, each member's recorded; throws if the members' shapes
// differ.
template <class P, std::size_t Group, class Run>
NABLA_ALWAYS_INLINE extent group_extent(Run& run) {
    constexpr auto members = group_members<P, Group>;
    const extent e =
        run.template extent_of<typename P::template body<members.first[0]>>("a reduction");
    [&]<std::size_t... M>(std::index_sequence<M...>) {
        const auto record = [&](std::size_t j, extent m) {
            if (m.rows != e.rows || m.cols != e.cols)
                throw shape_error("nabla: reductions over arrays of different shapes in one "
                                  "loop");
            run.shape[j] = m;
            run.length[j] = m.size();
        };
        (record(members.first[M],
                M == 0 ? e
                       : run.template extent_of<typename P::template body<members.first[M]>>(
                             "a reduction")),
         ...);
    }
    (std::make_index_sequence<members.second>{});
    return e;
}

// Every loop's length, checked before anything is written.
template <class P, class Run>
void check_lengths(Run& run) {
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (group_extent<P, Group>(run), ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

// The forward loop of one group over e (a chunk's, on the chunk's run): every member reduction
// accumulates in four states per lane (independent chains the processor overlaps), merged in a
// fixed order at the end; the members' states.
template <class P, std::size_t Group, class Run>
NABLA_ALWAYS_INLINE auto forward_range(Run& run, extent e) {
    constexpr auto members = group_members<P, Group>;
    const std::size_t n = e.cols;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    const auto pool = run.template pool_lanes<L>();
    const auto results = run.template result_lanes<L>();
    const auto scalar_pool = run.template pool_lanes<double>();
    const auto scalar_results = run.template result_lanes<double>();

    return [&]<std::size_t... M>(std::index_sequence<M...>) {
        constexpr std::size_t unroll = 4;
        std::tuple<
            std::array<typename P::template kind<members.first[M]>::template state<L>, unroll>...>
            lanes_states{};
        std::tuple<typename P::template kind<members.first[M]>::template state<double>...>
            tail_states{};
        for (run.row = 0; run.row < e.rows; ++run.row) {
            const std::tuple at{
                row_pointers<typename P::template body<members.first[M]>>::template of<false>(
                    run)...};
            std::size_t i = 0;
            if constexpr (W > 1) {
                for (; i + unroll * W <= n; i += unroll * W) {
                    for (std::size_t u = 0; u < unroll; ++u)
                        (std::get<M>(lanes_states)[u].add(
                             element_value<L, typename P::template body<members.first[M]>>(
                                 std::get<M>(at), pool, results, i + u * W)),
                         ...);
                }
                for (; i + W <= n; i += W)
                    (std::get<M>(lanes_states)[0].add(
                         element_value<L, typename P::template body<members.first[M]>>(
                             std::get<M>(at), pool, results, i)),
                     ...);
            }
            for (; i < n; ++i)
                (std::get<M>(tail_states)
                     .add(element_value<double, typename P::template body<members.first[M]>>(
                         std::get<M>(at), scalar_pool, scalar_results, i)),
                 ...);
        }
        run.row = 0;
        return std::tuple{[&] {
            auto scalar = fold_states<W>(std::get<M>(lanes_states));
            scalar.merge(std::get<M>(tail_states));
            return scalar;
        }()...};
    }
    (std::make_index_sequence<members.second>{});
}

// forward_range for one chunk of several: inlined once, where the whole loop is one chunk, and
// called here for the chunks, so that a small loop pays no call and a group's loop is not
// compiled twice into one function.
template <class P, std::size_t Group, class Run>
[[gnu::noinline]] auto forward_range_apart(Run& run, extent e) {
    return forward_range<P, Group>(run, e);
}

// Whether group Group's forward loop only computes a value nobody needs where the plan's value is
// not wanted (a pullback, sum(f * w)): the group is one sum, and the top is that sum itself, so
// its seed is 1 whatever the sum's value (a top that reads the sum otherwise, log(sum(...)) in a
// tangent's gradient, needs it).
template <class P, std::size_t Group>
inline constexpr bool value_only = [] {
    constexpr auto members = group_members<P, Group>;
    return members.second == 1 && fusion<P>::unit_seed[members.first[0]] &&
           !fusion<P>::read_by_body[members.first[0]] && fusion<P>::fused[Group] == P::count;
}();

template <class P, std::size_t Group, bool Gradient, class Run>
NABLA_ALWAYS_INLINE void forward_group(Run& run) {
    constexpr auto members = group_members<P, Group>;
    const extent e = group_extent<P, Group>(run);
    if constexpr (!P::value_wanted && value_only<P, Group>)
        return;
    if constexpr (Gradient && fusion<P>::fused[Group] != P::count) {
        if constexpr (P::two_d_mask != 0)
            fused_grid_group<P, fusion<P>::fused[Group]>(run, e);
        else
            fused_group<P, fusion<P>::fused[Group]>(run, e.cols);
        return;
    }
    const chunking cut(e);
    auto states = [&] {
        if (cut.count == 1)
            return forward_range<P, Group>(run, e);
        // Each chunk's states, merged in chunk order: the same result with any number of
        // threads.
        std::vector<decltype(forward_range<P, Group>(run, e))> parts(cut.count);
        for_each_chunk(cut.count, [&](std::size_t c) {
            Run sub = [&]<std::size_t... M>(std::index_sequence<M...>) {
                return chunk_run<P, typename P::template body<members.first[M]>...>(run, cut, c);
            }
            (std::make_index_sequence<members.second>{});
            parts[c] = forward_range_apart<P, Group>(sub, cut.part(c));
        });
        for (std::size_t c = 1; c < cut.count; ++c)
            [&]<std::size_t... M>(std::index_sequence<M...>) {
                (std::get<M>(parts[0]).merge(std::get<M>(parts[c])), ...);
            }
        (std::make_index_sequence<members.second>{});
        return parts[0];
    }();
    [&]<std::size_t... M>(std::index_sequence<M...>) {
        (
            [&] {
                constexpr std::size_t j = members.first[M];
                std::get<j>(run.state) = std::get<M>(states);
                run.result[j] = P::template kind<j>::result(std::get<M>(states), e.size());
            }(),
            ...);
    }
    (std::make_index_sequence<members.second>{});
}

// The staged adjoints of elements [start, end) of reduction J's row added into its gradient row.
template <class P, std::size_t J, class L, std::size_t N>
NABLA_ALWAYS_INLINE void flush_stage(const row_pointers<typename P::template body<J>>& at,
                                     const std::array<double*, N>& stage,
                                     std::size_t start,
                                     std::size_t end) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        (
            [&] {
                if constexpr (staged_leaf<P, J, K>) {
                    double* const g = at.gradient[K];
                    const double* const s = stage[K];
                    for (std::size_t i = start; i < end; i += width<L>)
                        add_to(g + i, load<L>(s + i));
                }
            }(),
            ...);
    }
    (std::make_index_sequence<N>{});
}

// The reverse loop of one group over e (a chunk's, on the chunk's run; `count` elements in the
// whole loop): the adjoints added into the gradient arrays, and those of the scalar leaves
// returned.
template <class P, std::size_t Group, class Run>
std::array<double, P::count + 1> reverse_range(Run& run, extent e, std::size_t count) {
    constexpr auto members = group_members<P, Group>;
    const std::size_t n = e.cols;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    const auto pool = run.template pool_lanes<L>();
    const auto results = run.template result_lanes<L>();
    const auto scalar_pool = run.template pool_lanes<double>();
    const auto scalar_results = run.template result_lanes<double>();
    std::array<L, P::count + 1> scalar_adjoints{};
    std::array<double, P::count + 1> tail_adjoints{};
    [&]<std::size_t... M>(std::index_sequence<M...>) {
        for (run.row = 0; run.row < e.rows; ++run.row) {
            const std::tuple at{
                row_pointers<typename P::template body<members.first[M]>>::template of<true>(
                    run)...};
            std::size_t i = 0;
            if constexpr (W > 1 && (stages<P, members.first[M]> || ...)) {
                // Blocks of batches: the staged leaves' adjoints into the buffers, then each
                // buffer added into its gradient row in a loop of its own.
                std::tuple<stage_buffers<P, members.first[M]>...> buffers;
                while (i + W <= n) {
                    const std::size_t start = i;
                    const std::size_t end = start + std::min(stage_block, (n - start) / W * W);
                    const std::tuple stage{[&]<class B>(B& b) {
                        std::array<double*, std::tuple_size_v<decltype(B::buffer)>> to{};
                        for (std::size_t k = 0; k < to.size(); ++k)
                            to[k] = b.buffer[k].data() - start;
                        return to;
                    }(std::get<M>(buffers))...};
                    for (; i < end; i += W)
                        (element_reverse<P, members.first[M], true>(run, std::get<M>(at), pool,
                                                                    results, scalar_adjoints, count,
                                                                    i, std::get<M>(stage).data()),
                         ...);
                    (flush_stage<P, members.first[M], L>(std::get<M>(at), std::get<M>(stage), start,
                                                         end),
                     ...);
                }
            } else if constexpr (W > 1) {
                for (; i + W <= n; i += W)
                    (element_reverse<P, members.first[M]>(run, std::get<M>(at), pool, results,
                                                          scalar_adjoints, count, i),
                     ...);
            }
            for (; i < n; ++i)
                (element_reverse<P, members.first[M]>(run, std::get<M>(at), scalar_pool,
                                                      scalar_results, tail_adjoints, count, i),
                 ...);
        }
        run.row = 0;
    }
    (std::make_index_sequence<members.second>{});
    for (std::size_t k = 0; k < P::count; ++k)
        tail_adjoints[k] += add_lanes(scalar_adjoints[k]);
    return tail_adjoints;
}

// The rows a grid's reverse loop writes a gradient row from, at most, besides its own: the
// spread of its gradient leaves' row offsets; offset_limit where a one-dimensional argument takes
// a gradient (every row adds into it).
template <class P, std::size_t Group>
inline constexpr std::size_t row_spread = [] {
    constexpr auto members = group_members<P, Group>;
    const auto& [codes, sizes] = P::leaf_codes;
    std::size_t low = offset_limit, high = 0;
    for (std::size_t m = 0; m < members.second; ++m) {
        const std::size_t j = members.first[m];
        for (std::size_t k = 0; k < sizes[j]; ++k) {
            if (!takes_gradient<P>(codes[j][k]))
                continue;
            const leaf_view v = decode_leaf(codes[j][k]);
            if (!P::two_d(v.argument))
                return offset_limit;
            low = std::min(low, v.begin);
            high = std::max(high, v.begin);
        }
    }
    return high >= low ? high - low : 0;
}();

// Reverse loops over more than chunk_size elements run in chunks: the even ones, then the odd
// ones, so that chunks running at once never add into the same gradient elements (views of one
// array reach at most 4095 elements past a chunk of one row; a grid's chunks are whole rows, more
// than its views' rows apart, else it runs in one piece); the scalar leaves' adjoints are summed
// in chunk order.
template <class P, std::size_t Group, class Run>
void reverse_group(Run& run) {
    constexpr auto members = group_members<P, Group>;
    const extent e = run.shape[members.first[0]];
    const chunking cut(e);
    std::array<double, P::count + 1> adjoints{};
    if (cut.count == 1 || (e.rows > 1 && cut.rows_each <= row_spread<P, Group>)) {
        adjoints = reverse_range<P, Group>(run, e, e.size());
    } else {
        std::vector<std::array<double, P::count + 1>> parts(cut.count);
        for (std::size_t parity = 0; parity < 2; ++parity)
            for_each_chunk((cut.count + 1 - parity) / 2, [&](std::size_t k) {
                const std::size_t c = 2 * k + parity;
                Run sub = [&]<std::size_t... M>(std::index_sequence<M...>) {
                    return chunk_run<P, typename P::template body<members.first[M]>...>(run, cut,
                                                                                        c);
                }
                (std::make_index_sequence<members.second>{});
                parts[c] = reverse_range<P, Group>(sub, cut.part(c), e.size());
            });
        for (const auto& part : parts)
            for (std::size_t k = 0; k < P::count; ++k)
                adjoints[k] += part[k];
    }
    for (std::size_t k = 0; k < P::count; ++k)
        run.adjoint[k] += adjoints[k];
}

// How many arguments graph G reads: one more than the highest array variable it reads.
template <class G>
inline constexpr std::size_t arguments_read = [] {
    std::size_t b = 0;
    for (const auto code : codes_of<filter_t<placeholder_predicate, schedule<G>>>::value)
        if (is_array_leaf_code(code) && decode_leaf(code).argument + 1 > b)
            b = decode_leaf(code).argument + 1;
    return b;
}();

inline constexpr std::size_t unknown_length = static_cast<std::size_t>(-1);

// An argument's length where its type holds it (std::array, std::span of fixed extent).
template <class C>
constexpr std::size_t static_length() {
    using T = std::remove_cvref_t<C>;
    if constexpr (requires { std::tuple_size<T>::value; } && !TwoDimensional<T>)
        return std::tuple_size<T>::value;
    else if constexpr (requires { T::extent; })
        return T::extent == std::dynamic_extent ? unknown_length : T::extent;
    else
        return unknown_length;
}

template <class Body, class... Args>
constexpr bool check_array_call() {
    constexpr bool arrays = (ArrayArgument<Args> && ...);
    static_assert(arrays,
                  "nabla: an array expression is called with arrays of double: one-dimensional "
                  "(std::vector<double>, std::array, std::span<const double>, "
                  "xt::xtensor<double, 1>) or two-dimensional (xt::xtensor<double, 2>, "
                  "nabla::matrix_ref), one per array variable.");
    if constexpr (arrays) {
        constexpr auto codes =
            codes_of<filter_t<placeholder_predicate, schedule<graph_t<Body>>>>::value;
        constexpr std::uint64_t mask = two_d_mask<Args...>();
        constexpr bool below_64 = [] {
            std::size_t k = 0;
            bool ok = true;
            ((ok = ok && (!TwoDimensional<Args> || k < 64), ++k), ...);
            return ok;
        }();
        static_assert(below_64, "nabla: two-dimensional arrays must be among an array "
                                "expression's first 64 arguments.");
        constexpr bool axes = [&] {
            for (const std::size_t code : codes)
                if (is_array_leaf_code(code)) {
                    const leaf_view v = decode_leaf(code);
                    const bool two = v.argument < 64 && ((mask >> v.argument) & 1) != 0;
                    if (!two && (v.begin1 != 0 || v.trim1 != 0))
                        return false;
                }
            return true;
        }();
        static_assert(axes, "nabla: a view on two axes (x(range<1, -1>, from<1>)) reads a "
                            "two-dimensional array; this argument is one-dimensional.");
        // Where every one-dimensional argument's length is in its type (std::array, a span of
        // fixed extent), the loops' lengths are checked here rather than when called.
        using P = program_for<Body, Args...>;
        constexpr std::array<std::size_t, sizeof...(Args) + 1> lengths{static_length<Args>()...};
        constexpr int fit = [&] {
            const auto loop_fits = [&](const auto& codes, std::size_t count) {
                std::size_t n = unknown_length;
                for (std::size_t k = 0; k < count; ++k) {
                    if (!is_array_leaf_code(codes[k]))
                        continue;
                    const leaf_view v = decode_leaf(codes[k]);
                    if (P::two_d(v.argument) || lengths[v.argument] == unknown_length)
                        return 0;
                    if (lengths[v.argument] < v.begin + v.trim)
                        return 1;
                    const std::size_t m = lengths[v.argument] - v.begin - v.trim;
                    if (n != unknown_length && m != n)
                        return 2;
                    n = m;
                }
                return 0;
            };
            const auto& [codes, sizes] = P::leaf_codes;
            for (std::size_t j = 0; j < P::count; ++j)
                if (const int r = loop_fits(codes[j], sizes[j]); r != 0)
                    return r;
            return loop_fits(P::top::codes, P::top::codes.size());
        }();
        static_assert(fit != 1, "nabla: a view drops more elements than its array has (the "
                                "array's length is in its type).");
        static_assert(fit != 2, "nabla: element-wise operands of different lengths (the arrays' "
                                "lengths are in their types).");
        return below_64 && axes && fit == 0;
    }
    return arrays;
}

// A two-dimensional array's layout: its rows contiguous, apart by at least their length and
// going forward (what an array expression reads and writes), else a shape_error naming it.
template <class C>
void check_grid_layout(const C& a, const std::string& what) {
    const auto rows = static_cast<std::ptrdiff_t>(a.shape()[0]);
    const auto cols = static_cast<std::ptrdiff_t>(a.shape()[1]);
    const auto row_step = static_cast<std::ptrdiff_t>(a.strides()[0]);
    const auto column_step = static_cast<std::ptrdiff_t>(a.strides()[1]);
    if (cols > 1 && column_step != 1)
        throw shape_error(what + " is strided along its rows (its elements must be contiguous "
                                 "within a row)");
    if (rows > 1 && row_step < cols)
        throw shape_error(what + " is not row-major with rows going forward (its rows are " +
                          std::to_string(row_step) + " elements apart, " + std::to_string(cols) +
                          " long)");
}

// The memory a two-dimensional array's elements span, in elements from its first.
template <class C>
std::size_t grid_span(const C& a) {
    const std::size_t rows = a.shape()[0], cols = a.shape()[1];
    if (rows == 0 || cols == 0)
        return 0;
    return (rows - 1) * (rows > 1 ? static_cast<std::size_t>(a.strides()[0]) : 0) + cols;
}

// An argument must be contiguous, or, with two dimensions, have contiguous rows (an xtensor
// view's elements start at data() + data_offset()); argument k, for the message.
template <class C>
void check_array_argument(const C& a, std::size_t k) {
    if constexpr (TwoDimensional<C>) {
        check_grid_layout(a, "nabla: argument " + std::to_string(k));
    } else {
        if constexpr (requires { a.dimension(); }) {
            if (a.dimension() != 1)
                throw shape_error("nabla: array expressions take one- or two-dimensional arrays "
                                  "(xt::xtensor<double, 1> or xt::xtensor<double, 2>; an "
                                  "xt::xarray's rank is not known when the expression is "
                                  "compiled); argument " +
                                  std::to_string(k) + " has " + std::to_string(a.dimension()) +
                                  " dimensions");
        }
        if constexpr (requires { a.data_offset(); }) {
            if (a.size() > 1 && a.strides()[0] != 1)
                throw shape_error("nabla: array expressions take contiguous arrays; argument " +
                                  std::to_string(k) +
                                  " is a strided view (copy it into an xt::xtensor first)");
        }
    }
}

// Where an argument's elements are: its first, its rows and columns, and the distance between
// its rows (a one-dimensional argument is one row).
struct argument_layout {
    const double* data = nullptr;
    std::size_t rows = 1;
    std::size_t cols = 0;
    std::size_t stride = 0;
};

template <class C>
argument_layout layout_of(const C& a) {
    if constexpr (TwoDimensional<C>) {
        const std::size_t rows = a.shape()[0], cols = a.shape()[1];
        return {first_element(a), rows, cols,
                rows > 1 ? static_cast<std::size_t>(a.strides()[0]) : cols};
    } else {
        const auto n = static_cast<std::size_t>(a.size());
        return {first_element(a), 1, n, n};
    }
}

template <class P, class Body, class... Args>
auto start_run(const array_expression<Body>& f, const Args&... args) {
    using G = graph_t<Body>;
    constexpr std::size_t bound = arguments_read<G>;
    static_assert(bound <= sizeof...(Args),
                  "nabla: too few arrays: the expression reads an array variable whose index is "
                  "not covered by the arguments given.");
    array_run<P, sizeof...(Args), constant_count<Body>> run{};
    std::size_t k = 0;
    const auto bind = [&]<class C>(const C& a) {
        check_array_argument(a, k);
        const argument_layout l = layout_of(a);
        run.data[k] = l.data;
        run.size[k] = a.size();
        run.rows[k] = l.rows;
        run.cols[k] = l.cols;
        run.stride[k] = l.stride;
        ++k;
    };
    (bind(args), ...);
    if constexpr (is_held_v<Body>) {
        for (std::size_t c = 0; c < run.pool.size(); ++c)
            run.pool[c] = static_cast<double>(f.body.constants[c]);
    }
    return run;
}

template <class P, bool Gradient, class Run>
void run_forward(Run& run) {
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        (forward_group<P, Group, Gradient>(run), ...);
    }
    (std::make_index_sequence<P::group_count>{});
}

// Whether an array-valued plan's elements form rows: it reads a two-dimensional argument.
template <class P>
inline constexpr bool rows_in_result = [] {
    for (const std::size_t code : P::top::codes)
        if (is_array_leaf_code(code) && P::two_d(decode_leaf(code).argument))
            return true;
    return false;
}();

// The elements of P's array-valued top, after the reductions it reads, written row by row into
// out (rows `out_stride` apart).
template <class P, class Run>
void write_range(Run& run, extent e, double* out, std::size_t out_stride) {
    using T = typename P::top;
    using L = lanes;
    constexpr std::size_t W = width<L>;
    const auto pool = run.template pool_lanes<double>();
    const auto results = run.template result_lanes<double>();
    const auto lanes_pool = run.template pool_lanes<L>();
    const auto lanes_results = run.template result_lanes<L>();
    for (run.row = 0; run.row < e.rows; ++run.row) {
        double* row = out + run.row * out_stride;
        const auto at = row_pointers<T>::template of<false>(run);
        std::size_t i = 0;
        if constexpr (W > 1) {
            for (; i + W <= e.cols; i += W)
                store_lanes(row + i, element_value<L, T>(at, lanes_pool, lanes_results, i));
        }
        for (; i < e.cols; ++i)
            row[i] = element_value<double, T>(at, pool, results, i);
    }
    run.row = 0;
}

template <class P, class Run>
void write_elements(Run& run, extent e, double* out, std::size_t out_stride) {
    const chunking cut(e);
    if (cut.count == 1) {
        write_range<P>(run, e, out, out_stride);
        return;
    }
    for_each_chunk(cut.count, [&](std::size_t c) {
        Run sub = chunk_run<P, typename P::top>(run, cut, c);
        write_range<P>(sub, cut.part(c), out + cut.first_row(c) * out_stride + cut.first_col(c),
                       out_stride);
    });
}

// The first two-dimensional argument whose type makes an array of a given shape (from_shape,
// as xt::xtensor<double, 2>), or the number of arguments.
template <class... Args>
constexpr std::size_t shape_source() {
    std::size_t k = 0, found = sizeof...(Args);
    ((
         found = found == sizeof...(Args) && TwoDimensional<Args> &&
                         requires {
                             std::remove_cvref_t<Args>::from_shape(std::array<std::size_t, 2>{});
                         }
                     ? k
                     : found,
         ++k),
     ...);
    return found;
}

template <class P, class Body, class... Args>
auto array_value_checked(const array_expression<Body>& f, const Args&... args) {
    auto run = start_run<P>(f, args...);
    if constexpr (P::scalar) {
        run_forward<P, false>(run);
        using T = typename P::top;
        const auto pool = run.template pool_lanes<double>();
        const auto results = run.template result_lanes<double>();
        return element_value<double, T>(run, pool, results, 0);
    } else {
        const extent e = run.template extent_of<typename P::top>("an element-wise expression");
        if constexpr (!rows_in_result<P>) {
            std::vector<double> out(e.cols);
            run_forward<P, false>(run);
            write_elements<P>(run, e, out.data(), e.cols);
            return out;
        } else {
            constexpr std::size_t k = shape_source<Args...>();
            static_assert(k < sizeof...(Args),
                          "nabla: a two-dimensional result is made like the first "
                          "two-dimensional argument that can make an array of its own "
                          "(xt::xtensor<double, 2>); with views or nabla::matrix_ref, write it "
                          "into an array of yours with nabla::evaluate_into(f, out, arrays...).");
            if constexpr (k < sizeof...(Args)) {
                using C = std::remove_cvref_t<std::tuple_element_t<k, std::tuple<Args...>>>;
                auto out = C::from_shape(std::array<std::size_t, 2>{e.rows, e.cols});
                run_forward<P, false>(run);
                write_elements<P>(run, e, out.data(), e.cols);
                return out;
            }
        }
    }
}

// Expressions with matrix-vector products run through array/products.hpp: the products first,
// then the loops over their values, then the products' pullbacks.
template <class Body, class... Args>
auto product_value(const array_expression<Body>& f, const Args&... args);
template <std::uint64_t Constants, bool Value, class Body, class... Args>
double product_gradient(const array_expression<Body>& f,
                        const std::array<double*, sizeof...(Args)>& gradients,
                        const Args&... args);
template <std::uint64_t Constants, class Body, class Cotangent, class... Args>
void product_vjp(const array_expression<Body>& f,
                 const std::array<double*, sizeof...(Args)>& gradients,
                 const Cotangent& w,
                 const Args&... args);
template <class Body, class Out, class... Args>
void product_evaluate_into(const array_expression<Body>& f, Out& out, const Args&... args);

template <class Body, class... Args>
auto array_value(const array_expression<Body>& f, const Args&... args) {
    if constexpr (has_products<graph_t<Body>>)
        return product_value(f, args...);
    else if constexpr (!check_array_call<Body, Args...>())
        return 0.0;
    else
        return array_value_checked<program_for<Body, Args...>>(f, args...);
}

// The first element of an array written into, and its row stride (its length for one dimension).
template <class C>
double* writable_first(C& c) {
    if constexpr (requires { c.data_offset(); })
        return c.data() + c.data_offset();
    else
        return c.data();
}

// The span of memory an argument's elements occupy, [first, last).
struct extent_in_memory {
    const double* first;
    const double* last;
    bool overlaps(const extent_in_memory& o) const {
        return first != last && o.first != o.last && first < o.last && o.first < last;
    }
};

template <class Run>
extent_in_memory memory_of(const Run& run, std::size_t k) {
    if (run.rows[k] == 0 || run.cols[k] == 0)
        return {run.data[k], run.data[k]};
    return {run.data[k], run.data[k] + (run.rows[k] - 1) * run.stride[k] + run.cols[k]};
}

// A gradient's run, set up: its lengths checked, its gradient arrays bound, those a fused loop
// does not write zeroed (they are accumulated into).
template <class P, class Body, class... Args>
auto start_gradient(const array_expression<Body>& f,
                    const std::array<double*, sizeof...(Args)>& gradients,
                    const Args&... args) {
    auto run = start_run<P>(f, args...);
    check_lengths<P>(run);
    run.gradient = gradients;
    for (std::size_t k = 0; k < sizeof...(Args) && !P::accumulate; ++k)
        if (!fusion<P>::fused_argument[k] && !P::constant(k))
            for (std::size_t t = 0; t < run.size[k]; ++t)
                run.gradient[k][t] = 0.0;
    return run;
}

// After the forward loops: the top expression's value and sweep, the fused loops' gradients
// scaled, and the reverse loops; the value.
template <class P, class Run>
double finish_gradient(Run& run) {
    using T = typename P::top;
    using S = schedule<typename T::dense>;
    const auto pool = run.template pool_lanes<double>();
    const auto results = run.template result_lanes<double>();
    const auto leaves = load_leaves<double, T>(run, results, 0);
    element_values<double, T, Run::pool_size> values{{}, pool, leaves};
    values.forward();
    adjoint_sweep<S, double, Run::pool_size, std::array<double, T::leaf_count>> sweep{values, {}};
    sweep.run();
    [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((run.adjoint[T::codes[K] & ~scalar_leaf_flag] +=
          sweep.adjoint[index_of<S, placeholder<K>>]),
         ...);
    }
    (std::make_index_sequence<T::leaf_count>{});

    scale_fused<P>(run);
    [&]<std::size_t... Group>(std::index_sequence<Group...>) {
        constexpr std::size_t last = P::group_count - 1;
        (
            [&] {
                if constexpr (fusion<P>::fused[last - Group] == P::count)
                    reverse_group<P, last - Group>(run);
            }(),
            ...);
    }
    (std::make_index_sequence<P::group_count>{});
    return values.value[S::size - 1];
}

// The value, with the gradients written into arrays shaped like the arguments (contiguous);
// P's constant arguments take none (their pointer may be null). Where P's value is not wanted,
// the value returned may lack the sums only it needed.
template <class P, class Body, class... Args>
double array_gradient_checked(const array_expression<Body>& f,
                              const std::array<double*, sizeof...(Args)>& gradients,
                              const Args&... args) {
    static_assert(P::scalar,
                  "nabla::value_and_grad: the array expression must be a scalar: reduce it "
                  "with sum, mean, prod, max, min, norm, dot or logsumexp.");
    auto run = start_gradient<P>(f, gradients, args...);
    run_forward<P, true>(run);
    return finish_gradient<P>(run);
}

template <class Body, class... Args>
double array_gradient(const array_expression<Body>& f,
                      const std::array<double*, sizeof...(Args)>& gradients,
                      const Args&... args) {
    if constexpr (has_products<graph_t<Body>>)
        return product_gradient<0, true>(f, gradients, args...);
    else if constexpr (!check_array_call<Body, Args...>())
        return 0.0;
    else
        return array_gradient_checked<program_for<Body, Args...>>(f, gradients, args...);
}

template <class Body, class... Args>
auto array_value_and_grad(const array_expression<Body>& f, const Args&... args) {
    array_value_and_gradient<decltype(gradient_like(args))...> out{
        0.0, std::tuple{gradient_like(args)...}};
    const std::array<double*, sizeof...(Args)> gradients = std::apply(
        [](auto&... g) { return std::array<double*, sizeof...(Args)>{g.data()...}; }, out.gradient);
    out.value = array_gradient(f, gradients, args...);
    return out;
}

// The caller's gradient arrays, one per argument, each contiguous and of its argument's size,
// none overlapping an argument (the loops read the arguments while they write the gradients:
// an overlap would feed gradients back in as values). `what` names the function for messages.
template <class... Gradients, class... Args>
std::array<double*, sizeof...(Args)>
bind_gradients(const char* what, const std::tuple<Gradients&...>& gradients, const Args&... args) {
    static_assert(sizeof...(Gradients) == sizeof...(Args),
                  "nabla: one gradient array per argument.");
    const std::array<std::size_t, sizeof...(Args)> sizes{static_cast<std::size_t>(args.size())...};
    std::array<double*, sizeof...(Args)> pointers{};
    std::array<extent_in_memory, sizeof...(Args)> inputs{};
    std::size_t k = 0;
    const auto input = [&]<class C>(const C& a) {
        const double* first = first_element(a);
        std::size_t span = a.size();
        if constexpr (TwoDimensional<C>)
            span = grid_span(a);
        inputs[k++] = {first, first + span};
    };
    (input(args), ...);
    k = 0;
    std::apply(
        [&](auto&... g) {
            const auto bind = [&]<class C>(C& gradient) {
                if (static_cast<std::size_t>(gradient.size()) != sizes[k])
                    throw shape_error(std::string(what) + ": gradient array " + std::to_string(k) +
                                      " has " + std::to_string(gradient.size()) +
                                      " elements, its argument " + std::to_string(sizes[k]));
                if constexpr (TwoDimensional<C>) {
                    const std::string name =
                        std::string(what) + ": gradient array " + std::to_string(k);
                    check_grid_layout(gradient, name);
                    if (gradient.shape()[0] > 1 &&
                        static_cast<std::size_t>(gradient.strides()[0]) != gradient.shape()[1])
                        throw shape_error(name + " is not contiguous (its rows lie apart)");
                } else if constexpr (requires { gradient.strides(); }) {
                    if (gradient.size() > 1 && gradient.strides()[0] != 1)
                        throw shape_error(std::string(what) + ": gradient array " +
                                          std::to_string(k) + " is not contiguous");
                }
                pointers[k] = writable_first(gradient);
                ++k;
            };
            (bind(g), ...);
        },
        gradients);
    for (std::size_t g = 0; g < sizeof...(Args); ++g) {
        const extent_in_memory written{pointers[g], pointers[g] + sizes[g]};
        for (std::size_t a = 0; a < sizeof...(Args); ++a)
            if (written.overlaps(inputs[a]))
                throw shape_error(std::string(what) + ": gradient array " + std::to_string(g) +
                                  " overlaps argument " + std::to_string(a) +
                                  "; write the gradient into an array of its own");
        // Gradients are stored, not added: two in one place would keep only the last.
        for (std::size_t h = 0; h < g; ++h)
            if (written.overlaps({pointers[h], pointers[h] + sizes[h]}))
                throw shape_error(std::string(what) + ": gradient arrays " + std::to_string(h) +
                                  " and " + std::to_string(g) + " overlap");
    }
    return pointers;
}

// Both return auto (nothing), so that a call instantiates them at once and their messages come
// before errors from the caller's use of the result.
template <std::uint64_t Constants, bool Accumulate, class Body, class Cotangent, class... Args>
auto apply_vjp_checked(const array_expression<Body>& f,
                       const std::array<double*, sizeof...(Args)>& gradients,
                       const Cotangent& w,
                       const Args&... args);

// w^T J at the arguments, J the Jacobian of array-valued f: the gradient of sum(f * w) with w a
// constant argument after the others, so that it runs as any gradient does (fused where the
// plan allows). The arguments of bit k of Constants take no gradient (their pointer may be null).
// With Accumulate it is added into what the gradient arrays hold.
template <std::uint64_t Constants = 0,
          bool Accumulate = false,
          class Body,
          class Cotangent,
          class... Args>
auto apply_vjp(const array_expression<Body>& f,
               const std::array<double*, sizeof...(Args)>& gradients,
               const Cotangent& w,
               const Args&... args) {
    if constexpr (has_products<graph_t<Body>> && Accumulate) {
        // The products' loops store their gradients: into arrays of their own, then added.
        const std::array<std::size_t, sizeof...(Args)> sizes{
            static_cast<std::size_t>(args.size())...};
        std::array<std::vector<double>, sizeof...(Args)> own;
        std::array<double*, sizeof...(Args)> into{};
        for (std::size_t k = 0; k < sizeof...(Args); ++k)
            if (gradients[k] != nullptr) {
                own[k].resize(sizes[k]);
                into[k] = own[k].data();
            }
        product_vjp<Constants>(f, into, w, args...);
        for (std::size_t k = 0; k < sizeof...(Args); ++k)
            for (std::size_t i = 0; i < own[k].size(); ++i)
                gradients[k][i] += own[k][i];
    } else if constexpr (has_products<graph_t<Body>>) {
        product_vjp<Constants>(f, gradients, w, args...);
    } else {
        apply_vjp_checked<Constants, Accumulate>(f, gradients, w, args...);
    }
}

template <std::uint64_t Constants, bool Accumulate, class Body, class Cotangent, class... Args>
auto apply_vjp_checked(const array_expression<Body>& f,
                       const std::array<double*, sizeof...(Args)>& gradients,
                       const Cotangent& w,
                       const Args&... args) {
    constexpr std::size_t N = sizeof...(Args);
    using F = program_for<Body, Args...>;
    constexpr std::size_t bound = arguments_read<graph_t<Body>>;
    static_assert(bound <= N,
                  "nabla::apply_vjp: too few arrays: the expression reads an array variable "
                  "whose index is not covered by the arrays given (the cotangent comes first).");
    if constexpr (bound <= N && check_array_call<Body, Args...>()) {
        static_assert(!F::scalar,
                      "nabla::apply_vjp: the expression is a scalar; its pullback is its gradient "
                      "times the cotangent: use nabla::grad.");
        static_assert(ArrayArgument<Cotangent>,
                      "nabla::apply_vjp: the cotangent is an array of double shaped like the "
                      "expression's value.");
        static_assert(N < 64, "nabla::apply_vjp: at most 63 arrays.");
        if constexpr (!F::scalar && ArrayArgument<Cotangent> && N < 64) {
            static_assert(TwoDimensional<Cotangent> == rows_in_result<F>,
                          "nabla::apply_vjp: the cotangent has the dimensions of the expression's "
                          "value (two-dimensional when the expression reads a two-dimensional "
                          "array).");
            const auto seeded = sum(f * array_expression<placeholder<array_leaf_code(N, 0, 0)>>{});
            using Seeded = typename std::remove_cvref_t<decltype(seeded)>::body_type;
            using P = program<graph_t<Seeded>,
                              two_d_mask<Args..., Cotangent>() & read_mask<graph_t<Seeded>>,
                              Constants | std::uint64_t{1} << N, false, Accumulate>;
            std::array<double*, N + 1> all{};
            for (std::size_t k = 0; k < N; ++k)
                all[k] = gradients[k];
            array_gradient_checked<P>(seeded, all, args..., w);
        }
    }
}

}  // namespace detail

template <class Body>
template <class... Args>
requires(sizeof...(Args) > 0 &&
         !(detail::is_slice_v<Args> ||
           ...)) auto array_expression<Body>::operator()(const Args&... args) const {
    return detail::array_value(*this, args...);
}

// The value and the gradient with respect to every array argument, each shaped like it.
template <class Body, class... Args>
auto value_and_grad(const array_expression<Body>& f, const Args&... args) {
    return detail::array_value_and_grad(f, args...);
}

// The value, the gradients written into the caller's arrays (one per argument, of its size,
// overwritten), so that an iteration allocates nothing:
//   double v = nabla::value_and_grad_into(f, std::tie(gx, gy), xs, ys);
template <class Body, class... Gradients, class... Args>
double value_and_grad_into(const array_expression<Body>& f,
                           const std::tuple<Gradients&...>& gradients,
                           const Args&... args) {
    static_assert(sizeof...(Gradients) == sizeof...(Args),
                  "nabla::value_and_grad_into: one gradient array per argument.");
    return detail::array_gradient(
        f, detail::bind_gradients("nabla::value_and_grad_into", gradients, args...), args...);
}

namespace detail {

template <class P, class Body, class Out, class... Args>
void evaluate_into_checked(const array_expression<Body>& f, Out& out, const Args&... args) {
    using O = std::remove_cvref_t<Out>;
    {
        static_assert(!P::scalar, "nabla::evaluate_into: the expression is a scalar (a "
                                  "reduction's result); call it: f(arrays...).");
        constexpr bool writable = requires(O & o) {
            { o.data() } -> std::convertible_to<double*>;
        };
        static_assert(detail::ArrayArgument<O> && writable,
                      "nabla::evaluate_into: the destination is an array of double that can be "
                      "written.");
        if constexpr (!P::scalar && detail::ArrayArgument<O> && writable) {
            static_assert(detail::TwoDimensional<O> == detail::rows_in_result<P>,
                          "nabla::evaluate_into: a two-dimensional value (the expression reads a "
                          "two-dimensional array) goes into a two-dimensional array, a "
                          "one-dimensional one into a one-dimensional array.");
            auto run = detail::start_run<P>(f, args...);
            const detail::extent e =
                run.template extent_of<typename P::top>("nabla::evaluate_into");
            std::size_t stride = e.cols;
            if constexpr (detail::TwoDimensional<O>) {
                if (out.shape()[0] != e.rows || out.shape()[1] != e.cols)
                    throw shape_error("nabla::evaluate_into: the value is " +
                                      std::to_string(e.rows) + " x " + std::to_string(e.cols) +
                                      ", the destination " + std::to_string(out.shape()[0]) +
                                      " x " + std::to_string(out.shape()[1]));
                detail::check_grid_layout(out, "nabla::evaluate_into: the destination");
                if (e.rows > 1)
                    stride = static_cast<std::size_t>(out.strides()[0]);
            } else {
                if (static_cast<std::size_t>(out.size()) != e.cols)
                    throw shape_error("nabla::evaluate_into: the value has " +
                                      std::to_string(e.cols) + " elements, the destination " +
                                      std::to_string(out.size()));
                if constexpr (requires { out.strides(); }) {
                    if (e.cols > 1 && out.strides()[0] != 1)
                        throw shape_error("nabla::evaluate_into: the destination must be "
                                          "contiguous");
                }
            }
            double* first = detail::writable_first(out);
            const detail::extent_in_memory written{
                first, e.size() == 0 ? first : first + (e.rows - 1) * stride + e.cols};
            bool aliased = false;
            for (std::size_t k = 0; k < sizeof...(Args); ++k)
                aliased = aliased || written.overlaps(detail::memory_of(run, k));
            detail::run_forward<P, false>(run);
            if (!aliased) {
                detail::write_elements<P>(run, e, first, stride);
            } else {
                std::vector<double> value(e.size());
                detail::write_elements<P>(run, e, value.data(), e.cols);
                for (std::size_t r = 0; r < e.rows; ++r)
                    std::copy_n(value.data() + r * e.cols, e.cols, first + r * stride);
            }
        }
    }
}

}  // namespace detail

// An array-valued expression's elements written into an array of the caller's (of the value's
// shape; a two-dimensional one may be part of a larger array, as nabla::matrix_ref or an
// xtensor view with contiguous rows): the interior of a grid, or an iteration without
// allocation. `out` may be one of the arguments: the value then goes through a temporary.
template <class Body, class Out, class... Args>
void evaluate_into(const array_expression<Body>& f, Out&& out, const Args&... args) {
    if constexpr (detail::has_products<detail::graph_t<Body>>)
        detail::product_evaluate_into(f, out, args...);
    else if constexpr (detail::check_array_call<Body, Args...>())
        detail::evaluate_into_checked<detail::program_for<Body, Args...>>(f, out, args...);
}

// w^T J: the pullback of array-valued f at the arrays, applied to the cotangent w (shaped like
// f's value), one gradient per array shaped like it; nothing is recorded, f is evaluated again.
//   auto gu = nabla::apply_vjp(step, w, u);               // JAX: vjp(step, u)[1](w)
template <class Body, class Cotangent, class A0, class... Args>
auto apply_vjp(const array_expression<Body>& f,
               const Cotangent& w,
               const A0& x0,
               const Args&... xs) {
    std::tuple gradients{detail::gradient_like(x0), detail::gradient_like(xs)...};
    const auto pointers =
        std::apply([](auto&... g) { return std::array<double*, 1 + sizeof...(Args)>{g.data()...}; },
                   gradients);
    detail::apply_vjp(f, pointers, w, x0, xs...);
    if constexpr (sizeof...(Args) == 0)
        return std::get<0>(std::move(gradients));
    else
        return gradients;
}

namespace detail {

// apply_vjp_into and add_vjp_into (`what`): the gradient arrays checked against the arguments and
// the cotangent.
template <bool Accumulate, class Body, class... Gradients, class Cotangent, class... Args>
void vjp_into(const char* what,
              const array_expression<Body>& f,
              const std::tuple<Gradients&...>& gradients,
              const Cotangent& w,
              const Args&... xs) {
    const auto pointers = detail::bind_gradients(what, gradients, xs...);
    if constexpr (detail::ArrayArgument<Cotangent>) {
        const double* first = detail::first_element(w);
        std::size_t span = static_cast<std::size_t>(w.size());
        if constexpr (detail::TwoDimensional<Cotangent>) {
            detail::check_grid_layout(w, "nabla::apply_vjp_into: the cotangent");
            span = detail::grid_span(w);
        }
        const detail::extent_in_memory cotangent{first, first + span};
        const std::array<std::size_t, sizeof...(Args)> sizes{
            static_cast<std::size_t>(xs.size())...};
        for (std::size_t g = 0; g < sizeof...(Args); ++g) {
            if (detail::extent_in_memory{pointers[g], pointers[g] + sizes[g]}.overlaps(cotangent))
                throw shape_error(std::string(what) + ": gradient array " + std::to_string(g) +
                                  " overlaps the cotangent; write it into an array of its own");
        }
    }
    detail::apply_vjp<0, Accumulate>(f, pointers, w, xs...);
}

}  // namespace detail

// The same, into the caller's arrays (overwritten): an adjoint time step without allocation.
//   nabla::apply_vjp_into(step, std::tie(gu), w, u);
template <class Body, class... Gradients, class Cotangent, class... Args>
void apply_vjp_into(const array_expression<Body>& f,
                    const std::tuple<Gradients&...>& gradients,
                    const Cotangent& w,
                    const Args&... xs) {
    static_assert(sizeof...(Gradients) == sizeof...(Args),
                  "nabla::apply_vjp_into: one gradient array per argument.");
    detail::vjp_into<false>("nabla::apply_vjp_into", f, gradients, w, xs...);
}

// w^T J added into the caller's arrays, which keep what they held: a sum of pullbacks, or the
// pullback of a nabla::custom_array adding into the tape's adjoints, with no array of its own.
//   nabla::add_vjp_into(step, std::tie(gu), w, u);        // gu += w^T J
template <class Body, class... Gradients, class Cotangent, class... Args>
void add_vjp_into(const array_expression<Body>& f,
                  const std::tuple<Gradients&...>& gradients,
                  const Cotangent& w,
                  const Args&... xs) {
    static_assert(sizeof...(Gradients) == sizeof...(Args),
                  "nabla::add_vjp_into: one gradient array per argument.");
    detail::vjp_into<true>("nabla::add_vjp_into", f, gradients, w, xs...);
}

// The gradient alone: the one array argument's, or a tuple of them.
template <class Body, class... Args>
auto grad(const array_expression<Body>& f, const Args&... args) {
    auto result = detail::array_value_and_grad(f, args...);
    if constexpr (sizeof...(Args) == 1)
        return std::get<0>(std::move(result.gradient));
    else
        return std::move(result.gradient);
}

}  // namespace nabla

template <class... Gradients>
struct std::tuple_size<nabla::array_value_and_gradient<Gradients...>>
    : std::integral_constant<std::size_t, 1 + sizeof...(Gradients)> {};

template <std::size_t I, class... Gradients>
struct std::tuple_element<I, nabla::array_value_and_gradient<Gradients...>> {
    using type = std::conditional_t<
        I == 0,
        double,
        std::tuple_element_t<(I == 0 ? 0 : I - 1), std::tuple<Gradients..., double>>>;
};
