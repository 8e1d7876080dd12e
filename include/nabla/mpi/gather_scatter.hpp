#pragma once
// nabla/mpi/gather_scatter.hpp: allgather, reduce_scatter, alltoall, gather(v) and scatter(v).

#include <algorithm>
#include <climits>
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

// Gathering and scattering. allgather: every rank's n elements to every rank, in rank order
// (out holds size() * n). reduce_scatter: the element-wise sum over the ranks of size() * n
// elements, block r of it to rank r. gather/scatter: the same with a root; the v variants take
// each rank's count (and optionally where its block starts) at the root.

namespace detail {

// Values into `out` from a plain exchange of values, then the entry whose sweep runs the exchange
// the other way: exchange(send, receive, adjoint communicator) moves values, adjoint(out's
// adjoints, in's adjoints received, adjoint communicator) moves adjoints.
template <class T, class Forward, class Adjoint>
void exchange_active(std::span<const active<T>> in,
                     std::span<active<T>> out,
                     bool has_out,
                     const communicator& c,
                     Forward forward,
                     Adjoint adjoint) {
    inputs_read<T> read = read_inputs<T>(in);
    nabla::tape<T>* t = read.tape;
    const std::span<const T> values = read.values;
    const std::span<T> received = scratch<T>(has_out ? out.size() : 0, 1);
    forward(values.data(), received.data());
    nabla::detail::tape_index first = 0;
    if (has_out)
        first = new_variables<T>(t, received.data(), out);
    if (t == nullptr)
        return;
    add_entry<T>(*t, first, has_out ? out.size() : 0, c,
                 [operands = std::move(read.operands), first,
                  adjoint = std::move(adjoint)](T* adjoints, MPI_Comm comm) {
                     const std::span<T> g = scratch<T>(operands.size(), 2);
                     adjoint(adjoints + first, g.data(), comm);
                     add_adjoints(adjoints, operands, g.data());
                 });
}

// allgather, reduce_scatter and alltoall: plain and forward numbers go through `forward` as they
// are, active variables through exchange_active, whose entry's sweep runs `adjoint` (generic over
// the type of the adjoints).
template <class E, class Forward, class Adjoint>
void exchange(std::span<const E> in,
              std::span<E> out,
              const communicator& c,
              Forward forward,
              Adjoint adjoint) {
    if constexpr (Flat<E>) {
        std::vector<E> copy;
        forward(apart(in, out, copy), out.data());
    } else {
        exchange_active<typename E::value_type>(in, out, true, c, std::move(forward),
                                                std::move(adjoint));
    }
}

inline std::vector<int> packed_displacements(std::span<const int> counts) {
    std::vector<int> d(counts.size());
    long long at = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        if (counts[r] < 0)
            fail("a negative count (" + std::to_string(counts[r]) + ") for rank " +
                 std::to_string(r));
        d[r] = static_cast<int>(at);
        at += counts[r];
        if (at > INT_MAX)
            fail("the counts add up to more than one MPI message can count");
    }
    return d;
}

// The displacements of the v variants' blocks (packed in rank order when none are given), after
// checking on the root that there is a count and a displacement per rank, that every block fits
// in the buffer of `whole` elements, and that the root's own count is its `own` elements.
inline std::vector<int> blocks(const char* what,
                               std::span<const int> counts,
                               std::span<const int> displacements,
                               int ranks,
                               int root,
                               const char* whole_name,
                               std::size_t whole,
                               const char* own_name,
                               std::size_t own) {
    expect_size(what, "counts", counts.size(), static_cast<std::size_t>(ranks));
    std::vector<int> d = displacements.empty()
                             ? packed_displacements(counts)
                             : std::vector<int>(displacements.begin(), displacements.end());
    expect_size(what, "displacements", d.size(), static_cast<std::size_t>(ranks));
    (void)packed_displacements(counts);  // the counts' checks
    for (std::size_t k = 0; k < d.size(); ++k)
        if (d[k] < 0 ||
            static_cast<std::size_t>(d[k]) + static_cast<std::size_t>(counts[k]) > whole)
            fail(std::string(what) + ": rank " + std::to_string(k) + "'s block [" +
                 std::to_string(d[k]) + ", " + std::to_string(d[k] + counts[k]) +
                 ") does not fit in " + whole_name + ", which holds " + std::to_string(whole));
    const int root_count = counts[static_cast<std::size_t>(root)];
    if (static_cast<std::size_t>(root_count) != own)
        fail(std::string(what) + ": the root's count says " + std::to_string(root_count) +
             " elements, its " + own_name + " holds " + std::to_string(own));
    return d;
}

