// eta.h — what the study will cost, said before it starts: its planned tokens over a
// throughput that is measured (now, or by the study's finished runs) or assumed, and which.
//
// The unit is a training token of the study's main network at T0 (what tokens/s of a main
// run's log counts). Per layer and token, a forward pass at length L multiplies 12 C^2 weights
// (q, k, v and the projection: 4 C^2; the MLP: 8 C^2) and, with causal attention, about L/2
// keys x C twice (q.k, then the weighted v): L C. So a token of a network of n layers costs
// n C (12 C + L) multiply-adds forward, and a training step about three times that (the
// backward pass costs two). A run plans
//   training     steps x batch x T0 tokens of its network (a small task model counts less),
//                and its val loss every eval_every steps: eval_batches x batch x T0 forward
//                tokens each (in a short run of the quick study, as much as the training)
//   evaluation   every forward token: per (run, scaling) the windows at every length; per
//                causal run the sliding window of T0 moved by T0/4, once, over the targets of
//                its evaluation with the most (about 4 forward tokens per target:
//                sliding_window_count); per next-token run also the kept model at T0.
// Not counted: preparing corpora, the n-gram fits, task scoring, the report (minutes at most).
#pragma once
#include <string>
#include <vector>

#include "study/study.h"

namespace poslab {

// A run's planned work in training tokens (above); val sizes from the prepared corpora (an
// assumed 500,000 tokens for one not yet prepared).
double planned_tokens(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);
// A job's (runner.h: make_job): its run's and its children's, of those not done.
double job_tokens(const StudyConfig& c, const StudyPlan& p, const RunSpec& r);

// Training tokens per second of the whole machine, and where the number came from.
struct Throughput {
  double tokens_per_s = 0;
  std::string source;  // "measured now", "measured by N finished runs", "assumed"
};
// `measured` > 0: measured now (measure_jobs). Otherwise the mean tokens/s in the logs of the
// finished runs of this results folder times `jobs`, else StudyConfig::assumed_tokens_per_s.
Throughput study_throughput(const StudyConfig& c, const StudyPlan& p, double measured, int jobs);

// One line: the expected time of the pending runs and of the whole study, their planned tokens
// and the throughput used (and whether it was measured or assumed).
std::string eta_text(const StudyConfig& c, const StudyPlan& p,
                     const std::vector<const RunSpec*>& pending, const Throughput& t);

}  // namespace poslab
