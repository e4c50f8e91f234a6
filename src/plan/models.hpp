// Planning by the devices' cost models (private to plan/): where auto plans a call with them
// rather than with a profile's buckets, the plan they give, and which of the machine's GPUs take a
// call that names none.
#pragma once

#include <vector>

#include "base/precision.hpp"
#include "base/problem.hpp"
#include "model/cost_model.hpp"
#include "plan/candidates.hpp"
#include "plan/plan.hpp"
#include "tandem/tandem.hpp"

namespace tandem::detail {

// The call as the cost model sees it, before any operand's pinning is known.
template <class T>
cost::Shape model_shape(const Problem<T>& p) {
  cost::Shape s;
  s.m = p.m;
  s.n = p.n;
  s.k = p.k;
  s.element_bytes = sizeof(T);
  s.flops_per_multiply_add = flops_per_multiply_add(precision_of<T>());
  s.reads_c = p.beta != T(0);
  return s;
}

// The candidates' cost models for this precision, when auto plans the call with them: every
// device's profile has one, and the call is one no bucket measured or runs on several devices.
// Empty otherwise.
template <class T>
std::vector<const cost::Model*> models_for(const Problem<T>& p, const Request& req,
                                           const Candidates& c);

// The plan the models give: each device's rows in whole tiles of the kernel it will run, the
// CPU's threads (the cores it leaves feed the devices), the prediction in the basis.
template <class T>
void model_plan(const Problem<T>& p, const Options& o, const Candidates& c,
                const std::vector<const cost::Model*>& models, Plan& plan);

// Auto's default set: `c` holds the first GPU alone; where the machine has other GPUs and every
// one's profile has a cost model, it becomes the set (one GPU or all) the models weigh best.
template <class T>
void choose_default_set(const Problem<T>& p, const Options& o, const Request& req, Candidates& c);

}  // namespace tandem::detail