inline std::vector<int> scaled(std::span<const int> v, int by) {
    std::vector<int> s(v.begin(), v.end());
    for (int& x : s)
        x *= by;
    return s;
}

}  // namespace detail

template <buffer In, output_buffer Out>
void allgather(const In& in, Out&& out, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::allgather";
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::allgather, i.size()), [&] {
            detail::expect_size(what, "out", r.size(),
                                i.size() * static_cast<std::size_t>(c.size()));
        });
    (void)detail::count_of<E>(r.size(), what);
    const int count = detail::count_of<E>(i.size(), what);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [count, type, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Allgather(send, count, type, receive, count, type, comm),
                      "MPI_Allgather");
    };
    detail::exchange<E>(
        i, r, c, forward, [count, p = c.size()](const auto* w, auto* g, MPI_Comm comm) {
            using T = std::remove_pointer_t<decltype(g)>;
            // A reduce-scatter as an alltoall and a local sum: the bytes of the allgather,
            // in 1.0 to 1.7 times its time with Open MPI 4.1, where MPI_Reduce_scatter_block
            // took 4 times as long (docs/design.md, "Performance notes").
            using S = typename detail::flat<T>::scalar;
            const auto block = static_cast<std::size_t>(count);
            const std::span<T> all =
                detail::scratch<T>(block / detail::flat<T>::count * static_cast<std::size_t>(p), 3);
            detail::check(MPI_Alltoall(w, count, detail::wire_datatype<T>(), all.data(), count,
                                       detail::wire_datatype<T>(), comm),
                          "MPI_Alltoall (the adjoint of allgather)");
            const S* blocks = reinterpret_cast<const S*>(all.data());
            S* sum = reinterpret_cast<S*>(g);
            std::copy_n(blocks, block, sum);
            for (int q = 1; q < p; ++q)
                for (std::size_t k = 0; k < block; ++k)
                    sum[k] += blocks[static_cast<std::size_t>(q) * block + k];
        });
}

template <buffer In, output_buffer Out>
void reduce_scatter(const In& in, Out&& out, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::reduce_scatter";
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::reduce_scatter, i.size()), [&] {
            detail::expect_size(what, "in", i.size(),
                                r.size() * static_cast<std::size_t>(c.size()));
        });
    (void)detail::count_of<E>(i.size(), what);
    const int count = detail::count_of<E>(r.size(), what);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [count, type, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Reduce_scatter_block(send, receive, count, type, MPI_SUM, comm),
                      "MPI_Reduce_scatter_block");
    };
    detail::exchange<E>(i, r, c, forward, [count](const auto* w, auto* g, MPI_Comm comm) {
        using T = std::remove_pointer_t<decltype(g)>;
        detail::check(MPI_Allgather(w, count, detail::wire_datatype<T>(), g, count,
                                    detail::wire_datatype<T>(), comm),
                      "MPI_Allgather (the adjoint of reduce_scatter)");
    });
}

template <buffer In, output_buffer Out>
void alltoall(const In& in, Out&& out, const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::alltoall";
    const auto p = static_cast<std::size_t>(c.size());
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::alltoall, i.size()), [&] {
            detail::expect_size(what, "out", r.size(), i.size());
            if (i.size() % p != 0)
                detail::fail(std::string(what) + ": in holds " + std::to_string(i.size()) +
                             " elements, not a multiple of the " + std::to_string(p) + " ranks");
        });
    (void)detail::count_of<E>(i.size(), what);
    const int count = detail::count_of<E>(i.size() / p, what);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [count, type, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Alltoall(send, count, type, receive, count, type, comm), "MPI_Alltoall");
    };
    detail::exchange<E>(i, r, c, forward, [count](const auto* w, auto* g, MPI_Comm comm) {
        using T = std::remove_pointer_t<decltype(g)>;
        detail::check(MPI_Alltoall(w, count, detail::wire_datatype<T>(), g, count,
                                   detail::wire_datatype<T>(), comm),
                      "MPI_Alltoall (the adjoint of alltoall)");
    });
}

