#pragma once
// The tape's memory: 32-bit indices and the bits a statement's end carries, flat arrays that keep
// their memory across recordings (columns, buffer, pair_buffer), and the cursor a statement's
// (operand, partial) pairs are written through.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>

#include "../../config.hpp"
#include "../errors.hpp"

namespace nabla::detail {

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

// Grows a capacity by doubling, at least 64K entries at a time and never past `limit` entries;
// more than `limit` entries needed is a tape_error.
[[gnu::noinline]] inline std::size_t
grown_capacity(std::size_t capacity, std::size_t needed, std::size_t limit) {
    if (needed > limit)
        throw_tape_error(message() << "this recording needs more than " << limit
                                   << " statements or partials, the tape's limit (at most 2^32 - "
                                      "2 statements and 2^30 - 1 partials: indices are 32-bit; a "
                                      "smaller one is set by tape(max_entries))");
    capacity = capacity < 65536 ? 65536 : capacity;
    while (capacity < needed)
        capacity *= 2;
    return capacity < limit ? capacity : limit;
}

// A column's memory. Numbers that are copied as bytes (double, dual and Taylor numbers of them)
// get storage that is not written until the tape writes it: new U[n] of a dual number would
// zero-fill every entry of a fresh 64K-entry column (its default constructor zeroes), and the
// page faults of that cost more than a small recording. Other types are constructed.
template <class U>
inline constexpr bool raw_column =
    std::is_trivially_copyable_v<U>&& std::is_trivially_destructible_v<U>;
template <class U>
struct column_deleter {
    void operator()(U* p) const noexcept {
        if constexpr (raw_column<U>)
            ::operator delete[](p, std::align_val_t(alignof(U)));
        else
            delete[] p;
    }
};
template <class U>
using column_ptr = std::unique_ptr<U[], column_deleter<U>>;
template <class U>
column_ptr<U> allocate_column(std::size_t n) {
    if constexpr (raw_column<U>)
        // (Objects of such types begin their lifetime in storage from operator new as they are
        // written: they are implicit-lifetime types.)
        return column_ptr<U>(
            static_cast<U*>(::operator new[](n * sizeof(U), std::align_val_t(alignof(U)))));
    else
        return column_ptr<U>(new U[n]);
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
    void move_to_bigger(column_ptr<U>& column, std::size_t capacity) {
        column_ptr<U> bigger = allocate_column<U>(capacity);
        for (std::size_t i = 0; i < size_; ++i)
            bigger[i] = column[i];
        column = std::move(bigger);
    }

    std::tuple<column_ptr<Us>...> data_;
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

}  // namespace nabla::detail
