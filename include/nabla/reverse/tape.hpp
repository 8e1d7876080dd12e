#pragma once
// nabla::tape<T>: the flat, statement-level tape of reverse mode for programs whose graph depends
// on run-time data (loops over run-time sizes, branches on values).
//
// A statement is one assignment to an active variable (nabla::active<T>, reverse/active.hpp). Its
// right-hand side, an expression template, is collapsed into local partials when it is assigned,
// so the tape holds one entry per statement, not per operation:
//
//   statement s (its result is variable s):  operands op[e(s-1)] ... op[e(s)-1]
//                                             partials d[e(s-1)] ... d[e(s)-1]
//
// Three flat arrays (operand indices, partials, statement ends) and an adjoint array, all reused
// across recordings: clearing keeps their memory, so a tape that is recorded again and again
// stops allocating after the first recording. The reverse sweep is one loop over the statements,
// last to first, with no recursion, no virtual call and no allocation:
//
//   a = adjoint[s];  if (a != 0) for each operand k of s:  adjoint[op[k]] += d[k] * a
//
// A statement that accumulates (sum += x * y, with sum the statement recorded just before it)
// marks that with a bit of its end instead of storing the pair (sum, 1): the sweep adds a to
// sum's adjoint first. A statement whose adjoint is zero is skipped, so an infinite partial off the
// path to the output never turns into NaN (the strong structural zero of docs/conventions.md).
//
// A statement whose partials are those of one collapsed intermediate, scaled (the Lennard-Jones
// pair energy e += 4 (s6^2 - s6), s6 = 1 / r2^3: r2's six partials times dE/dr2), refers to them
// where the intermediate keeps them (the tape's scratch memory, reverse/active.hpp) instead of
// copying them: a second bit of its end marks it, and its two pairs hold (where, the scale) and
// (how many, unused). The sweep goes through those partials with the statement's adjoint times
// the scale.
//
// Variable 0 is the passive slot: constants have index 0 and are never recorded. Each recording
// has a generation, a number no other recording of any tape has; every active variable carries
// the generation it was recorded in, so a variable from a tape that was cleared or destroyed, or
// from another tape, is reported (nabla::tape_error) instead of reading someone else's adjoint.
//
// Each thread has its own active tape per value type, so threads record independently; recordings
// nest (an inner tape is active until its recording ends, then the outer one is again).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../config.hpp"
#include "../core/zero.hpp"

namespace nabla {

// Run-time misuse of the tape: a variable from a cleared, destroyed or different tape, an active
// variable used when no tape records, too many statements for the index type.
class tape_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

template <class T>
class tape;

namespace detail {

using tape_index = std::uint32_t;

// The most statements one recording can hold: indices are 32-bit.
inline constexpr std::size_t tape_limit = std::numeric_limits<tape_index>::max() - 1;

// The top bit of a statement's end marks an accumulation (sum += ...): the statement adds the
// statement recorded just before it with partial 1, kept as this bit instead of an (operand,
// partial) pair. The next bit marks a statement that refers to a collapsed intermediate's
// partials instead of holding its own. So the partials of one recording are at most 2^30 - 1.
inline constexpr tape_index accumulates_bit = tape_index(1) << 31;
inline constexpr tape_index refers_bit = tape_index(1) << 30;
inline constexpr tape_index end_mask = refers_bit - 1;
inline constexpr std::size_t partial_limit = end_mask;

// Whether the sweep takes a statement of two pairs apart from the loop over pairs, which it then
// keeps from unrolling: with clang++ only, which unrolled the loop, to the cost of statements of
// more pairs. With g++, which does not unroll it, the same code made RK4's sweep slower.
#if defined(__clang__)
inline constexpr bool sweep_two_pairs_apart = true;
#else
inline constexpr bool sweep_two_pairs_apart = false;
#endif

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

[[noreturn]] inline void throw_tape_error(const std::string& what);

// Grows a capacity by doubling, at least 64K entries at a time and never past `limit` entries;
// more than `limit` entries needed is a tape_error.
[[gnu::noinline]] inline std::size_t
grown_capacity(std::size_t capacity, std::size_t needed, std::size_t limit) {
    if (needed > limit)
        throw_tape_error("this recording needs more than " + std::to_string(limit) +
                         " statements or partials, the tape's limit (at most 2^32 - 2 "
                         "statements and 2^30 - 1 partials: indices are 32-bit; a smaller one is "
                         "set by tape(max_entries))");
    capacity = capacity < 65536 ? 65536 : capacity;
    while (capacity < needed)
        capacity *= 2;
    return capacity < limit ? capacity : limit;
}

// Flat arrays of one length (a column per type) that keep their memory when cleared and grow
// together by doubling, written through raw pointers after one capacity check per statement. The
// limit on their length is checked only when they grow.
template <class... Us>
class columns {
public:
    columns() = default;
    columns(const columns&) = delete;
    columns& operator=(const columns&) = delete;

