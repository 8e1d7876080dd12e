#pragma once
// nabla/mpi/reduce.hpp: bcast, allreduce and reduce, and the gradient of a result every rank holds
// a copy of.

#include <algorithm>
#include <cstddef>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "buffers.hpp"
#include "tape_entry.hpp"

namespace nabla::mpi {

// bcast: the root's buffer to every rank. On the other ranks the buffer's variables are new ones;
// the root's stay as they are.

template <output_buffer B>
void bcast(B&& buffer, int root, const communicator& c) {
    using E = detail::element_t<B>;
    using S = typename detail::wire<E>::scalar;
    auto b = detail::as_span(buffer);
    constexpr const char* what = "nabla::mpi::bcast";
    int count = 0;
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::bcast, b.size(), root), [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            count = detail::count_of<E>(b.size(), what);
        });
    if constexpr (detail::Flat<E>) {
        detail::check(MPI_Bcast(detail::raw(b.data()), count, detail::datatype<S>(), root, c.get()),
                      "MPI_Bcast");
    } else {
        using T = typename E::value_type;
        const bool is_root = c.rank() == root;
        auto read = detail::read_inputs<T>(is_root ? std::span<const E>(b) : std::span<const E>());
        nabla::tape<T>* t = read.tape;
        const std::span<T> values = detail::scratch<T>(b.size(), 1);
        if (is_root)
            std::ranges::copy(read.values, values.begin());
        detail::check(MPI_Bcast(values.data(), count, detail::wire_datatype<T>(), root, c.get()),
                      "MPI_Bcast");
        if (is_root) {
            if (t != nullptr)
                detail::add_entry<T>(*t, 0, 0, c,
                                     [operands = std::move(read.operands), root,
                                      count](T* adjoints, MPI_Comm adjoint) {
                                         const std::span<T> sum =
                                             detail::scratch<T>(operands.size(), 2);
                                         std::ranges::fill(sum, T(0));
                                         detail::check(MPI_Reduce(MPI_IN_PLACE, sum.data(), count,
                                                                  detail::wire_datatype<T>(),
                                                                  MPI_SUM, root, adjoint),
                                                       "MPI_Reduce (the adjoint of bcast)");
                                         detail::add_adjoints(adjoints, operands, sum.data());
                                     });
        } else {
            const auto first = detail::new_variables<T>(t, values.data(), b);
            if (t != nullptr)
                detail::add_entry<T>(*t, first, b.size(), c,
                                     [first, root, count](T* adjoints, MPI_Comm adjoint) {
                                         detail::check(MPI_Reduce(adjoints + first, nullptr, count,
                                                                  detail::wire_datatype<T>(),
                                                                  MPI_SUM, root, adjoint),
                                                       "MPI_Reduce (the adjoint of bcast)");
                                     });
        }
    }
}

// One number from the root to every rank.
template <detail::Element E>
E bcast(E x, int root, const communicator& c) {
    bcast(std::span<E>(&x, 1), root, c);
    return x;
}
template <nabla::detail::ActiveExpression X>
auto bcast(const X&, int, const communicator&) {
    static_assert(detail::always_false<X>,
                  "nabla::mpi::bcast(x, root, c): x is an expression of active variables (such "
                  "as x * x), not a variable: name its value first, nabla::var y = x * x; then "
                  "nabla::mpi::bcast(y, root, c)");
    return active<typename nabla::detail::active_value_type<std::remove_cvref_t<X>>::type>{};
}

// ---------------------------------------------------------------------------------------------
// allreduce and reduce: element-wise reductions over the ranks. reduce writes `out` on the root
// only (the other ranks' out is not touched and may be empty).

