#pragma once
// User-overridable macros. Each follows one pattern: define it before including nabla to override.

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
