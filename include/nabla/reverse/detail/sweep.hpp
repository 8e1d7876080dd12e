#pragma once
// The reverse sweep: one loop over the statements, last to first, with no recursion, no virtual
// call and no allocation (docs/design.md, "Reverse mode inside"). For statement s with adjoint a:
//
//   if (a != 0)  for each (operand, partial) pair of s:  adjoint[operand] += partial * a
//
// plus a to the previous statement's adjoint for an accumulation, and the partials of a
// collapsed intermediate times a and the scale for a statement that refers to them.

#include <cstddef>

#include "../../config.hpp"
#include "../../core/zero.hpp"
#include "storage.hpp"

namespace nabla::detail {

// Whether the sweep takes a statement of two pairs apart from the loop over pairs, which it then
// keeps from unrolling: with clang++ only, which unrolled the loop, to the cost of statements of
// more pairs. With g++, which does not unroll it, the same code made RK4's sweep slower.
#if defined(__clang__)
inline constexpr bool sweep_two_pairs_apart = true;
#else
inline constexpr bool sweep_two_pairs_apart = false;
#endif

// What the sweep reads and writes: the tape's arrays.
template <class T>
struct sweep_arrays {
    T* adjoint;
    const tape_index* operand;
    const T* partial;
    const tape_index* scratch_operand;
    const T* scratch_partial;
    const tape_index* end;
};

// Statements s, s - 1, ..., last + 1. The adjoint of the statement just before the one being
// swept (an accumulator: sum += ...) is kept in a register, loaded before and stored after,
// which takes a store and a reload off the chain of dependent steps; the adjoints come out
// the same, added in the same order. An accumulation adds its adjoint to it first, as the
// pair (previous, 1) it stands for would. A statement that refers to a collapsed
// intermediate's partials goes through them from the scratch memory with its adjoint times
// the scale, in a loop of its own written out here (a function for both loops, taking or
// returning the previous statement's adjoint, made clang++ keep that adjoint in memory or
// add it in a chain; one loop over pointers chosen per statement made g++'s other statements
// slower). With clang++, a statement of two pairs (Rosenbrock's terms) is taken apart from
// the loop over pairs, which is kept from unrolling: unrolled, the loop cost statements of
// more pairs (RK4's); kept from unrolling alone, it cost Rosenbrock's. Out of line and
// aligned to 64 bytes, so that its loops sit at the same offsets from a 64-byte boundary in
// every program and its speed does not depend on where the caller's code puts it. (What else
// was tried is in docs/design.md, "Performance notes".)
template <class T>
[[gnu::noinline, gnu::aligned(64)]] void
sweep_down_to(const sweep_arrays<T>& arrays, std::size_t s, std::size_t last) {
    T* const adjoint = arrays.adjoint;
    const tape_index* const tape_operand = arrays.operand;
    const T* const tape_partial = arrays.partial;
    const tape_index* const scratch_operand = arrays.scratch_operand;
    const T* const scratch_partial = arrays.scratch_partial;
    const tape_index* const end = arrays.end;
    T a = adjoint[s];
    for (; s > last; --s) {
        const tape_index previous = static_cast<tape_index>(s - 1);
        T next = adjoint[previous];
        adjoint[s] = a;
        const tape_index stop = end[s];
        if (!exactly_zero(a)) {
            if (stop & accumulates_bit)
                next += a;
            const std::size_t first = end[previous] & end_mask;
            if (stop & refers_bit) [[unlikely]] {
                // (where, scale), (how many, unused): the partials of a collapsed
                // intermediate in the scratch memory, times the scale.
                const std::size_t from = tape_operand[first];
                const std::size_t to = from + tape_operand[first + 1];
                const T w = a * tape_partial[first];
                for (std::size_t k = from; k < to; ++k) {
                    const T c = scratch_partial[k] * w;
                    if (scratch_operand[k] == previous)
                        next += c;
                    else
                        adjoint[scratch_operand[k]] += c;
                }
            } else {
                const std::size_t after = stop & end_mask;
                if (sweep_two_pairs_apart && after - first == 2) {
                    const T c0 = tape_partial[first] * a;
                    const T c1 = tape_partial[first + 1] * a;
                    const tape_index o0 = tape_operand[first];
                    const tape_index o1 = tape_operand[first + 1];
                    if (o0 == previous)
                        next += c0;
                    else
                        adjoint[o0] += c0;
                    if (o1 == previous)
                        next += c1;
                    else
                        adjoint[o1] += c1;
                } else {
                    NABLA_NO_UNROLL
                    for (std::size_t k = first; k < after; ++k) {
                        const T c = tape_partial[k] * a;
                        if (tape_operand[k] == previous)
                            next += c;
                        else
                            adjoint[tape_operand[k]] += c;
                    }
                }
            }
        }
        a = next;
    }
    adjoint[s] = a;
}

}  // namespace nabla::detail
