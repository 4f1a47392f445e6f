// A fixed pool of worker threads for the CPU kernels. parallel_for splits [0, n) into one contiguous range a thread,
// which each thread takes in chunks from its front, then helps the others from their backs: where the threads keep
// pace, thread t runs the same part of every loop, so that a layer reads from its own cache what it wrote in the
// layer before (squeezenet on two threads 6-7 % faster, superres 11 %, than chunks dealt in order; bench/README.md).
// parallel_stages runs several such loops one after the other in one wake-up of the workers. Calls do not nest. A
// pool of n threads has n - 1 workers: the calling thread is the n-th.
#pragma once
#include <atomic>
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
    // One loop of a parallel_stages job: f(begin, end) over [0, n) in chunks of at least `grain` items.
    struct Stage {
        size_t n, grain;
        std::function<void(size_t, size_t)> f;
    };

    explicit ThreadPool(size_t threads);
    ~ThreadPool();
    size_t size() const { return workers_.size() + 1; }

    // Runs f(begin, end) over [0, n) in chunks of at least `grain` items; returns when all are done.
    void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& f);
    // Runs the stages in order, no chunk of a stage starting before every chunk of the one before is done. The
    // threads meet between stages by spinning a while (a sleeping worker takes tens of microseconds to wake, more
    // than a stage of a small convolution), so a loop of short dependent steps costs one wake-up, not one a step.
    // Where every stage is one chunk (n <= grain), the calling thread runs them alone, as parallel_for does.
    void parallel_stages(const std::vector<Stage>& stages);

    // While a Hold lives, workers that finish a job spin (yielding) for the next one instead of sleeping, so that a
    // plan's run of short nodes costs one wake-up, not one a node; they sleep again when the last Hold goes.
    class Hold {
    public:
        explicit Hold(ThreadPool& pool) : pool_(pool) { ++pool_.held_; }
        ~Hold() { --pool_.held_; }
        Hold(const Hold&) = delete;
        Hold& operator=(const Hold&) = delete;

    private:
        ThreadPool& pool_;
    };

private:
    void worker_loop(size_t self);
    void run_job(std::unique_lock<std::mutex>& lock, size_t self);
    void begin_stage(size_t s);  // under mutex_: stage s (or the first non-empty one after it) is dealt next
    template <class Done> void wait_for(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Done done);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::mutex job_mutex_;  // one job at a time (several compiled operators may dispatch at once)
    std::condition_variable wake_, stage_done_, done_;
    const Stage* stages_ = nullptr;
    size_t stage_count_ = 0, n_ = 0, chunk_ = 0, dealt_ = 0, running_ = 0;
    // The stage's items, split into one range a thread (the calling thread 0, worker i thread i + 1): each thread
    // deals its own range's chunks from the front, then the others' from their backs.
    std::vector<size_t> next_, end_;
    // written under mutex_, read while spinning
    std::atomic<size_t> stage_{0}, active_{0}, held_{0};
    std::atomic<uint64_t> generation_{0};
    bool stop_ = false;
    int caller_processor_ = -1;  // where the job's calling thread ran as it dealt the job (under mutex_)
};

// The threads a CPU device uses unless told otherwise: DIRECTML_NUM_THREADS if set (ValueError if it is not a
// positive integer), else every processor this process may run on.
size_t default_thread_count();
// The pool of default_thread_count() threads that CPU devices share unless given a count of their own.
std::shared_ptr<ThreadPool> default_thread_pool();

}  // namespace dml
