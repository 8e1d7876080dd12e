#pragma once
// What the statement builders and custom operations may touch of a tape, and nothing else: the
// tape's public members are its user's, these are the recording's.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "../../config.hpp"
#include "../tape.hpp"
#include "storage.hpp"

namespace nabla::detail {

struct tape_access {
    // A variable (or collapsed intermediate) of another recording must be passive (index 0), or
    // it is stale: a tape_error.
    template <class T>
    NABLA_ALWAYS_INLINE static void
    check(const tape<T>& t, std::uint32_t generation, tape_index index) {
        t.check(generation, index);
    }
    // Where the pairs of the statement being recorded go, and those of a collapsed intermediate.
    template <class T>
    NABLA_ALWAYS_INLINE static cursor<T> statement_cursor(tape<T>& t) {
        return {t.pairs_};
    }
    template <class T>
    NABLA_ALWAYS_INLINE static cursor<T> scratch_cursor(tape<T>& t) {
        return {t.scratch_};
    }
    // The partials of collapsed intermediates.
    template <class T>
    NABLA_ALWAYS_INLINE static pair_buffer<T>& scratch(tape<T>& t) {
        return t.scratch_;
    }
    // Ends the statement whose pairs were written last (tape<T>::finish_statement); its index.
    template <class T>
    NABLA_ALWAYS_INLINE static tape_index finish_statement(tape<T>& t, tape_index marks) {
        return t.finish_statement(marks);
    }
    template <class T>
    NABLA_ALWAYS_INLINE static tape_index
    finish_referring_statement(tape<T>& t, tape_index marks, std::size_t count) {
        return t.finish_referring_statement(marks, count);
    }
    // The index of the statement recorded last (0, the passive slot, when there is none), and
    // whether any pair is recorded (an accumulation comes after the tape's first pair).
    template <class T>
    NABLA_ALWAYS_INLINE static tape_index last_statement(const tape<T>& t) {
        return static_cast<tape_index>(t.ends_.size() - 1);
    }
    template <class T>
    NABLA_ALWAYS_INLINE static bool has_pairs(const tape<T>& t) {
        return t.pairs_.size() != 0;
    }
    // Records a custom operation (reverse/custom.hpp): its outputs are the `outputs` statements
    // from `first_output` on, its pullback maps their adjoints to those of `inputs`.
    template <class T, class Pullback>
    static void add_custom(tape<T>& t,
                           tape_index first_output,
                           tape_index outputs,
                           std::vector<tape_index> inputs,
                           Pullback&& pullback) {
        t.customs_.push_back(typename tape<T>::custom_entry{
            first_output,
            outputs,
            std::move(inputs),
            std::function<std::vector<T>(const std::vector<T>&)>(std::forward<Pullback>(pullback)),
            {}});
    }
    // The active variable of statement `index` of the recording `generation`.
    template <class T>
    NABLA_ALWAYS_INLINE static active<T>
    variable(const T& value, tape_index index, std::uint32_t generation) {
        return active<T>(value, index, generation);
    }
    // n new variables without operands, recorded one after another (an array's elements); the
    // index of the first.
    template <class T>
    static tape_index add_variables(tape<T>& t, std::size_t n) {
        const std::size_t first = t.ends_.size();
        t.ends_.reserve_more(n);
        tape_index* const end = t.ends_.data() + first;
        const auto pairs_end = static_cast<tape_index>(t.pairs_.size());
        for (std::size_t k = 0; k < n; ++k)
            end[k] = pairs_end;
        t.ends_.advance(n);
        return static_cast<tape_index>(first);
    }
    // Records an array operation (array/active.hpp) whose outputs are the `outputs` variables
    // from `first_output` on: in the sweep, pullback(adjoints) adds their adjoints, pulled back,
    // into those of its operands.
    template <class T, class Pullback>
    static void add_array_operation(tape<T>& t,
                                    tape_index first_output,
                                    tape_index outputs,
                                    Pullback&& pullback) {
        t.customs_.push_back(typename tape<T>::custom_entry{
            first_output,
            outputs,
            {},
            {},
            std::function<void(T*)>(std::forward<Pullback>(pullback))});
    }
};

}  // namespace nabla::detail
