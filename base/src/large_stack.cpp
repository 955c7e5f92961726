#include "poems/base/large_stack.h"

#include <pthread.h>

#include <exception>

namespace poems::base {

void run_on_large_stack(const std::function<void()>& work, std::size_t bytes) {
  struct Job {
    const std::function<void()>* work;
    std::exception_ptr error;
  } job{&work, nullptr};
  auto trampoline = [](void* arg) -> void* {
    auto* j = static_cast<Job*>(arg);
    try {
      (*j->work)();
    } catch (...) {
      j->error = std::current_exception();
    }
    return nullptr;
  };
  pthread_attr_t attr;
  pthread_t thread;
  const bool started = pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, bytes) == 0 &&
                       pthread_create(&thread, &attr, trampoline, &job) == 0;
  pthread_attr_destroy(&attr);
  if (started)
    pthread_join(thread, nullptr);
  else
    trampoline(&job);  // no thread available: run here
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace poems::base
