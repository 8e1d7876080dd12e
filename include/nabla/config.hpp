#pragma once
// User-overridable macros. Each follows one pattern: define it before including nabla to override.

// nabla is written in C++20 (concepts, requires-clauses): say so before any of it fails to parse.
#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) <= 201703L
#error "nabla needs C++20: compile with -std=c++20 (g++ 12, clang++ 14 or newer; MSVC /std:c++20)."
#endif

// Marks every function that may run on a GPU; empty on the host compilers.
#ifndef NABLA_HOST_DEVICE
#if defined(__CUDACC__)
#define NABLA_HOST_DEVICE __host__ __device__
#else
#define NABLA_HOST_DEVICE
#endif
#endif

// Forces inlining of the evaluation and sweep functions, so that a gradient compiles to one
// straight-line function like hand-written code, however large the graph's schedule.
#ifndef NABLA_ALWAYS_INLINE
#if defined(__GNUC__) || defined(__clang__)
#define NABLA_ALWAYS_INLINE [[gnu::always_inline]] inline
#else
#define NABLA_ALWAYS_INLINE inline
#endif
#endif

// The same for a lambda, after its parameter list: [&](auto x) NABLA_INLINE_LAMBDA { ... }. A
// lambda called once per index of a loop over compile-time indices is otherwise left out of
// line when the function around it is large, and what it reads by reference stays in memory.
#ifndef NABLA_INLINE_LAMBDA
#if defined(__GNUC__) || defined(__clang__)
#define NABLA_INLINE_LAMBDA __attribute__((always_inline))
#else
#define NABLA_INLINE_LAMBDA
#endif
#endif

// A function kept out of line and not specialised for its callers' constants: GCC's
// interprocedural analysis otherwise warns, wrongly, about a loop of it the callers never reach.
#ifndef NABLA_OUT_OF_LINE
#if defined(__GNUC__) && !defined(__clang__)
#define NABLA_OUT_OF_LINE [[gnu::noipa]]
#elif defined(__clang__)
#define NABLA_OUT_OF_LINE [[gnu::noinline]]
#else
#define NABLA_OUT_OF_LINE
#endif
#endif

// Tells the optimiser a condition that always holds (a fact it cannot see, such as a tape's
// generation never being 0); nothing on compilers without a way to say it.
#ifndef NABLA_ASSUME
#if defined(__clang__)
#define NABLA_ASSUME(condition) __builtin_assume(condition)
#elif defined(__GNUC__)
#define NABLA_ASSUME(condition)                                                                    \
    do {                                                                                           \
        if (!(condition))                                                                          \
            __builtin_unreachable();                                                               \
    } while (false)
#else
#define NABLA_ASSUME(condition)                                                                    \
    do {                                                                                           \
    } while (false)
#endif
#endif

// Keeps the loop that follows from being unrolled (clang++ only: g++ does not unroll loops at -O3
// unless told to).
#if defined(__clang__)
#define NABLA_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define NABLA_NO_UNROLL
#endif

// Keeps a loop over a few elements scalar: the optimiser may not vectorise a loop whose counter
// passes through this (a vectorised loop's checks and remainder cost more than six elements).
#ifndef NABLA_SCALAR_LOOP
#if defined(__GNUC__) || defined(__clang__)
#define NABLA_SCALAR_LOOP(counter) asm("" : "+r"(counter))
#else
#define NABLA_SCALAR_LOOP(counter)                                                                 \
    do {                                                                                           \
    } while (false)
#endif
#endif