    std::size_t size() const { return size_; }
    std::size_t capacity() const { return capacity_; }
    void clear() { size_ = 0; }
    void limit(std::size_t n) { limit_ = n; }

    // Room for n more entries.
    NABLA_ALWAYS_INLINE void reserve_more(std::size_t n) {
        if (size_ + n > capacity_) [[unlikely]]
            grow(size_ + n);
    }
    // Counts n entries written past the end (after reserve_more) as appended.
    NABLA_ALWAYS_INLINE void advance(std::size_t n) { size_ += n; }

    template <std::size_t I>
    NABLA_ALWAYS_INLINE auto* column() {
        return std::get<I>(data_).get();
    }
    template <std::size_t I>
    NABLA_ALWAYS_INLINE const auto* column() const {
        return std::get<I>(data_).get();
    }

private:
    [[gnu::noinline]] void grow(std::size_t needed) {
        const std::size_t capacity = grown_capacity(capacity_, needed, limit_);
        std::apply([&](auto&... column) { (move_to_bigger(column, capacity), ...); }, data_);
        capacity_ = capacity;
    }
    template <class U>
    void move_to_bigger(std::unique_ptr<U[]>& column, std::size_t capacity) {
        std::unique_ptr<U[]> bigger(new U[capacity]);
        for (std::size_t i = 0; i < size_; ++i)
            bigger[i] = column[i];
        column = std::move(bigger);
    }

    std::tuple<std::unique_ptr<Us[]>...> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
    std::size_t limit_ = tape_limit;
};

// One flat array (statement ends, adjoints).
template <class U>
class buffer : public columns<U> {
public:
    U* data() { return this->template column<0>(); }
    const U* data() const { return this->template column<0>(); }
    U& operator[](std::size_t i) { return data()[i]; }
    const U& operator[](std::size_t i) const { return data()[i]; }

    NABLA_ALWAYS_INLINE void push(const U& u) {
        this->reserve_more(1);
        data()[this->size()] = u;
        this->advance(1);
    }
    // Sets every entry of the first n to `u` (n entries in all).
    void assign(std::size_t n, const U& u) {
        this->clear();
        this->reserve_more(n);
        for (std::size_t i = 0; i < n; ++i)
            data()[i] = u;
        this->advance(n);
    }
};

// (operand index, partial) pairs as two flat arrays with one size and one capacity, so a
// statement's pairs cost one capacity check and one size update.
template <class T>
class pair_buffer : public columns<tape_index, T> {
public:
    tape_index* indices() { return this->template column<0>(); }
    const tape_index* indices() const { return this->template column<0>(); }
    T* partials() { return this->template column<1>(); }
    const T* partials() const { return this->template column<1>(); }
};

// Writes (operand index, partial) pairs at the end of a pair buffer through local pointers, so
// the buffer's size is read once and stored once per statement, not per partial.
template <class T>
struct cursor {
    pair_buffer<T>& pairs;
    tape_index* index = nullptr;
    T* partial = nullptr;
    std::size_t written = 0;

    // Room for n more pairs; pointers to where they go.
    NABLA_ALWAYS_INLINE void open(std::size_t n) {
        pairs.reserve_more(n);
        index = pairs.indices() + pairs.size();
        partial = pairs.partials() + pairs.size();
        written = 0;
    }
    NABLA_ALWAYS_INLINE void push(tape_index i, const T& p) {
        index[written] = i;
        partial[written] = p;
        ++written;
    }
    // The pair is written in any case, and counted when `keep` is true.
    NABLA_ALWAYS_INLINE void push_if(tape_index i, const T& p, bool keep) {
        index[written] = i;
        partial[written] = p;
        written += keep;
    }
    NABLA_ALWAYS_INLINE void close() { pairs.advance(written); }
};

[[noreturn]] inline void throw_tape_error(const std::string& what) {
    throw tape_error("nabla::tape: " + what);
}

// What reading adjoints before a sweep gets (`what`: the call).
[[noreturn]] inline void throw_not_swept(const char* what) {
    throw_tape_error(std::string(what) +
                     " before a sweep: call gradient(output), or zero_adjoints(), seed() and "
                     "sweep()");
}

[[noreturn]] inline void throw_no_tape() {
    throw_tape_error("an active variable is used while no tape records on this thread: keep the "
                     "recording (tape::record()) alive while computing with active variables");
}

}  // namespace detail

template <class T>
class active;

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
        std::size_t s = ends_.size() - 1;
        for (auto c = customs_.rbegin(); c != customs_.rend(); ++c) {
            sweep_down_to(s, c->first_output + c->outputs - 1);
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
        sweep_down_to(s, leading_inputs);
    }
    // zero_adjoints, seed(output), sweep: then adjoint(x) is d output / d x.
    void gradient(const active<T>& output) {
        zero_adjoints();
        seed(output);
        sweep();
    }

