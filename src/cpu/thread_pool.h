// A fixed pool of worker threads for the CPU kernels. parallel_for splits [0, n) into chunks that the calling
// thread and the workers take in turn; calls do not nest.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dml {

class ThreadPool {
public:
    explicit ThreadPool(size_t threads = std::thread::hardware_concurrency());
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

ThreadPool& cpu_thread_pool();

}  // namespace dml