namespace detail {

template <class T>
void reduce_active(std::span<const active<T>> in,
                   std::span<active<T>> out,
                   op o,
                   int root,
                   const communicator& c,
                   const char* what) {
    const bool all = root < 0;  // allreduce
    const bool has_out = all || c.rank() == root;
    inputs_read<T> read = read_inputs<T>(in);
    nabla::tape<T>* t = read.tape;
    const std::size_t n = in.size();
    const int count = count_of<active<T>>(n, what);
    const MPI_Datatype type = wire_datatype<T>();
    const std::span<T> result = scratch<T>(has_out ? n : 0, 1);
    auto run = [&](const void* send, void* receive, int cnt, MPI_Datatype dt, MPI_Op mo) {
        if (all)
            check(MPI_Allreduce(send, receive, cnt, dt, mo, c.get()), "MPI_Allreduce");
        else
            check(MPI_Reduce(send, receive, cnt, dt, mo, root, c.get()), "MPI_Reduce");
    };
    // What the sweep needs besides the adjoints: who won (min, max), the products (prod).
    std::vector<unsigned char> won;
    std::vector<product<T>> products;
    std::vector<T> own;
    if (o == op::sum) {
        run(read.values.data(), result.data(), count, type, MPI_SUM);
    } else if constexpr (!std::is_floating_point_v<T>) {
        fail(std::string(what) + ": min, max and prod of active variables of forward numbers are "
                                 "not implemented; sum is");
    } else if (o == op::min || o == op::max) {
        std::vector<located<T>> mine(n), best(has_out ? n : 0);
        for (std::size_t k = 0; k < n; ++k)
            mine[k] = {in[k].value, c.rank()};
        run(mine.data(), best.data(), count, located_datatype<T>(),
            o == op::min ? located_op<T, op::min>() : located_op<T, op::max>());
        for (std::size_t k = 0; k < result.size(); ++k)
            result[k] = best[k].value;
        if (t != nullptr) {
            if (all) {
                won.resize(n);
                for (std::size_t k = 0; k < n; ++k)
                    won[k] = best[k].rank == c.rank();
            } else if (c.rank() == root) {
                // The root keeps the winners' ranks for its broadcast in the sweep.
                own.resize(n);
                for (std::size_t k = 0; k < n; ++k)
                    own[k] = static_cast<T>(best[k].rank);
            }
        }
    } else {
        std::vector<product<T>> mine = factors<T>(in);
        products.resize(has_out ? n : 0);
        run(mine.data(), products.data(), count, product_datatype<T>(), product_op<T>());
        for (std::size_t k = 0; k < result.size(); ++k)
            result[k] = products[k].all;
        if (t != nullptr) {
            own.assign(read.values.begin(), read.values.end());
        } else
            products.clear();
    }
    nabla::detail::tape_index first = 0;
    if (has_out)
        first = new_variables<T>(t, result.data(), out);
    if (t == nullptr)
        return;

    operand_set operands = std::move(read.operands);
    const std::size_t outputs = has_out ? n : 0;
    const int rank = c.rank();
    if (o == op::sum) {
        add_entry<T>(*t, first, outputs, c,
                     [operands = std::move(operands), first, count, all, root,
                      rank](T* adjoints, MPI_Comm adjoint) {
                         const std::span<T> w = scratch<T>(operands.size(), 2);
                         if (all) {
                             check(MPI_Allreduce(adjoints + first, w.data(), count,
                                                 wire_datatype<T>(), MPI_SUM, adjoint),
                                   "MPI_Allreduce (the adjoint of allreduce)");
                         } else {
                             if (rank == root)
                                 std::copy_n(adjoints + first, w.size(), w.data());
                             check(MPI_Bcast(w.data(), count, wire_datatype<T>(), root, adjoint),
                                   "MPI_Bcast (the adjoint of reduce)");
                         }
                         add_adjoints(adjoints, operands, w.data());
                     });
    } else if constexpr (!std::is_floating_point_v<T>) {
        return;  // (refused above)
    } else if (o == op::min || o == op::max) {
        add_entry<T>(*t, first, outputs, c,
                     [operands = std::move(operands), won = std::move(won),
                      winners = std::move(own), first, count, all, root,
                      rank](T* adjoints, MPI_Comm adjoint) {
                         const std::size_t n = operands.size();
                         if (all) {
                             const std::span<T> w = scratch<T>(n, 2);
                             check(MPI_Allreduce(adjoints + first, w.data(), count,
                                                 wire_datatype<T>(), MPI_SUM, adjoint),
                                   "MPI_Allreduce (the adjoint of allreduce)");
                             for (std::size_t k = 0; k < n; ++k)
                                 if (won[k] && operands[k] != 0)
                                     adjoints[operands[k]] += w[k];
                             return;
                         }
                         // The root sends each output's adjoint with the rank that won it.
                         std::vector<located<T>> w(n);
                         if (rank == root)
                             for (std::size_t k = 0; k < n; ++k)
                                 w[k] = {adjoints[first + k], static_cast<int>(winners[k])};
                         check(MPI_Bcast(w.data(), count, located_datatype<T>(), root, adjoint),
                               "MPI_Bcast (the adjoint of reduce)");
                         for (std::size_t k = 0; k < n; ++k)
                             if (w[k].rank == rank && operands[k] != 0)
                                 adjoints[operands[k]] += w[k].value;
                     });
    } else {
        add_entry<T>(
            *t, first, outputs, c,
            [operands = std::move(operands), products = std::move(products), x = std::move(own),
             first, count, all, root, rank](T* adjoints, MPI_Comm adjoint) {
                const std::size_t n = operands.size();
                if (all) {
                    const std::span<T> w = scratch<T>(n, 2);
                    check(MPI_Allreduce(adjoints + first, w.data(), count, wire_datatype<T>(),
                                        MPI_SUM, adjoint),
                          "MPI_Allreduce (the adjoint of allreduce)");
                    // (A zero adjoint adds nothing, even where a partial is infinite or NaN, as
                    // in the tape's own sweep.)
                    for (std::size_t k = 0; k < n; ++k)
                        if (operands[k] != 0 && !nabla::detail::exactly_zero(w[k]))
                            adjoints[operands[k]] += w[k] * product_of_others(x[k], products[k]);
                    return;
                }
                // The root sends each output's adjoint in place of the product itself.
                std::vector<product<T>> w(n);
                if (rank == root)
                    for (std::size_t k = 0; k < n; ++k) {
                        w[k] = products[k];
                        w[k].all = adjoints[first + k];
                    }
                check(MPI_Bcast(w.data(), count, product_datatype<T>(), root, adjoint),
                      "MPI_Bcast (the adjoint of reduce)");
                for (std::size_t k = 0; k < n; ++k)
                    if (operands[k] != 0 && !nabla::detail::exactly_zero(w[k].all))
                        adjoints[operands[k]] += w[k].all * product_of_others(x[k], w[k]);
            });
    }
}

}  // namespace detail

