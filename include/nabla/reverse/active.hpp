#pragma once
// nabla::active<T>, the active scalar of reverse mode (nabla::var is active<double>): a small
// handle of its value, its index on the tape and the generation of its recording. Assigning an
// expression of active variables to one records one statement on the thread's active tape.
//
//   nabla::tape<> t;
//   auto recording = t.record();
//   nabla::var x = t.input(2.0), y = t.input(5.0);
//   nabla::var f = log(x) + x * y - sin(y);     // one statement: two partials (x and y)
//   t.gradient(f);                              // t.adjoint(x) == 5.5
//
// `auto` is safe: an expression holds copies of what it reads, so one that outlives the variables
// it was built from still holds the values and indices it needs; a named intermediate used
// several times has its partials computed once (docs/reverse.md, docs/design.md).

#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "../concepts.hpp"
#include "../config.hpp"
#include "../values.hpp"
#include "expression.hpp"
#include "tape.hpp"

namespace nabla {

using var = active<double>;

template <class T>
class active {
public:
    using value_type = T;

    // The value. Writing it directly changes no recorded statement.
    T value{};

    // A passive constant (index 0): never recorded.
    constexpr active() = default;
    template <class U>
    requires(std::is_convertible_v<U, T> && !detail::ActiveOperand<U> &&
             !Expression<U>) constexpr active(const U& v)
        : value(static_cast<T>(v)) {}

    // Assigning an expression records one statement.
    template <detail::ActiveExpression E>
    requires std::is_same_v<detail::active_value_t<E>, T> NABLA_ALWAYS_INLINE active(const E& e) {
        // (The recording is written here, not in a function this calls: each level of always
        // inlined functions is one more copy of a long statement for the compiler to optimise.)
        const T v = detail::value_of(e);
        tape<T>* target = detail::active_tape<T>;
        if (target == nullptr) [[unlikely]] {
            detail::check_passive(e);
            value = v;
            return;
        }
        index_ = detail::record_statement(target, e);
        generation_ = target->generation();
        value = v;
    }
    template <detail::ActiveExpression E>
    requires std::is_same_v<detail::active_value_t<E>, T> NABLA_ALWAYS_INLINE active&
    operator=(const E& e) {
        *this = active(e);
        return *this;
    }
    template <class U>
    requires(std::is_convertible_v<U, T> && !detail::ActiveOperand<U> && !Expression<U>) active&
    operator=(const U& v) {
        value = static_cast<T>(v);
        index_ = 0;
        generation_ = 0;
        return *this;
    }

    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator+=(E&& e) {
        return *this = detail::make_binary<rules::add_rule>(*this, std::forward<E>(e));
    }
    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator-=(E&& e) {
        return *this = detail::make_binary<rules::sub_rule>(*this, std::forward<E>(e));
    }
    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator*=(E&& e) {
        return *this = detail::make_binary<rules::mul_rule>(*this, std::forward<E>(e));
    }
    template <class E>
    requires detail::ActivePair<active&, E> NABLA_ALWAYS_INLINE active& operator/=(E&& e) {
        return *this = detail::make_binary<rules::div_rule>(*this, std::forward<E>(e));
    }

    // The variable's index on its tape (0 for a constant) and its recording's generation.
    detail::tape_index index() const { return index_; }
    std::uint32_t generation() const { return generation_; }
    // Whether this variable is recorded on a tape (false for constants).
    bool is_active() const { return index_ != 0; }

    // An explicit conversion to a plain number drops the derivative information.
    template <class U>
    requires(std::is_arithmetic_v<U> && !std::is_same_v<U, long double>) explicit
    operator U() const {
        return static_cast<U>(nabla::primal(value));
    }
    // std::sin(x) and the like: a compile-time error that says to call sin unqualified
    // (concepts.hpp).
    template <class U>
    requires std::is_same_v<U, long double>
    operator U() const { return detail::refuse_std_function<U>(); }

private:
    template <class>
    friend class tape;
    friend struct detail::tape_access;

    active(const T& v, detail::tape_index index, std::uint32_t generation)
        : value(v),
          index_(index),
          generation_(generation) {}

    detail::tape_index index_ = 0;
    std::uint32_t generation_ = 0;
};

template <class T>
inline constexpr bool is_recorded_number_v<active<T>> = true;

template <class T>
std::ostream& operator<<(std::ostream& out, const active<T>& x) {
    return out << x.value;
}

}  // namespace nabla

template <class T, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<nabla::active<T>, U> {
    using type = nabla::active<T>;
};
template <class T, class U>
requires std::is_arithmetic_v<U>
struct std::common_type<U, nabla::active<T>> {
    using type = nabla::active<T>;
};

// The limits of the value type.
template <class T>
struct std::numeric_limits<nabla::active<T>> : std::numeric_limits<T> {
    using value_type = nabla::active<T>;
    static constexpr value_type min() noexcept { return std::numeric_limits<T>::min(); }
    static constexpr value_type max() noexcept { return std::numeric_limits<T>::max(); }
    static constexpr value_type lowest() noexcept { return std::numeric_limits<T>::lowest(); }
    static constexpr value_type epsilon() noexcept { return std::numeric_limits<T>::epsilon(); }
    static constexpr value_type infinity() noexcept { return std::numeric_limits<T>::infinity(); }
    static constexpr value_type quiet_NaN() noexcept { return std::numeric_limits<T>::quiet_NaN(); }
};
