// Auto watching its own plans while a process runs. A profile's split, or its cost model's plan,
// was right on the machine and at the moment it was measured; if its calls now run slower than
// the CPU alone would (the machine got busy, the tune was unlucky), the CPU alone takes them for
// the rest of the process. Plans fall into classes: a profile's bucket on one kind of memory, or
// the cost model's plans of a shape class, per precision and device set. Each call of a class is
// timed against the CPU alone's recorded rate for it (the bucket's, lowered for a narrow C, or
// the model's), and once the median of its last calls is slower by more than a margin
// (database/defaults.json's "watch"), the class is demoted, for good, with one
// TANDEM_VERBOSE line. The first call of each class is not counted: it pays once-only costs
// (OpenCL's start-up, the kernel's build, the feed's measurement). A cost model's prediction of
// the CPU can be wrong too: where a class's plan was predicted to beat the CPU alone by a small
// margin (over the rule's `close` times its time), its second call runs on the CPU alone, timed,
// and its later calls are judged against that time, scaled to each shape by the model.
#pragma once

#include <memory>
#include <vector>

#include "model/cost_model.hpp"
#include "plan/plan.hpp"
#include "profile/choice.hpp"
#include "profile/profile.hpp"

namespace tandem::detail::watch {

// The rule: whether calls whose seconds were `ratios` times what the CPU alone was predicted to
// take ran slower than it, by their median, beyond `margin` (0.1: 10%).
bool slower_than_cpu(std::vector<double> ratios, double margin);

class Class;

// Planning (plan.cpp): under auto (`strategy`), where `plan` gives devices rows, its class is
// looked up; a demoted one empties `plan` (the CPU alone takes the call, and the report says no
// GPU fraction), else this thread's call (Call, below) is told its class and the CPU alone's
// predicted seconds. Only a call's own plan (the first it makes under auto), or one made outside
// any call (uses_devices), is watched: plans made inside a call's planning after its own (the
// route's cubes) are left as the profile makes them. `model`: the cost model that made the plan
// (the first device's), or none for a bucket's split.
template <class T>
void plan(Plan& plan, const Problem<T>& p, Strategy strategy,
          const std::vector<std::shared_ptr<gpu::Device>>& devices,
          const std::vector<profile::Choice>& choices,
          const std::vector<std::shared_ptr<const profile::Profile>>& profiles,
          const cost::Model* model);

// One call on this thread (gemm.cpp): what its plan said, and then its time, which goes to the
// plan's class where it ran as planned (a device's rows, no failure). Calls nest on one thread
// (a plan may time calls of its own); each sees its own plan alone.
class Call {
 public:
  Call();
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  void ran(const Report& r);

  struct Expected {
    Class* of = nullptr;
    double cpu_seconds = 0;
    bool times_cpu = false;  // the CPU alone runs it, to time the class's CPU (watch.cpp)
    bool reported = false;   // ran() was told its time
    bool planned = false;    // the call's own plan was made (the first under auto)
  };

 private:
  Expected expected_;
  Expected* outer_;
};

}  // namespace tandem::detail::watch