template <buffer In, output_buffer Out>
void allreduce(const In& in, Out&& out, op o, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::allreduce";
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::allreduce, i.size(), -1, o),
        [&] { detail::expect_size(what, "out", r.size(), i.size()); });
    if constexpr (detail::Flat<E>) {
        const auto how = detail::reduction_of<E>(i.size(), o, what);
        std::vector<E> copy;  // in and out the same vector: in place
        const E* send = i.data() == r.data() ? nullptr : detail::apart(i, r, copy);
        detail::check(MPI_Allreduce(send == nullptr ? MPI_IN_PLACE : detail::raw(send),
                                    detail::raw(r.data()), how.count, how.type, how.operation,
                                    c.get()),
                      "MPI_Allreduce");
    } else {
        detail::reduce_active<typename E::value_type>(i, r, o, -1, c, what);
    }
}

// One number reduced over the ranks, on every rank.
template <detail::Element E>
E allreduce(const E& x, op o, const communicator& c) {
    E y{};
    allreduce(std::span<const E>(&x, 1), std::span<E>(&y, 1), o, c);
    return y;
}
// An expression of active variables (x * x) is neither a variable nor a buffer: nabla says so
// before the compiler lists every overload.
// (The return type is deduced from the body, so that the static_assert is the first error.)
template <nabla::detail::ActiveExpression X>
auto allreduce(const X&, op, const communicator&) {
    static_assert(detail::always_false<X>,
                  "nabla::mpi::allreduce(x, op, c): x is an expression of active variables "
                  "(such as x * x), not a variable: name its value first, nabla::var y = x * x; "
                  "then nabla::mpi::allreduce(y, op, c)");
    return active<typename nabla::detail::active_value_type<std::remove_cvref_t<X>>::type>{};
}

template <buffer In, output_buffer Out>
void reduce(const In& in, Out&& out, op o, int root, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::reduce";
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::reduce, i.size(), root, o), [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            if (c.rank() == root)
                detail::expect_size(what, "out (on the root)", r.size(), i.size());
        });
    if constexpr (detail::Flat<E>) {
        const auto how = detail::reduction_of<E>(i.size(), o, what);
        std::vector<E> copy;
        const bool is_root = c.rank() == root;
        const E* send = !is_root               ? i.data()
                        : i.data() == r.data() ? nullptr
                                               : detail::apart(i, r, copy);
        detail::check(MPI_Reduce(send == nullptr ? MPI_IN_PLACE : detail::raw(send),
                                 is_root ? detail::raw(r.data()) : nullptr, how.count, how.type,
                                 how.operation, root, c.get()),
                      "MPI_Reduce");
    } else {
        detail::reduce_active<typename E::value_type>(i, r, o, root, c, what);
    }
}

// ---------------------------------------------------------------------------------------------
// The gradient of a result every rank holds a copy of (the output of allreduce or bcast): seeding
// every copy would differentiate the sum of the copies, size() times the result, so the seed goes
// on the root's copy alone. Every rank calls it, and gets the derivatives of the one result with
// respect to its own variables. (A result that is a sum over the ranks of each rank's own part
// needs no such care: each rank's t.gradient(part) differentiates the sum.)
template <class T>
void replicated_gradient(nabla::tape<T>& t,
                         const active<T>& y,
                         const communicator& c,
                         int root = 0) {
    detail::check_rank("nabla::mpi::replicated_gradient", "root", root, c.size(),
                       detail::peer::root);
    t.zero_adjoints();
    if (c.rank() == root)
        t.seed(y);
    t.sweep();
}

}  // namespace nabla::mpi
