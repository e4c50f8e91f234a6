// fork() handlers (pthread_atfork, registered when the library loads): the child learns what it
// lost, and the locks registered with hold() are taken by the forking thread before the fork,
// released after it in the parent, and made anew in the child: glibc's rwlocks (std::shared_mutex)
// cannot be unlocked there, where the forking thread has another id. Making a lock anew in its own
// storage ends the old one's lifetime, and the references to it name the new one.
#include "base/after_fork.hpp"

#include <pthread.h>

#include <array>
#include <atomic>
#include <new>
#include <variant>

namespace tandem::detail::after_fork {
namespace {

std::atomic<bool> g_opencl_used{false}, g_opencl_lost{false};
std::atomic<bool> g_threads_used{false}, g_threads_lost{false};

constexpr size_t kRanks = static_cast<size_t>(Rank::Log) + 1;
using Lock = std::variant<std::monostate, std::mutex*, std::shared_mutex*>;
// One lock per rank, set once by hold() (each is a never-destroyed static of its file).
std::array<std::atomic<Lock*>, kRanks> g_locks{};

void lock(Lock* l) {
  if (auto* m = std::get_if<std::mutex*>(l)) (*m)->lock();
  if (auto* s = std::get_if<std::shared_mutex*>(l)) (*s)->lock();
}

void unlock(Lock* l) {
  if (auto* m = std::get_if<std::mutex*>(l)) (*m)->unlock();
  if (auto* s = std::get_if<std::shared_mutex*>(l)) (*s)->unlock();
}

// The locks as the forking thread holds them: set in prepare, released in parent and child.
thread_local std::array<Lock*, kRanks> t_held{};

void prepare() {
  for (size_t r = 0; r < kRanks; ++r) {
    t_held[r] = g_locks[r].load();
    if (t_held[r]) lock(t_held[r]);
  }
}

void release() {
  for (size_t r = kRanks; r-- > 0;)
    if (t_held[r]) unlock(t_held[r]);
}

void renew(Lock* l) {
  if (auto* m = std::get_if<std::mutex*>(l)) new (*m) std::mutex;
  if (auto* s = std::get_if<std::shared_mutex*>(l)) new (*s) std::shared_mutex;
}

void child() {
  for (Lock* l : t_held)
    if (l) renew(l);
  if (g_opencl_used.load()) g_opencl_lost.store(true);
  if (g_threads_used.load()) g_threads_lost.store(true);
}

const bool g_registered = pthread_atfork(prepare, release, child) == 0;

void set(Rank rank, Lock lock) {
  Lock* expected = nullptr;
  auto* fresh = new Lock(lock);  // lives as long as the process, like the lock it names
  if (!g_locks[static_cast<size_t>(rank)].compare_exchange_strong(expected, fresh)) delete fresh;
}

}  // namespace

void opencl_used() { g_opencl_used.store(true); }
bool opencl_lost() { return g_opencl_lost.load(std::memory_order_relaxed); }
void threads_used() { g_threads_used.store(true, std::memory_order_relaxed); }
bool threads_lost() { return g_threads_lost.load(std::memory_order_relaxed); }

void hold(std::mutex& m, Rank rank) {
  (void)g_registered;
  set(rank, &m);
}
void hold(std::shared_mutex& m, Rank rank) {
  (void)g_registered;
  set(rank, &m);
}

}  // namespace tandem::detail::after_fork
