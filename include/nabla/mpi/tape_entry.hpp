#pragma once
// nabla/mpi/tape_entry.hpp: what every operation on active variables shares: reading its inputs,
// writing new variables, and the tape entry whose sweep runs the adjoint communication.

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

// clang-format off
#include "../config.hpp"  // first: it checks the language standard
// clang-format on

#include "../reverse/detail/access.hpp"
#include "../reverse/tape.hpp"
#include "checking.hpp"
#include "combiners.hpp"

namespace nabla::mpi {

namespace detail {

using nabla::detail::tape_access;

// Memory for the values and adjoints that cross MPI, kept per thread, value type and slot
// (0: values sent, 1: values received, 2 and 3: adjoints in a sweep), so that a large buffer is
// paged in once rather than at every operation. Its contents are undefined until written.
template <class T>
std::span<T> scratch(std::size_t n, int slot) {
    thread_local std::vector<T> buffers[4];
    std::vector<T>& b = buffers[slot];
    if (b.size() < n)
        b.resize(n);
    return {b.data(), n};
}

// The operands of an entry: their indices on the tape (0 for constants), kept as the first
// index alone when they are one run of consecutive variables (an array's elements, the outputs
// of another operation), so that their adjoints are added by a loop over contiguous memory.
class operand_set {
public:
    operand_set() = default;
    // One pass over the inputs: checks that each is of t's recording or a constant (a stale
    // variable is a tape_error), writes its value into values[k] and its index.
    template <class T>
    operand_set(const nabla::tape<T>& t, std::span<const active<T>> inputs, T* values)
        : size_(inputs.size()) {
        const std::uint32_t generation = t.generation();
        bool run = true;
        for (std::size_t k = 0; k < size_; ++k) {
            const active<T>& x = inputs[k];
            values[k] = x.value;
            nabla::detail::tape_index i = x.index();
            if (x.generation() != generation) [[unlikely]] {
                tape_access::check(t, x.generation(), i);  // throws unless a constant
                i = 0;
            }
            if (k == 0)
                first_ = i;
            if (run && (i == 0 || i != first_ + k)) [[unlikely]] {
                run = false;
                list_.resize(size_);
                for (std::size_t j = 0; j < k; ++j)
                    list_[j] = static_cast<nabla::detail::tape_index>(first_ + j);
            }
            if (!run)
                list_[k] = i;
        }
    }
    std::size_t size() const { return size_; }
    nabla::detail::tape_index operator[](std::size_t k) const {
        return list_.empty() ? static_cast<nabla::detail::tape_index>(first_ + k) : list_[k];
    }
    // adjoints[operand k] += g[k] for every operand that is not a constant.
    template <class T>
    void add(T* adjoints, const T* g) const {
        if (list_.empty()) {
            T* a = adjoints + first_;
            for (std::size_t k = 0; k < size_; ++k)
                a[k] += g[k];
            return;
        }
        for (std::size_t k = 0; k < size_; ++k)
            if (list_[k] != 0)
                adjoints[list_[k]] += g[k];
    }

private:
    std::size_t size_ = 0;
    nabla::detail::tape_index first_ = 0;
    std::vector<nabla::detail::tape_index> list_;  // empty for a run
};

// What an operation reads of its active inputs: the tape that records (null when none does),
// their values (in the thread's scratch memory, slot 0) and, when a tape records, their operand
// set; all in one pass.
template <class T>
struct inputs_read {
    nabla::tape<T>* tape;
    std::span<const T> values;
    operand_set operands;
    T* buffer;  // values' memory, with `spare` more elements after them
};
template <class T>
inputs_read<T> read_inputs(std::span<const active<T>> in, std::size_t spare = 0) {
    nabla::tape<T>* on = nabla::detail::active_tape<T>;
    T* const buffer = scratch<T>(in.size() + spare, 0).data();
    const std::span<T> values(buffer, in.size());
    if (on == nullptr) {
        for (std::size_t k = 0; k < in.size(); ++k) {
            if (in[k].index() != 0)
                nabla::detail::throw_no_tape();
            values[k] = in[k].value;
        }
        return {nullptr, values, {}, buffer};
    }
    return {on, values, operand_set(*on, in, values.data()), buffer};
}

// Writes new variables with the given values into `outputs`: recorded one after another on `t`
// (the index of the first is returned), or constants when no tape records.
template <class T>
nabla::detail::tape_index
new_variables(nabla::tape<T>* t, const T* values, std::span<active<T>> outputs) {
    const std::size_t n = outputs.size();
    if (t == nullptr) {
        for (std::size_t k = 0; k < n; ++k)
            outputs[k] = active<T>(values[k]);
        return 0;
    }
    const nabla::detail::tape_index first = tape_access::add_variables(*t, n);
    const std::uint32_t generation = t->generation();
    for (std::size_t k = 0; k < n; ++k)
        outputs[k] = tape_access::variable(
            values[k], static_cast<nabla::detail::tape_index>(first + k), generation);
    return first;
}

// Adds g[k] into the adjoints of the operands.
template <class T>
void add_adjoints(T* adjoints, const operand_set& operands, const T* g) {
    operands.add(adjoints, g);
}

// Records an entry whose outputs are the n variables from `first` on (none: n = 0, first is
// where the next statement goes) and whose sweep runs pullback(adjoints, adjoint communicator).
template <class T, class Pullback>
void add_entry(nabla::tape<T>& t,
               nabla::detail::tape_index first,
               std::size_t n,
               const communicator& c,
               Pullback pullback) {
    if (n == 0)
        first = static_cast<nabla::detail::tape_index>(t.statements());
    // An entry of a collective checks in the sweep that the ranks sweep the same one.
    const collective_call* call = checking_state().on ? collective_call::current : nullptr;
    const bool checked = call != nullptr;
    const call_signature signature = checked ? call->signature : call_signature{};
    const char* what = checked ? call->what : "";
    tape_access::add_array_operation(
        t, first, static_cast<nabla::detail::tape_index>(n),
        [state = c.state(), pullback = std::move(pullback), checked, signature, what](T* adjoints) {
            if (checked)
                agree(what, state->for_sweep(), signature, true);
            pullback(adjoints, state->for_sweep());
        });
}

}  // namespace detail

}  // namespace nabla::mpi
