// nn_ops.cpp — the fused neural-network ops: softmax, log-softmax, GELU, LayerNorm,
// embedding, cross-entropy. Forward and backward loops live in tensor/ (one file each,
// with the scalar math); the derivations are here, but GELU's and LayerNorm's, which are
// derived once, beside the forward they invert, in nn/gpt_reference.cpp (read that first).
#include "autograd/ops.h"

namespace poslab {

// y = softmax(x) along the last axis. Saved: y.
//   dy/dx: J_jk = y_j ([j == k] - y_k)  =>  dx_k = sum_j dy_j J_jk = y_k (dy_k - sum_j dy_j y_j)
Tensor softmax(const Tensor& x) {
  Tensor y = kernel::softmax(x);
  Tensor sy = y.detach();
  return record("softmax", y, {&x}, [sy](const Tensor& dy) {
    return std::vector<Tensor>{kernel::softmax_backward(sy, dy)};
  });
}

// y = x - logsumexp(x) along the last axis. Saved: y.
//   dy_j/dx_k = [j == k] - softmax_k  =>  dx_k = dy_k - exp(y_k) sum_j dy_j
Tensor log_softmax(const Tensor& x) {
  Tensor y = kernel::log_softmax(x);
  Tensor sy = y.detach();
  return record("log_softmax", y, {&x}, [sy](const Tensor& dy) {
    return std::vector<Tensor>{kernel::log_softmax_backward(sy, dy)};
  });
}

// y = 0.5 x (1 + tanh u), u = sqrt(2/pi)(x + 0.044715 x^3). Saved: x.
// Backward: derived in nn/gpt_reference.cpp (gelu_backward). Test: "ops: gelu".
Tensor gelu(const Tensor& x) {
  Tensor sx = x.detach();
  return record("gelu", kernel::gelu(x), {&x}, [sx](const Tensor& dy) {
    return std::vector<Tensor>{kernel::gelu_backward(sx, dy)};
  });
}

// y = xhat w + b, xhat = (x - mean) rstd over the last dim (C). Saved: x, w, mean, rstd.
// Backward: derived in nn/gpt_reference.cpp (layernorm_backward). Test: "ops: layer_norm".
// dw and db are added straight into their gradient buffers when the engine hands them over
// (`into`, node.h). dx is returned.
Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  Tensor mean, rstd;
  Tensor y = kernel::layer_norm(x, w, b, eps, &mean, &rstd);
  bool gx = x.requires_grad(), gw = w.requires_grad(), gb = b.requires_grad();
  Tensor sx = x.detach(), sw = w.detach();
  return record(
      "layer_norm", y, {&x, &w, &b},
      [sx, sw, mean, rstd, gx, gw, gb](const Tensor& dy, const std::vector<Tensor>& into) {
        Tensor dx, dw = into[1], db = into[2];
        kernel::layer_norm_backward(sx, sw, mean, rstd, dy, &dx, &dw, &db);
        if (!gx) dx = Tensor();
        if (!gw || into[1].defined()) dw = Tensor();  // not wanted, or added there already
        if (!gb || into[2].defined()) db = Tensor();
        return std::vector<Tensor>{dx, dw, db};
      });
}

// out[n] = table[ids[n]]. Saved: ids.
//   dtable[v] = sum over n with ids[n] == v of dout[n]   (a scatter-add)
Tensor embedding(const Tensor& table, const Ids& ids) {
  int64_t V = table.dim() == 2 ? table.size(0) : 0;
  return record("embedding", kernel::embedding(table, ids), {&table}, [ids, V](const Tensor& dout) {
    return std::vector<Tensor>{kernel::embedding_backward(dout, ids, V)};
  });
}

// L = (1/N) sum_n -log softmax(z_n)[t_n]. Saved: p = softmax(z).
//   dL/dz_nv = (p_nv - [v == t_n]) / N, times the incoming dL (a scalar)
Tensor cross_entropy(const Tensor& logits, const Ids& targets, Tensor* row_loss) {
  Tensor probs;
  Tensor loss = kernel::cross_entropy(logits, targets, &probs, row_loss);
  return record("cross_entropy", loss, {&logits}, [probs, targets](const Tensor& dl) {
    return std::vector<Tensor>{kernel::cross_entropy_backward(probs, targets, dl)};
  });
}

}  // namespace poslab
