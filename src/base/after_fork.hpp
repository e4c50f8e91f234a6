// What tandem does across fork(). A child forked after its parent used OpenCL cannot use the
// parent's OpenCL objects: the driver's threads (PoCL's workers, NVIDIA's) are not in the child,
// and its pinned pages are not mapped there (drivers mark DMA memory not to be inherited), so a
// command in the child waits forever; and the ICD loader has no way to start afresh in the same
// process. Such a child therefore computes every call on the CPU (the first GPU request warns
// once) and never calls OpenCL again. oneTBB's worker threads are not in the child either: its
// parallel loops run on the calling thread there, and OpenBLAS restarts its own threads itself.
// The locks tandem's calls take are held by the forking thread across fork(), so the child never
// inherits one that a thread it does not have was holding.
#pragma once

#include <mutex>
#include <shared_mutex>

namespace tandem::detail::after_fork {

// Called before the process's first OpenCL call (device.cpp): from then on a forked child has no
// OpenCL.
void opencl_used();

// Whether this process is a child forked (at any depth) after OpenCL was used: no OpenCL here.
bool opencl_lost();

// Whether this process is a child forked after it may have started oneTBB's threads.
bool threads_lost();
void threads_used();

// The locks held across fork(), in the order taken (a lock is taken before those ranked after
// it, as the code that nests them does).
enum class Rank { Devices, Pinned, BlasThreads, Log };

// Registers m, once, to be held across fork() at its rank.
void hold(std::mutex& m, Rank rank);
void hold(std::shared_mutex& m, Rank rank);

}  // namespace tandem::detail::after_fork