// gatherv: rank r's in (counts[r] elements) to the root's out at displacements[r] (packed in rank
// order without them). counts and displacements are read on the root only.
template <buffer In, output_buffer Out>
void gatherv(const In& in,
             Out&& out,
             std::span<const int> counts,
             std::span<const int> displacements,
             int root,
             const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::gatherv";
    constexpr int per = static_cast<int>(detail::wire<E>::count);
    const bool is_root = c.rank() == root;
    std::vector<int> wire_counts, wire_displacements, d;
    int count = 0;
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::gatherv, -1, root), [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            if (is_root) {
                d = detail::blocks(what, counts, displacements, c.size(), root, "out", r.size(),
                                   "in", i.size());
                (void)detail::count_of<E>(r.size(), what);
                wire_counts = detail::scaled(counts, per);
                wire_displacements = detail::scaled(d, per);
            }
            count = detail::count_of<E>(i.size(), what);
        });
    detail::agree_counts(what, "in", c.get(), root, static_cast<long long>(i.size()), counts);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [=, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Gatherv(send, count, type, receive, wire_counts.data(),
                                  wire_displacements.data(), type, root, comm),
                      "MPI_Gatherv");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(is_root ? detail::apart(i, r, copy) : i.data(),
                is_root ? detail::raw(r.data()) : nullptr);
    } else {
        using T = typename E::value_type;
        // The blocks arrive packed in rank order and become variables recorded one after
        // another, so that their adjoints go back packed too; out's elements between the blocks
        // are not touched.
        detail::inputs_read<T> read = detail::read_inputs<T>(i);
        nabla::tape<T>* t = read.tape;
        const std::span<const T> values = read.values;
        // Blocks in elements (packed: where each starts among the new variables), and the same
        // in plain numbers for MPI.
        std::vector<int> packed, packed_counts, packed_displacements;
        std::size_t total = 0;
        if (is_root) {
            packed = detail::packed_displacements(counts);
            total = static_cast<std::size_t>(packed.back() + counts.back());
            packed_counts = wire_counts;
            packed_displacements = detail::scaled(packed, per);
        }
        const std::span<T> got = detail::scratch<T>(total, 1);
        detail::check(MPI_Gatherv(values.data(), count, type, got.data(), packed_counts.data(),
                                  packed_displacements.data(), type, root, c.get()),
                      "MPI_Gatherv");
        if (!is_root) {
            if (t != nullptr)
                detail::add_entry<T>(
                    *t, 0, 0, c,
                    [operands = std::move(read.operands), count, root](T* adjoints,
                                                                       MPI_Comm adjoint) {
                        const std::span<T> g = detail::scratch<T>(operands.size(), 2);
                        detail::check(MPI_Scatterv(nullptr, nullptr, nullptr,
                                                   detail::wire_datatype<T>(), g.data(), count,
                                                   detail::wire_datatype<T>(), root, adjoint),
                                      "MPI_Scatterv (the adjoint of gatherv)");
                        detail::add_adjoints(adjoints, operands, g.data());
                    });
            return;
        }
        std::vector<E> variables(total);
        const auto first = detail::new_variables<T>(t, got.data(), std::span<E>(variables));
        for (std::size_t rank = 0; rank < packed.size(); ++rank)
            std::copy_n(variables.begin() + packed[rank], counts[rank], r.begin() + d[rank]);
        if (t != nullptr)
            detail::add_entry<T>(
                *t, first, total, c,
                [operands = std::move(read.operands), first, count, root,
                 packed_counts = std::move(packed_counts),
                 packed = std::move(packed_displacements)](T* adjoints, MPI_Comm adjoint) {
                    const std::span<T> g = detail::scratch<T>(operands.size(), 2);
                    detail::check(MPI_Scatterv(adjoints + first, packed_counts.data(),
                                               packed.data(), detail::wire_datatype<T>(), g.data(),
                                               count, detail::wire_datatype<T>(), root, adjoint),
                                  "MPI_Scatterv (the adjoint of gatherv)");
                    detail::add_adjoints(adjoints, operands, g.data());
                });
    }
}

template <buffer In, output_buffer Out>
void gatherv(
    const In& in, Out&& out, std::span<const int> counts, int root, const communicator& c) {
    gatherv(in, std::forward<Out>(out), counts, {}, root, c);
}

template <buffer In, output_buffer Out>
void gather(const In& in, Out&& out, int root, const communicator& c) {
    const auto n = static_cast<int>(std::ranges::size(in));
    const std::vector<int> counts(c.rank() == root ? static_cast<std::size_t>(c.size()) : 0, n);
    if (c.rank() == root)
        detail::expect_size("nabla::mpi::gather", "out (on the root)", std::ranges::size(out),
                            std::ranges::size(in) * static_cast<std::size_t>(c.size()));
    gatherv(in, std::forward<Out>(out), counts, {}, root, c);
}

