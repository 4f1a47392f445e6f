#include "thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "../core/errors.h"
#include "../platform/platform.h"

namespace dml {

ThreadPool::ThreadPool(size_t threads) {
    size_t extra = threads > 1 ? threads - 1 : 0;
    for (size_t i = 0; i < extra; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
    for (;;) {
        size_t begin;
        {
            std::lock_guard lock(mutex_);
            if (next_ >= n_) return;
            begin = next_;
            next_ = std::min(n_, next_ + chunk_);
        }
        (*job_)(begin, std::min(n_, begin + chunk_));
    }
}

void ThreadPool::worker_loop() {
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            ++active_;
        }
        run_chunks();
        {
            std::lock_guard lock(mutex_);
            if (--active_ == 0) done_.notify_all();
        }
    }
}

void ThreadPool::parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& f) {
    if (n == 0) return;
    grain = std::max<size_t>(grain, 1);
    if (workers_.empty() || n <= grain) {
        f(0, n);
        return;
    }
    std::lock_guard job_lock(job_mutex_);
    {
        std::lock_guard lock(mutex_);
        job_ = &f;
        n_ = n;
        // A few chunks per thread balances uneven rows without much locking.
        chunk_ = std::max(grain, (n + size() * 4 - 1) / (size() * 4));
        next_ = 0;
        ++generation_;
    }
    wake_.notify_all();
    run_chunks();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return active_ == 0 && next_ >= n_; });
    job_ = nullptr;
}

size_t default_thread_count() {
    const char* env = std::getenv("DIRECTML_NUM_THREADS");
    if (env && *env) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (*end != '\0' || n < 1 || n > 1024)
            throw ValueError(std::string("DIRECTML_NUM_THREADS must be a positive integer, got '") + env + "'");
        return size_t(n);
    }
    return platform::usable_cpu_count();
}

std::shared_ptr<ThreadPool> default_thread_pool() {
    static const std::shared_ptr<ThreadPool> pool = std::make_shared<ThreadPool>(default_thread_count());
    return pool;
}

}  // namespace dml
