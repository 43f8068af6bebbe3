// optimizer.h — AdamW (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", 2019),
// the learning-rate schedule and gradient clipping.
//
// For each parameter p with gradient g, at step t = 1, 2, ...:
//   m = b1 m + (1 - b1) g;   v = b2 v + (1 - b2) g^2
//   mhat = m / (1 - b1^t);   vhat = v / (1 - b2^t)
//   p -= lr (mhat / (sqrt(vhat) + eps) + wd p)         wd only where NamedParam::decay
// Weight decay is decoupled (applied to p, not added to g) and applies only to the weight
// matrices of Linear layers: not to biases, LayerNorm, or the embeddings wte / wpe (so the
// rows of a learned table that training never reaches keep their initial values).
#pragma once
#include <string>
#include <vector>

#include "nn/module.h"

namespace poslab {

struct AdamWConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};

class AdamW {
 public:
  AdamW(std::vector<NamedParam> params, const AdamWConfig& cfg);
  void step(double lr);  // one update with this step's learning rate
  int64_t steps_taken() const { return t_; }
  void set_steps_taken(int64_t t) { t_ = t; }
  std::vector<Tensor>& m() { return m_; }
  std::vector<Tensor>& v() { return v_; }
  const std::vector<NamedParam>& params() const { return params_; }

 private:
  std::vector<NamedParam> params_;
  AdamWConfig cfg_;
  std::vector<Tensor> m_, v_;
  std::vector<Tensor> grads_;  // step()'s list of the gradients, empty between steps
  int64_t t_ = 0;
};

// The learning rate of each step (--schedule). Both warm up linearly from 0 over `warmup`
// steps to max_lr and end at min_lr:
//   cosine  lr(s) = min_lr + (max_lr - min_lr) (1 + cos(pi q)) / 2,  q = (s - warmup)/(total -
//   warmup) wsd     warmup-stable-decay (Hu et al. 2024, "MiniCPM"; Hagele et al. 2024, "Scaling
//   Laws and
//           Compute-Optimal Training beyond Fixed Training Durations"): max_lr until the last
//           n = round(decay_share total) steps, then linear to min_lr at the last step:
//             lr(s) = max_lr + (min_lr - max_lr) (s + 1 - (total - n)) / n,  s >= total - n
//           The constant phase does not depend on `total`, so the state of a long run at step
//           total' - n' continues into a run trained straight to total' (a cooldown branch,
//           trainer.h): same weights, moments, data order and learning rates, bit for bit.
enum class Schedule { cosine, wsd };
Schedule parse_schedule(const std::string& name);  // cosine|wsd; the error names them
const char* schedule_name(Schedule schedule);

struct LrSchedule {
  Schedule kind = Schedule::cosine;
  int64_t warmup = 0, total = 1;
  double max_lr = 1e-3, min_lr = 1e-4;
  double decay_share = 0.2;     // wsd: the share of the steps that decays
  int64_t decay_start() const;  // wsd: the first step of the decay (total for cosine)
};
// The rate of step `step` (0-based).
double lr_at(const LrSchedule& schedule, int64_t step);

// Global L2 norm of all gradients; when above max_norm every gradient is scaled by
// max_norm / norm. Returns the norm before clipping (inf/nan when a gradient is not finite).
double clip_grad_norm(const std::vector<NamedParam>& params, double max_norm);

}  // namespace poslab
