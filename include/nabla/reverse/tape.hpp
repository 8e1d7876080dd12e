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
// A statement whose adjoint is zero is skipped, so an infinite partial off the path to the output
// never turns into NaN (the strong structural zero of docs/conventions.md).
//
// Variable 0 is the passive slot: constants have index 0 and are never recorded. Each recording
// has a generation, a number no other recording of any tape has; every active variable carries
// the generation it was recorded in, so a variable from a tape that was cleared or destroyed, or
// from another tape, is reported (nabla::tape_error) instead of reading someone else's adjoint.
//
// Each thread has its own active tape per value type, so threads record independently; recordings
// nest (an inner tape is active until its recording ends, then the outer one is again).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../config.hpp"

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

// The most statements (and partials) one recording can hold: indices are 32-bit.
inline constexpr std::size_t tape_limit = std::numeric_limits<tape_index>::max() - 1;

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

// Whether an adjoint is exactly zero: a number equal to 0, or a dual number whose parts all are.
template <class T>
constexpr bool adjoint_is_zero(const T& a) {
    if constexpr (requires { a.value, a.tangent; }) {
        if (!adjoint_is_zero(a.value))
            return false;
        for (const auto& t : a.tangent)
            if (!adjoint_is_zero(t))
                return false;
        return true;
    } else {
        return a == T(0);
    }
}

// A flat array that keeps its memory when cleared and grows by doubling (at least 64K entries at
// a time), written through raw pointers after one capacity check per statement.
template <class U>
class buffer {
public:
    buffer() = default;
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;

    std::size_t size() const { return size_; }
    std::size_t capacity() const { return capacity_; }
    U* data() { return data_.get(); }
    const U* data() const { return data_.get(); }
    U& operator[](std::size_t i) { return data_[i]; }
    const U& operator[](std::size_t i) const { return data_[i]; }
    void clear() { size_ = 0; }

    // Room for n more entries.
    NABLA_ALWAYS_INLINE void reserve_more(std::size_t n) {
        if (size_ + n > capacity_) [[unlikely]]
            grow(size_ + n);
    }
    // Appends without a capacity check: after reserve_more.
    NABLA_ALWAYS_INLINE void push_unchecked(const U& u) { data_[size_++] = u; }
    // Counts n entries written past the end (after reserve_more) as appended.
    NABLA_ALWAYS_INLINE void advance(std::size_t n) { size_ += n; }
    NABLA_ALWAYS_INLINE void push(const U& u) {
        reserve_more(1);
        push_unchecked(u);
    }
    // Sets every entry of the first n to `u` (n entries in all).
    void assign(std::size_t n, const U& u) {
        size_ = 0;
        reserve_more(n);
        for (std::size_t i = 0; i < n; ++i)
            data_[i] = u;
        size_ = n;
    }

private:
    [[gnu::noinline]] void grow(std::size_t needed) {
        std::size_t capacity = capacity_ < 65536 ? 65536 : capacity_;
        while (capacity < needed)
            capacity *= 2;
        std::unique_ptr<U[]> bigger(new U[capacity]);
        for (std::size_t i = 0; i < size_; ++i)
            bigger[i] = data_[i];
        data_ = std::move(bigger);
        capacity_ = capacity;
    }

    std::unique_ptr<U[]> data_;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

// Writes (operand index, partial) pairs at the end of two buffers through local pointers, so the
// buffers' sizes are read once and stored once per statement, not per partial.
template <class T>
struct cursor {
    buffer<tape_index>& indices;
    buffer<T>& partials;
    tape_index* index = nullptr;
    T* partial = nullptr;
    std::size_t written = 0;

    // Room for n more pairs; pointers to where they go.
    NABLA_ALWAYS_INLINE void open(std::size_t n) {
        indices.reserve_more(n);
        partials.reserve_more(n);
        index = indices.data() + indices.size();
        partial = partials.data() + partials.size();
        written = 0;
    }
    NABLA_ALWAYS_INLINE void push(tape_index i, const T& p) {
        index[written] = i;
        partial[written] = p;
        ++written;
    }
    NABLA_ALWAYS_INLINE void close() {
        indices.advance(written);
        partials.advance(written);
    }
};

[[noreturn]] inline void throw_tape_error(const std::string& what) {
    throw tape_error("nabla::tape: " + what);
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
    tape() { clear(); }
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
        operands_.clear();
        partials_.clear();
        ends_.assign(1, 0);  // statement 0: the passive slot
        leading_inputs_ = 0;
        adjoints_.clear();
        scratch_operands_.clear();
        scratch_partials_.clear();
        customs_.clear();
    }

