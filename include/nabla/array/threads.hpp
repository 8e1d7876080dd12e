#pragma once
// Threads for the loops of large array expressions, off by default:
//
//   nabla::set_array_threads(2);      // the calling thread and one more; 0: every core
//
// A loop over more than chunk_size elements is cut into chunks of a fixed size (whole rows for a
// grid), whatever the number of threads, and runs on several threads from four chunks on (a
// reverse loop, which runs its even chunks and then its odd ones, from eight); each
// chunk accumulates its reductions in states of its own, merged in chunk order, and writes the
// gradient elements it owns. So the results are the same, to the last bit, with any number of
// threads, and the same as with threads off. The threads wait in a pool made on first use; a loop
// started while the pool is busy (from another thread of the caller's) runs its chunks on the
// calling thread alone, with the same results.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace nabla {

namespace detail {

// Elements per chunk, and the fewest chunks worth waking threads for: a loop of at most three
// chunks (196,608 elements) runs on the calling thread, where waking another (tens of
// microseconds) and splitting unevenly cost more than they save.
inline constexpr std::size_t chunk_size = std::size_t{1} << 16;
inline constexpr std::size_t threaded_chunks = 4;

inline std::atomic<std::size_t>& array_thread_setting() {
    static std::atomic<std::size_t> threads{1};
    return threads;
}

class loop_pool {
public:
    // Made on first use and never destroyed, so that a loop run while the program exits (from a
    // static object's destructor) still finds it; its threads end with the process.
    static loop_pool& get() {
        static loop_pool* const pool = new loop_pool;
        return *pool;
    }

    // task(c) for every c in [0, count), on up to `threads` threads, the caller's among them.
    void run(std::size_t count, std::size_t threads, const std::function<void(std::size_t)>& task) {
        std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
        if (!busy.owns_lock() || threads <= 1 || count <= 1) {
            for (std::size_t c = 0; c < count; ++c)
                task(c);
            return;
        }
        const std::size_t helpers = std::min(threads, count) - 1;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            while (workers_.size() < helpers)
                workers_.emplace_back([this] { work(); });
            task_ = &task;
            count_ = count;
            next_.store(0, std::memory_order_relaxed);
            wanted_ = helpers;
            running_ = helpers;
            ++round_;
        }
        wake_.notify_all();
        // Every chunk runs even when one throws; the first exception is rethrown once the
        // helpers are done with the task.
        std::exception_ptr failed;
        try {
            take_chunks(task, count);
        } catch (...) {
            failed = std::current_exception();
        }
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return running_ == 0; });
        task_ = nullptr;
        if (!failed)
            failed = std::exchange(helper_failed_, nullptr);
        helper_failed_ = nullptr;
        lock.unlock();
        if (failed)
            std::rethrow_exception(failed);
    }

    loop_pool(const loop_pool&) = delete;
    loop_pool& operator=(const loop_pool&) = delete;

private:
    loop_pool() = default;

    void take_chunks(const std::function<void(std::size_t)>& task, std::size_t count) {
        std::exception_ptr failed;
        for (std::size_t c = next_.fetch_add(1, std::memory_order_relaxed); c < count;
             c = next_.fetch_add(1, std::memory_order_relaxed)) {
            try {
                task(c);
            } catch (...) {
                if (!failed)
                    failed = std::current_exception();
            }
        }
        if (failed)
            std::rethrow_exception(failed);
    }

    void work() {
        std::uint64_t seen = 0;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            wake_.wait(lock, [&] { return round_ != seen && wanted_ > 0; });
            seen = round_;
            --wanted_;
            const std::function<void(std::size_t)>* task = task_;
            const std::size_t count = count_;
            lock.unlock();
            std::exception_ptr failed;
            try {
                take_chunks(*task, count);
            } catch (...) {
                failed = std::current_exception();
            }
            lock.lock();
            if (failed && !helper_failed_)
                helper_failed_ = failed;
            if (--running_ == 0)
                done_.notify_one();
        }
    }

    std::mutex busy_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::vector<std::thread> workers_;
    const std::function<void(std::size_t)>* task_ = nullptr;
    std::size_t count_ = 0;
    std::atomic<std::size_t> next_{0};
    std::size_t wanted_ = 0;
    std::size_t running_ = 0;
    std::uint64_t round_ = 0;
    std::exception_ptr helper_failed_;
};

// body(c) for each chunk c in [0, chunks), on the pool when threads are on.
template <class Body>
void for_each_chunk(std::size_t chunks, const Body& body) {
    const std::size_t threads = array_thread_setting().load(std::memory_order_relaxed);
    if (threads <= 1 || chunks < threaded_chunks) {
        for (std::size_t c = 0; c < chunks; ++c)
            body(c);
        return;
    }
    loop_pool::get().run(chunks, threads, std::function<void(std::size_t)>(std::cref(body)));
}

}  // namespace detail

// How many threads the loops of array expressions use: 1 (the default) runs them on the calling
// thread; 0 means one per core (std::thread::hardware_concurrency()).
inline void set_array_threads(std::size_t threads) {
    if (threads == 0)
        threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
    detail::array_thread_setting().store(threads, std::memory_order_relaxed);
}

inline std::size_t array_threads() {
    return detail::array_thread_setting().load(std::memory_order_relaxed);
}

}  // namespace nabla
