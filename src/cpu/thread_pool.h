// A fixed pool of worker threads for the CPU kernels. parallel_for splits [0, n) into chunks that the calling
// thread and the workers take in turn; calls do not nest. A pool of n threads has n - 1 workers: the calling
// thread is the n-th.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dml {

class ThreadPool {
public:
    explicit ThreadPool(size_t threads);
    ~ThreadPool();
    size_t size() const { return workers_.size() + 1; }

    // Runs f(begin, end) over [0, n) in chunks of at least `grain` items; returns when all are done.
    void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& f);

private:
    void worker_loop();
    void run_chunks();

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::mutex job_mutex_;  // one parallel_for at a time (several compiled operators may dispatch at once)
    std::condition_variable wake_, done_;
    const std::function<void(size_t, size_t)>* job_ = nullptr;
    size_t n_ = 0, chunk_ = 0, next_ = 0, active_ = 0;
    uint64_t generation_ = 0;
    bool stop_ = false;
};

// The threads a CPU device uses unless told otherwise: DIRECTML_NUM_THREADS if set (ValueError if it is not a
// positive integer), else every processor this process may run on.
size_t default_thread_count();
// The pool of default_thread_count() threads that CPU devices share unless given a count of their own.
std::shared_ptr<ThreadPool> default_thread_pool();

}  // namespace dml