    // While the returned object lives, this tape records the active variables computed on this
    // thread. record() clears the tape first; resume() appends to what it holds. Recordings nest:
    // when one ends, the tape that was active before is again.
    class recording {
    public:
        explicit recording(tape& t) : tape_(t) {
            t.previous_ = detail::active_tape<T>;
            detail::active_tape<T> = &t;
        }
        recording(const recording&) = delete;
        recording& operator=(const recording&) = delete;
        ~recording() {
            if (detail::active_tape<T> == &tape_)
                detail::active_tape<T> = tape_.previous_;
        }

    private:
        tape& tape_;
    };

    [[nodiscard]] recording record() {
        clear();
        return recording(*this);
    }
    [[nodiscard]] recording resume() { return recording(*this); }

    // A new independent variable with the given value, recorded as a statement without operands.
    active<T> input(const T& value);

    // The number of statements recorded (the passive slot included) and of partials.
    std::size_t statements() const { return ends_.size(); }
    std::size_t partials() const { return partials_.size(); }
    // Bytes of tape memory this recording uses, and bytes reserved (kept across recordings).
    std::size_t bytes_used() const {
        return operands_.size() * sizeof(detail::tape_index) + partials_.size() * sizeof(T) +
               ends_.size() * sizeof(detail::tape_index) + adjoints_.size() * sizeof(T) +
               scratch_operands_.size() * sizeof(detail::tape_index) +
               scratch_partials_.size() * sizeof(T);
    }
    std::size_t bytes_reserved() const {
        return operands_.capacity() * sizeof(detail::tape_index) +
               partials_.capacity() * sizeof(T) + ends_.capacity() * sizeof(detail::tape_index) +
               adjoints_.capacity() * sizeof(T) +
               scratch_operands_.capacity() * sizeof(detail::tape_index) +
               scratch_partials_.capacity() * sizeof(T);
    }
    std::uint32_t generation() const { return generation_; }

    // Adjoints. Sweeping needs no new recording: seed, sweep, read, then zero and seed again (a
    // Jacobian row by row).
    void zero_adjoints() { adjoints_.assign(ends_.size(), T(0)); }
    void seed(const active<T>& v, const T& adjoint = T(1));
    T adjoint(const active<T>& v) const;
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
        // nothing to propagate: the sweep stops above them.
        sweep_down_to(s, leading_inputs_);
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
    NABLA_ALWAYS_INLINE detail::cursor<T> statement_cursor() { return {operands_, partials_}; }
    NABLA_ALWAYS_INLINE detail::cursor<T> scratch_cursor() {
        return {scratch_operands_, scratch_partials_};
    }
    NABLA_ALWAYS_INLINE detail::tape_index finish_statement() {
        const std::size_t s = ends_.size();
        if (s >= detail::tape_limit || operands_.size() >= detail::tape_limit) [[unlikely]]
            detail::throw_tape_error("more than 2^32 - 2 statements or partials in one recording");
        if (operands_.size() == 0)
            leading_inputs_ = s;
        ends_.push(static_cast<detail::tape_index>(operands_.size()));
        return static_cast<detail::tape_index>(s);
    }
    detail::buffer<detail::tape_index>& scratch_operands() { return scratch_operands_; }
    detail::buffer<T>& scratch_partials() { return scratch_partials_; }

    [[noreturn]] void stale() const {
        detail::throw_tape_error(
            "an active variable from another recording is used: it was recorded on a tape that "
            "has since been cleared or destroyed, or on a different tape than the one recording "
            "now. Keep a tape alive and uncleared while its variables are in use, and do not mix "
            "variables of two tapes in one expression.");
    }

private:
    std::uint32_t generation_ = 0;
    detail::buffer<detail::tape_index> operands_;
    detail::buffer<T> partials_;
    detail::buffer<detail::tape_index> ends_;
    detail::buffer<T> adjoints_;
    // Collapsed named subexpressions (reverse/active.hpp): their local partials, expanded into
    // the statements that use them.
    detail::buffer<detail::tape_index> scratch_operands_;
    detail::buffer<T> scratch_partials_;
    std::size_t leading_inputs_ = 0;  // statements 1..leading_inputs_ have no operands

    // Statements s, s - 1, ..., last + 1.
    void sweep_down_to(std::size_t s, std::size_t last) {
        T* const adjoint = adjoints_.data();
        const detail::tape_index* const operand = operands_.data();
        const T* const partial = partials_.data();
        const detail::tape_index* const end = ends_.data();
        for (; s > last; --s) {
            const T a = adjoint[s];
            if (detail::adjoint_is_zero(a))
                continue;
            for (detail::tape_index k = end[s - 1]; k < end[s]; ++k)
                adjoint[operand[k]] += partial[k] * a;
        }
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
            any = any || !detail::adjoint_is_zero(w[i]);
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
