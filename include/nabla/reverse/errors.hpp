#pragma once
// nabla::tape_error, what the tape reports for run-time misuse, and the messages it reports.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace nabla {

// Run-time misuse of the tape: a variable from a cleared, destroyed or different tape, an active
// variable used when no tape records, too many statements for the index type.
class tape_error : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

namespace detail {

// A message of words and counts, written into a buffer: the tape's errors are built with this
// rather than std::string, whose concatenations every translation unit that records would
// otherwise instantiate and optimise.
class message {
public:
    message& operator<<(const char* words) {
        const std::size_t n = std::min(std::strlen(words), capacity - size_);
        std::memcpy(text_ + size_, words, n);
        size_ += n;
        text_[size_] = '\0';
        return *this;
    }
    message& operator<<(std::size_t count) {
        size_ = static_cast<std::size_t>(std::to_chars(text_ + size_, text_ + capacity, count).ptr -
                                         text_);
        text_[size_] = '\0';
        return *this;
    }
    const char* text() const { return text_; }

private:
    static constexpr std::size_t capacity = 1023;
    char text_[capacity + 1] = "nabla::tape: ";
    std::size_t size_ = std::strlen("nabla::tape: ");
};

[[noreturn]] inline void throw_tape_error(const message& what) {
    throw tape_error(what.text());
}
[[noreturn]] inline void throw_tape_error(const char* what) {
    throw_tape_error(message() << what);
}

// What reading adjoints before a sweep gets (`what`: the call).
[[noreturn]] inline void throw_not_swept(const char* what) {
    throw_tape_error(message() << what
                               << " before a sweep: call gradient(output), or zero_adjoints(), "
                                  "seed() and sweep()");
}

[[noreturn]] inline void throw_no_tape() {
    throw_tape_error("an active variable is used while no tape records on this thread: keep the "
                     "recording (tape::record()) alive while computing with active variables");
}

[[noreturn]] inline void throw_stale() {
    throw_tape_error(
        "an active variable from another recording is used: it was recorded on a tape that "
        "has since been cleared or destroyed, or on a different tape than the one recording "
        "now. Keep a tape alive and uncleared while its variables are in use, and do not mix "
        "variables of two tapes in one expression. Inside a function being differentiated, "
        "take an inner derivative at the outer derivative's numbers "
        "(nabla::grad(inner, decltype(x)(3.0)), not nabla::grad(inner, 3.0)) when inner reads "
        "a variable x of the outer one.");
}

inline void check_sizes(const char* what, std::size_t values, std::size_t variables) {
    if (values != variables)
        throw_tape_error(message() << what << ": " << values << " values for " << variables
                                   << " variables (the two spans must have one size)");
}

}  // namespace detail

}  // namespace nabla
