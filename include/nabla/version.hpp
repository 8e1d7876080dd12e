#pragma once
// The single source of nabla's version number.
#define NABLA_VERSION_MAJOR 0
#define NABLA_VERSION_MINOR 1
#define NABLA_VERSION_PATCH 0
#define NABLA_VERSION                                                                              \
    (NABLA_VERSION_MAJOR * 10000 + NABLA_VERSION_MINOR * 100 + NABLA_VERSION_PATCH)
