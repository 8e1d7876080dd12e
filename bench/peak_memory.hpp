#pragma once
// The peak memory of one computation from a fresh start, measured in a child process (Linux).
//
// The child (fork) resets its peak resident set to its resident set (writing 5 to
// /proc/self/clear_refs), runs the computation once, and reports how far its peak (VmHWM in
// /proc/self/status) rose above where it started. Pages the parent had resident count in the
// child's resident set from the start, so only memory the computation touches anew counts. The
// child first gives the free memory of its heap back to the system (malloc_trim), so that memory
// the parent freed but kept does not hide the computation's own, and takes large blocks fresh
// from the system (a fixed mmap threshold). The child's own bookkeeping adds a few hundred KB, so
// figures under a megabyte are rough.

#include <cstdio>
#include <cstring>

#if defined(__linux__)
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace nabla_bench {

namespace detail {

// A field of /proc/self/status in bytes (the file gives kB), or -1.
inline long status_bytes(const char* field) {
    std::FILE* status = std::fopen("/proc/self/status", "r");
    if (status == nullptr)
        return -1;
    char line[256];
    long kb = -1;
    const std::size_t length = std::strlen(field);
    while (std::fgets(line, sizeof line, status) != nullptr)
        if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
            std::sscanf(line + length + 1, "%ld", &kb);
            break;
        }
    std::fclose(status);
    return kb < 0 ? -1 : kb * 1024;
}

}  // namespace detail

// Bytes by which body() raises the peak resident memory of a fresh child process, or -1 where
// that cannot be measured (not Linux, /proc/self/clear_refs not writable, the child failed).
template <class Body>
long peak_bytes(Body body) {
#if defined(__linux__)
    int channel[2];
    if (pipe(channel) != 0)
        return -1;
    std::fflush(nullptr);  // nothing buffered is printed twice
    const pid_t child = fork();
    if (child < 0) {
        close(channel[0]);
        close(channel[1]);
        return -1;
    }
    if (child == 0) {
        close(channel[0]);
        long grown = -1;
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        malloc_trim(0);
        if (std::FILE* reset = std::fopen("/proc/self/clear_refs", "w")) {
            const bool put = std::fputs("5", reset) >= 0;
            const bool was_reset = std::fclose(reset) == 0 && put;
            const long before = detail::status_bytes("VmRSS");
            if (was_reset && before >= 0) {
                try {
                    body();
                    const long peak = detail::status_bytes("VmHWM");
                    grown = peak < 0 ? -1 : peak - before;
                } catch (...) {
                    // reported as -1; the child must not go on with the parent's work
                }
            }
        }
        const ssize_t written = write(channel[1], &grown, sizeof grown);
        _exit(written == ssize_t(sizeof grown) ? 0 : 1);
    }
    close(channel[1]);
    long grown = -1;
    if (read(channel[0], &grown, sizeof grown) != ssize_t(sizeof grown))
        grown = -1;
    close(channel[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? grown : -1;
#else
    (void)body;
    return -1;
#endif
}

}  // namespace nabla_bench