    // For the statement builders (reverse/active.hpp).
    void check(std::uint32_t generation, detail::tape_index index) const {
        if (generation != generation_ && index != 0) [[unlikely]]
            stale();
    }
    // Where the partials of the statement being recorded, and of a collapsed intermediate, go.
    NABLA_ALWAYS_INLINE detail::cursor<T> statement_cursor() { return {pairs_}; }
    NABLA_ALWAYS_INLINE detail::cursor<T> scratch_cursor() { return {scratch_}; }
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
    // The index of the statement recorded last (0, the passive slot, when there is none) and the
    // number of pairs recorded.
    NABLA_ALWAYS_INLINE detail::tape_index last_statement() const {
        return static_cast<detail::tape_index>(ends_.size() - 1);
    }
    NABLA_ALWAYS_INLINE std::size_t pairs_size() const { return pairs_.size(); }
    detail::pair_buffer<T>& scratch() { return scratch_; }

    [[noreturn]] void stale() const {
        detail::throw_tape_error(
            "an active variable from another recording is used: it was recorded on a tape that "
            "has since been cleared or destroyed, or on a different tape than the one recording "
            "now. Keep a tape alive and uncleared while its variables are in use, and do not mix "
            "variables of two tapes in one expression.");
    }

private:
    std::uint32_t generation_ = 0;
    detail::pair_buffer<T> pairs_;
    detail::buffer<detail::tape_index> ends_;
    detail::buffer<T> adjoints_;
    // Collapsed named subexpressions (reverse/active.hpp): their local partials, expanded into
    // the statements that use them.
    detail::pair_buffer<T> scratch_;
    // The partials statements refer to in the scratch memory, less their two pairs on the tape.
    std::size_t referred_ = 0;

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
    // was tried is listed in bench/RESULTS.md.)
    [[gnu::noinline, gnu::aligned(64)]] void sweep_down_to(std::size_t s, std::size_t last) {
        T* const adjoint = adjoints_.data();
        const detail::tape_index* const tape_operand = pairs_.indices();
        const T* const tape_partial = pairs_.partials();
        const detail::tape_index* const scratch_operand = scratch_.indices();
        const T* const scratch_partial = scratch_.partials();
        const detail::tape_index* const end = ends_.data();
        T a = adjoint[s];
        for (; s > last; --s) {
            const detail::tape_index previous = static_cast<detail::tape_index>(s - 1);
            T next = adjoint[previous];
            adjoint[s] = a;
            const detail::tape_index stop = end[s];
            if (!detail::exactly_zero(a)) {
                if (stop & detail::accumulates_bit)
                    next += a;
                const std::size_t first = end[previous] & detail::end_mask;
                if (stop & detail::refers_bit) [[unlikely]] {
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
                    const std::size_t after = stop & detail::end_mask;
                    if (detail::sweep_two_pairs_apart && after - first == 2) {
                        const T c0 = tape_partial[first] * a;
                        const T c1 = tape_partial[first + 1] * a;
                        const detail::tape_index o0 = tape_operand[first];
                        const detail::tape_index o1 = tape_operand[first + 1];
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

public:
    // A custom operation on the tape (reverse/custom.hpp): its outputs are statements
    // first_output .. first_output + outputs - 1 without operands; the pullback maps their
    // adjoints to the adjoints of its inputs.
    struct custom_entry {
        detail::tape_index first_output;
        detail::tape_index outputs;
        std::vector<detail::tape_index> inputs;
        std::function<std::vector<T>(const std::vector<T>&)> pullback;
    };
    void add_custom(custom_entry entry) { customs_.push_back(std::move(entry)); }

private:
    void run_pullback(const custom_entry& c) {
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
            detail::throw_tape_error("a custom operation's pullback returned " +
                                     std::to_string(g.size()) + " adjoints for " +
                                     std::to_string(c.inputs.size()) + " inputs");
        for (std::size_t i = 0; i < g.size(); ++i)
            if (c.inputs[i] != 0)
                adjoints_[c.inputs[i]] += g[i];
    }

    std::vector<custom_entry> customs_;
    tape* previous_ = nullptr;
};

}  // namespace nabla