// scatterv: the root's in, block r (counts[r] elements at displacements[r], packed in rank order
// without them) to rank r's out. counts and displacements are read on the root only.
template <buffer In, output_buffer Out>
void scatterv(const In& in,
              std::span<const int> counts,
              std::span<const int> displacements,
              Out&& out,
              int root,
              const communicator& c) {
    detail::same_elements<In, Out>();
    using E = detail::element_t<In>;
    using S = typename detail::wire<E>::scalar;
    auto i = detail::as_const_span(in);
    auto r = detail::as_span(out);
    constexpr const char* what = "nabla::mpi::scatterv";
    constexpr int per = static_cast<int>(detail::wire<E>::count);
    const bool is_root = c.rank() == root;
    std::vector<int> wire_counts, wire_displacements, d, block_counts;
    int count = 0;
    const detail::collective_call call(
        what, c.get(), detail::signature<E>(detail::collective::scatterv, -1, root), [&] {
            detail::check_rank(what, "root", root, c.size(), detail::peer::root);
            if (is_root) {
                d = detail::blocks(what, counts, displacements, c.size(), root, "in", i.size(),
                                   "out", r.size());
                block_counts.assign(counts.begin(), counts.end());
                (void)detail::count_of<E>(i.size(), what);
                wire_counts = detail::scaled(counts, per);
                wire_displacements = detail::scaled(d, per);
            }
            count = detail::count_of<E>(r.size(), what);
        });
    detail::agree_counts(what, "out", c.get(), root, static_cast<long long>(r.size()), counts);
    const MPI_Datatype type = detail::datatype<S>();
    auto forward = [=, comm = c.get()](const void* send, void* receive) {
        detail::check(MPI_Scatterv(send, wire_counts.data(), wire_displacements.data(), type,
                                   receive, count, type, root, comm),
                      "MPI_Scatterv");
    };
    if constexpr (detail::Flat<E>) {
        std::vector<E> copy;
        forward(is_root ? detail::raw(detail::apart(i, r, copy)) : nullptr, r.data());
    } else {
        using T = typename E::value_type;
        // The adjoints come back packed and are added into the root's inputs block by block, so
        // that blocks that overlap (one input sent to several ranks) sum their adjoints; inputs
        // outside every block get none.
        std::vector<int> packed;
        std::size_t total = 0;
        if (is_root) {
            packed = detail::packed_displacements(block_counts);
            total = static_cast<std::size_t>(packed.back() + block_counts.back());
        }
        detail::exchange_active<T>(
            is_root ? i : std::span<const E>(), r, true, c, forward,
            [=, n = i.size(), packed_counts = wire_counts,
             packed_displacements = detail::scaled(packed, per)](const T* w, T* g, MPI_Comm comm) {
                const std::span<T> blocks = detail::scratch<T>(total, 3);
                detail::check(MPI_Gatherv(w, count, detail::wire_datatype<T>(), blocks.data(),
                                          packed_counts.data(), packed_displacements.data(),
                                          detail::wire_datatype<T>(), root, comm),
                              "MPI_Gatherv (the adjoint of scatterv)");
                if (!is_root)
                    return;
                std::fill_n(g, n, T(0));
                for (std::size_t k = 0; k < packed.size(); ++k)
                    for (int j = 0; j < block_counts[k]; ++j)
                        g[d[k] + j] += blocks[static_cast<std::size_t>(packed[k] + j)];
            });
    }
}

template <buffer In, output_buffer Out>
void scatterv(
    const In& in, std::span<const int> counts, Out&& out, int root, const communicator& c) {
    scatterv(in, counts, {}, std::forward<Out>(out), root, c);
}

template <buffer In, output_buffer Out>
void scatter(const In& in, Out&& out, int root, const communicator& c) {
    const auto n = static_cast<int>(std::ranges::size(out));
    const std::vector<int> counts(c.rank() == root ? static_cast<std::size_t>(c.size()) : 0, n);
    if (c.rank() == root)
        detail::expect_size("nabla::mpi::scatter", "in (on the root)", std::ranges::size(in),
                            std::ranges::size(out) * static_cast<std::size_t>(c.size()));
    scatterv(in, counts, {}, std::forward<Out>(out), root, c);
}

}  // namespace nabla::mpi
