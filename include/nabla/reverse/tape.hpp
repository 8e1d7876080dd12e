#pragma once
// nabla::tape<T>: the flat, statement-level tape of reverse mode for programs whose graph depends
// on run-time data (loops over run-time sizes, branches on values), and tape<T>::recording, which
// makes a tape the one that records on this thread.
//
//   nabla::tape<> t;
//   auto recording = t.record();
//   nabla::var x = t.input(2.0), y = t.input(5.0);
//   nabla::var f = log(x) + x * y - sin(y);     // one statement: two partials (x and y)
//   t.gradient(f);                              // t.adjoint(x) == 5.5
//
// A statement is one assignment to an active variable (reverse/active.hpp); the tape holds its
// (operand, partial) pairs in flat arrays that keep their memory across recordings, and sweeps
// them last to first. How a statement is built, merged and swept: docs/design.md, "Reverse mode
// inside". Each thread has its own active tape per value type, so threads record independently;
// recordings nest (an inner tape is active until its recording ends, then the outer one is
// again). Every recording has a generation no other recording of any tape has, so a variable of
// a cleared, destroyed or different tape is reported (nabla::tape_error), never read.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../core/zero.hpp"
#include "detail/storage.hpp"
#include "detail/sweep.hpp"
#include "errors.hpp"

namespace nabla {

template <class T>
class tape;
template <class T>
class active;

namespace detail {

struct tape_access;

// A fresh generation, never 0 (0 marks a passive variable) and never repeated within 2^32
// recordings across all tapes and threads.
inline std::uint32_t next_generation() {
    static std::atomic<std::uint32_t> counter{0};
    std::uint32_t g = counter.fetch_add(1, std::memory_order_relaxed) + 1;
    if (g == 0)
        g = counter.fetch_add(1, std::memory_order_relaxed) + 1;
    return g;
}

// The thread's active tape for value type T (null when none records).
template <class T>
inline constinit thread_local tape<T>* active_tape = nullptr;

}  // namespace detail

template <class T = double>
class tape {
public:
    tape() {
        pairs_.limit(detail::partial_limit);
        clear();
    }
    // A tape that holds at most max_entries statements, and at most max_entries partials (on the
    // tape, and of named subexpressions): a recording that needs more is a tape_error, not an
    // exhausted machine. The limit cannot exceed the default, 2^32 - 2 statements and 2^30 - 1
    // partials on the tape (indices are 32-bit; the top two bits of a statement's end mark an
    // accumulation and a reference).
    explicit tape(std::size_t max_entries) {
        const std::size_t limit =
            max_entries < detail::tape_limit ? max_entries : detail::tape_limit;
        pairs_.limit(limit < detail::partial_limit ? limit : detail::partial_limit);
        ends_.limit(limit);
        adjoints_.limit(limit);
        scratch_.limit(limit);
        clear();
    }
    tape(const tape&) = delete;
    tape& operator=(const tape&) = delete;
    ~tape() {
        // A tape that is destroyed while it records stops being the active tape; the variables
        // recorded on it are reported as stale from now on.
        if (detail::active_tape<T> == this)
            detail::active_tape<T> = previous_;
    }

    // Forgets every statement (keeping the memory) and starts a new generation: variables
    // recorded before are stale from now on.
    void clear() {
        generation_ = detail::next_generation();
        pairs_.clear();
        ends_.assign(1, 0);  // statement 0: the passive slot
        adjoints_.clear();
        scratch_.clear();
        referred_ = 0;
        customs_.clear();
    }

    // While the returned object lives, this tape records the active variables computed on this
    // thread. record() clears the tape first; resume() appends to what it holds. Recordings nest:
    // when one ends, the tape that was active before it is again. (Each recording keeps that tape
    // itself: kept in the tape, a second recording of the tape that records already made the
    // tape its own predecessor, so it stayed active after both had ended, and a tape destroyed
    // then left a dangling active tape.)
    class recording {
    public:
        explicit recording(tape& t) : tape_(t), previous_(detail::active_tape<T>) {
            if (previous_ != &t)
                t.previous_ = previous_;  // what ~tape restores, never the tape itself
            detail::active_tape<T> = &t;
        }
        recording(const recording&) = delete;
        recording& operator=(const recording&) = delete;
        ~recording() {
            if (detail::active_tape<T> == &tape_)
                detail::active_tape<T> = previous_;
        }

    private:
        tape& tape_;
        tape* previous_;
    };

    [[nodiscard]] recording record() {
        clear();
        return recording(*this);
    }
    [[nodiscard]] recording resume() { return recording(*this); }

    // A new independent variable with the given value, recorded as a statement without operands.
    active<T> input(const T& value);
    // n new independent variables at once: variables[k] = input(values[k]) for every k, with one
    // capacity check for all of them (the spans have one size, or it is a tape_error).
    void inputs(std::span<const T> values, std::span<active<T>> variables);

