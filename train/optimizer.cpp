#include "train/optimizer.h"

#include <omp.h>

#include <cmath>

#include "train/optimizer_kernels.h"

namespace poslab {

AdamW::AdamW(std::vector<NamedParam> params, const AdamWConfig& cfg)
    : params_(std::move(params)), cfg_(cfg) {
  for (const NamedParam& p : params_) {
    m_.push_back(Tensor::zeros(p.tensor.shape(), p.tensor.dtype(), p.tensor.device()));
    v_.push_back(Tensor::zeros(p.tensor.shape(), p.tensor.dtype(), p.tensor.device()));
  }
}

// The optimizer's one device decision: parameters on the GPU take its kernels, one launch over
// all of them (optimizer_kernels.h); on the CPU, the loops below. A model's parameters share
// one device (GPT::to).
static bool on_gpu(const std::vector<NamedParam>& params) {
  return !params.empty() && params[0].tensor.device() == Device::cuda;
}

// Models with fewer parameters than this, in all, update on one thread, sparing a parallel
// region's start-up: a threshold chosen, not measured (the tiny models of the tests are below
// it; every model of the study is far above).
constexpr int64_t kParallelElements = 1 << 15;

// One parameter's update, this thread's share of it: an orphaned `omp for` inside the single
// parallel region of AdamW::step (below), without the barrier at its end.
template <class T>
static void adamw_update(T* p, const T* g, T* m, T* v, int64_t n, double lr, double wd,
                         const AdamWConfig& c, double bc1, double bc2) {
#pragma omp for simd schedule(static) nowait
  for (int64_t i = 0; i < n; ++i) {
    double gi = g[i];
    double mi = c.beta1 * m[i] + (1 - c.beta1) * gi;
    double vi = c.beta2 * v[i] + (1 - c.beta2) * gi * gi;
    m[i] = static_cast<T>(mi);
    v[i] = static_cast<T>(vi);
    double update = (mi / bc1) / (std::sqrt(vi / bc2) + c.eps) + wd * p[i];
    p[i] = static_cast<T>(p[i] - lr * update);
  }
}

void AdamW::step(double lr) {
  ++t_;
  double bc1 = 1 - std::pow(cfg_.beta1, static_cast<double>(t_));
  double bc2 = 1 - std::pow(cfg_.beta2, static_cast<double>(t_));
  NoGrad no_grad;
  if (on_gpu(params_)) {
    std::vector<Tensor> ps, gs, ms, vs;
    std::vector<double> wd;
    for (size_t i = 0; i < params_.size(); ++i)
      if (params_[i].tensor.grad().defined()) {
        ps.push_back(params_[i].tensor), gs.push_back(params_[i].tensor.grad());
        ms.push_back(m_[i]), vs.push_back(v_[i]);
        wd.push_back(params_[i].decay ? cfg_.weight_decay : 0.0);
      }
    return kernel::cuda::adamw_update(ps, gs, ms, vs, wd,
                                      {lr, cfg_.beta1, cfg_.beta2, cfg_.eps, bc1, bc2});
  }
  // Every parameter in one parallel region, each split between the threads with no barrier
  // between parameters: a region per parameter ran the small ones (biases, LayerNorm, the
  // attention output's 128 x 128) on one thread while the other waited (perf, issue 13).
  // Each element's update is the same arithmetic either way.
  // grads_ keeps its capacity from step to step (no allocation in a steady step) and lets go of
  // the gradients at the end.
  grads_.clear();
  int64_t total = 0;
  for (const NamedParam& p : params_) {
    grads_.push_back(p.tensor.grad());
    if (grads_.back().defined()) total += p.tensor.numel();
  }
#pragma omp parallel if (total > kParallelElements)
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i].tensor;
    const Tensor& g = grads_[i];
    if (!g.defined()) continue;
    double wd = params_[i].decay ? cfg_.weight_decay : 0.0;
    dispatch(p.dtype(), [&](auto zero) {
      using T = decltype(zero);
      adamw_update<T>(p.data<T>(), g.data<T>(), m_[i].data<T>(), v_[i].data<T>(), p.numel(), lr, wd,
                      cfg_, bc1, bc2);
    });
  }
  grads_.clear();
}

Schedule parse_schedule(const std::string& name) {
  if (name == "cosine") return Schedule::cosine;
  if (name == "wsd") return Schedule::wsd;
  fail("--schedule: expected cosine|wsd, but got '", name, "'");
}

const char* schedule_name(Schedule schedule) {
  return schedule == Schedule::wsd ? "wsd" : "cosine";
}

int64_t LrSchedule::decay_start() const {
  if (kind == Schedule::cosine) return total;
  return total - std::llround(decay_share * static_cast<double>(total));
}

double lr_at(const LrSchedule& c, int64_t step) {
  if (step < c.warmup) return c.max_lr * static_cast<double>(step + 1) / c.warmup;
  if (c.kind == Schedule::wsd) {
    const int64_t start = c.decay_start(), n = c.total - start;
    if (step < start || n <= 0) return c.max_lr;
    const double q = std::min(1.0, static_cast<double>(step + 1 - start) / n);
    return c.max_lr + (c.min_lr - c.max_lr) * q;
  }
  if (c.total <= c.warmup) return c.max_lr;
  double q = std::min(1.0, static_cast<double>(step - c.warmup) / (c.total - c.warmup));
  return c.min_lr + (c.max_lr - c.min_lr) * 0.5 * (1 + std::cos(M_PI * q));
}

double clip_grad_norm(const std::vector<NamedParam>& params, double max_norm) {
  if (on_gpu(params)) {  // one read-back for all
    std::vector<Tensor> grads;
    for (const NamedParam& p : params)
      if (p.tensor.grad().defined()) grads.push_back(p.tensor.grad());
    return kernel::cuda::clip_grad_norm(grads, max_norm);
  }
  double sq = 0;
  for (const NamedParam& p : params)
    if (p.tensor.grad().defined()) sq += kernel::sum_squares(p.tensor.grad());
  double norm = std::sqrt(sq);
  if (std::isfinite(norm) && max_norm > 0 && norm > max_norm)
    for (const NamedParam& p : params)
      if (p.tensor.grad().defined()) kernel::scale_(p.tensor.grad(), max_norm / norm);
  return norm;
}

}  // namespace poslab
