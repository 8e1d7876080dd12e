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