    // The number of statements recorded (the passive slot included) and of partials (the partials
    // of a collapsed intermediate that a statement refers to counted for that statement).
    std::size_t statements() const { return ends_.size(); }
    std::size_t partials() const { return pairs_.size() + referred_; }
    // Whether the recording holds entries with pullbacks of their own (custom functions, array
    // operations, MPI communication), whose sweeps do more than add into adjoints.
    bool holds_custom_entries() const { return !customs_.empty(); }
    // Bytes of tape memory this recording uses, and bytes reserved (kept across recordings).
    std::size_t bytes_used() const {
        constexpr std::size_t pair = sizeof(detail::tape_index) + sizeof(T);
        return (pairs_.size() + scratch_.size()) * pair +
               ends_.size() * sizeof(detail::tape_index) + adjoints_.size() * sizeof(T);
    }
    std::size_t bytes_reserved() const {
        constexpr std::size_t pair = sizeof(detail::tape_index) + sizeof(T);
        return (pairs_.capacity() + scratch_.capacity()) * pair +
               ends_.capacity() * sizeof(detail::tape_index) + adjoints_.capacity() * sizeof(T);
    }
    // (Never 0: 0 marks a passive variable.)
    NABLA_ALWAYS_INLINE std::uint32_t generation() const {
        const std::uint32_t g = generation_;
        NABLA_ASSUME(g != 0);
        return g;
    }

    // Adjoints. Sweeping needs no new recording: seed, sweep, read, then zero and seed again (a
    // Jacobian row by row).
    void zero_adjoints() { adjoints_.assign(ends_.size(), T(0)); }
    void seed(const active<T>& v, const T& adjoint = T(1));
    T adjoint(const active<T>& v) const;
    // The adjoints of n variables at once: adjoints[k] = adjoint(variables[k]) for every k, with
    // the checks adjoint() makes (the spans have one size, or it is a tape_error).
    void adjoints(std::span<const active<T>> variables, std::span<T> adjoints) const;
    // The adjoints of n variables recorded one after another from `first` on (t.inputs(values,
    // variables) records them so), after a sweep: a view of the tape's memory, valid until the
    // next recording or sweep.
    std::span<const T> adjoints_from(const active<T>& first, std::size_t n) const;
    // The reverse sweep over every statement, last to first. A custom operation (reverse/
    // custom.hpp) is one entry whose pullback runs once the adjoints of its outputs are complete.
    void sweep() {
        if (adjoints_.size() != ends_.size())
            detail::throw_tape_error("sweep() before zero_adjoints() and seed(): the adjoints "
                                     "are not set up for this recording");
        const detail::sweep_arrays<T> arrays{adjoints_.data(),    pairs_.indices(),
                                             pairs_.partials(),   scratch_.indices(),
                                             scratch_.partials(), ends_.data()};
        std::size_t s = ends_.size() - 1;
        for (auto c = customs_.rbegin(); c != customs_.rend(); ++c) {
            detail::sweep_down_to(arrays, s, c->first_output + c->outputs - 1);
            run_pullback(*c);
            s = c->first_output - 1;  // the outputs themselves have no operands
        }
        // The statements recorded before the first one with operands (the inputs, usually) have
        // nothing to propagate: the sweep stops above them. (They are the statements whose end is
        // 0: ends without their accumulation bit never decrease, and no statement accumulates
        // before the tape's first pair.)
        const detail::tape_index* end = ends_.data();
        const std::size_t leading_inputs =
            static_cast<std::size_t>(std::upper_bound(end, end + ends_.size(), 0u) - end) - 1;
        detail::sweep_down_to(arrays, s, leading_inputs);
    }
    // zero_adjoints, seed(output), sweep: then adjoint(x) is d output / d x.
    void gradient(const active<T>& output) {
        zero_adjoints();
        seed(output);
        sweep();
    }

private:
    // What the statement builders and custom operations use (reverse/detail/access.hpp).
    friend struct detail::tape_access;

    // A custom operation on the tape (reverse/custom.hpp): its outputs are statements
    // first_output .. first_output + outputs - 1 without operands; the pullback maps their
    // adjoints to the adjoints of its inputs.
    // An array operation (array/active.hpp) is an entry of the same kind whose pullback adds
    // into the adjoints itself (array_pullback, given the tape's adjoints), without copies.
    struct custom_entry {
        detail::tape_index first_output;
        detail::tape_index outputs;
        std::vector<detail::tape_index> inputs;
        std::function<std::vector<T>(const std::vector<T>&)> pullback;
        std::function<void(T*)> array_pullback;
    };

    // A variable of another recording must be passive (index 0), or it is stale.
    void check(std::uint32_t generation, detail::tape_index index) const {
        if (generation != generation_ && index != 0) [[unlikely]]
            detail::throw_stale();
    }
    // Ends the statement whose pairs were written last; its index. `marks`: the bits of its end,
    // accumulates_bit for an accumulation, which also adds the statement before it with partial
    // 1 (and comes after the tape's first pair). (Sizes never pass the limit, which the buffers
    // check when they grow.)
    NABLA_ALWAYS_INLINE detail::tape_index finish_statement(detail::tape_index marks = 0) {
        const std::size_t s = ends_.size();
        ends_.push(static_cast<detail::tape_index>(pairs_.size()) | marks);
        return static_cast<detail::tape_index>(s);
    }
    // The same for a statement whose two pairs refer to `count` partials in the scratch memory.
    NABLA_ALWAYS_INLINE detail::tape_index finish_referring_statement(detail::tape_index marks,
                                                                      std::size_t count) {
        referred_ += count - 2;
        return finish_statement(marks | detail::refers_bit);
    }

    void run_pullback(const custom_entry& c) {
        if (c.array_pullback) {
            c.array_pullback(adjoints_.data());
            return;
        }
        std::vector<T> w(c.outputs);
        bool any = false;
        for (std::size_t i = 0; i < c.outputs; ++i) {
            w[i] = adjoints_[c.first_output + i];
            any = any || !detail::exactly_zero(w[i]);
        }
        if (!any)
            return;
        const std::vector<T> g = c.pullback(w);
        if (g.size() != c.inputs.size())
            detail::throw_tape_error(detail::message()
                                     << "a custom operation's pullback returned " << g.size()
                                     << " adjoints for " << c.inputs.size() << " inputs");
        for (std::size_t i = 0; i < g.size(); ++i)
            if (c.inputs[i] != 0)
                adjoints_[c.inputs[i]] += g[i];
    }

    std::uint32_t generation_ = 0;
    // The statements' (operand, partial) pairs, and where each statement's pairs end.
    detail::pair_buffer<T> pairs_;
    detail::buffer<detail::tape_index> ends_;
    detail::buffer<T> adjoints_;
    // Collapsed named subexpressions: their local partials, expanded into the statements that
    // use them or referred to by them.
    detail::pair_buffer<T> scratch_;
    // The partials statements refer to in the scratch memory, less their two pairs on the tape.
    std::size_t referred_ = 0;
    std::vector<custom_entry> customs_;
    tape* previous_ = nullptr;
};

// The members that read active variables, defined outside the class so that they are not
// implicitly inline: inlined into the code that calls a gradient, they changed g++'s register
// allocation of the recording loops there, to their cost.
template <class T>
NABLA_ALWAYS_INLINE active<T> tape<T>::input(const T& value) {
    return active<T>(value, finish_statement(), generation_);
}

template <class T>
void tape<T>::inputs(std::span<const T> values, std::span<active<T>> variables) {
    detail::check_sizes("tape::inputs(values, variables)", values.size(), variables.size());
    const std::size_t n = values.size();
    const std::size_t first = ends_.size();
    ends_.reserve_more(n);
    detail::tape_index* const end = ends_.data() + first;
    const auto pairs_end = static_cast<detail::tape_index>(pairs_.size());
    const std::uint32_t generation = generation_;
    for (std::size_t k = 0; k < n; ++k) {
        end[k] = pairs_end;
        variables[k] = active<T>(values[k], static_cast<detail::tape_index>(first + k), generation);
    }
    ends_.advance(n);
}

template <class T>
void tape<T>::seed(const active<T>& v, const T& adjoint) {
    if (adjoints_.size() != ends_.size())
        detail::throw_tape_error("seed() before zero_adjoints(): the adjoints are not set up "
                                 "for this recording");
    if (v.index() == 0)
        return;  // a constant: nothing depends on it
    check(v.generation(), v.index());
    adjoints_[v.index()] += adjoint;
}

template <class T>
NABLA_ALWAYS_INLINE T tape<T>::adjoint(const active<T>& v) const {
    if (v.generation() == generation_ && adjoints_.size() == ends_.size()) [[likely]]
        return adjoints_[v.index()];
    if (v.index() == 0)
        return T(0);  // a constant
    check(v.generation(), v.index());
    detail::throw_not_swept("adjoint()");
}

template <class T>
void tape<T>::adjoints(std::span<const active<T>> variables, std::span<T> adjoints) const {
    detail::check_sizes("tape::adjoints(variables, adjoints)", adjoints.size(), variables.size());
    if (adjoints_.size() != ends_.size())
        detail::throw_not_swept("adjoints()");
    const T* const adjoint_of = adjoints_.data();
    const std::uint32_t generation = generation_;
    for (std::size_t k = 0; k < variables.size(); ++k) {
        const active<T>& v = variables[k];
        if (v.generation() != generation) [[unlikely]]
            adjoints[k] = adjoint(v);  // a constant (0), or stale: throws
        else
            adjoints[k] = adjoint_of[v.index()];
    }
}

template <class T>
std::span<const T> tape<T>::adjoints_from(const active<T>& first, std::size_t n) const {
    if (adjoints_.size() != ends_.size())
        detail::throw_not_swept("adjoints_from()");
    check(first.generation(), first.index());
    if (first.index() == 0 || n > adjoints_.size() - first.index())
        detail::throw_tape_error(detail::message() << "adjoints_from(first, n): the " << n
                                                   << " variables from `first` on are not all "
                                                      "on this tape");
    return {adjoints_.data() + first.index(), n};
}

}  // namespace nabla
