// view.cpp — the views of a Tensor: new shape, strides and offset over the same storage, no
// copy (reshape copies only when no strides can express the new shape).
#include <algorithm>
#include <utility>

#include "tensor/tensor.h"

namespace poslab {

Tensor Tensor::with_layout(Shape shape, Shape strides, int64_t offset) const {
  return Tensor(storage_, std::move(shape), std::move(strides), offset, dtype_, device_);
}

// Infers one -1 in a target shape and checks the element count.
static Shape infer_shape(const char* op, const Shape& from, Shape to) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (infer >= 0) fail(op, ": only one dim may be -1, but got ", shape_str(to));
      infer = static_cast<int64_t>(i);
    } else {
      known *= to[i];
    }
  }
  if (infer >= 0 && known > 0) to[infer] = numel_of(from) / known;
  if (numel_of(to) != numel_of(from))
    fail(op, ": cannot view shape ", shape_str(from), " (", numel_of(from), " elements) as ",
         shape_str(to));
  return to;
}

// A view with a new shape exists iff each group of merged dims is itself contiguous.
// Walks old and new dims together, merging runs of old dims with equal element counts.
static bool view_strides(const Shape& old_shape, const Shape& old_strides, const Shape& shape,
                         Shape& strides) {
  strides.assign(shape.size(), 0);
  size_t i = 0, j = 0;
  while (i < old_shape.size() || j < shape.size()) {
    // skip size-1 dims on either side
    if (i < old_shape.size() && old_shape[i] == 1) {
      ++i;
      continue;
    }
    if (j < shape.size() && shape[j] == 1) {
      strides[j] = 1;
      ++j;
      continue;
    }
    if (i >= old_shape.size() || j >= shape.size()) return false;
    size_t i0 = i, j0 = j;
    int64_t a = old_shape[i++], b = shape[j++];
    while (a != b) {
      if (a < b) {
        if (i >= old_shape.size()) return false;
        a *= old_shape[i++];
      } else {
        if (j >= shape.size()) return false;
        b *= shape[j++];
      }
    }
    // old dims [i0, i) must be mutually contiguous (skipping size-1 dims)
    int64_t inner_stride = 0;
    bool have = false;
    for (size_t k = i; k-- > i0;) {
      if (old_shape[k] == 1) continue;
      if (have && old_strides[k] != inner_stride) return false;
      inner_stride = old_strides[k] * old_shape[k];
      have = true;
    }
    int64_t st = 1;  // the stride of the innermost non-1 old dim of the group
    for (size_t k = i; k-- > i0;) {
      if (old_shape[k] != 1) {
        st = old_strides[k];
        break;
      }
    }
    for (size_t k = j; k-- > j0;) {
      strides[k] = st;
      st *= shape[k];
    }
  }
  return true;
}

Tensor Tensor::view(const Shape& shape) const {
  Shape to = infer_shape("view", shape_, shape);
  Shape st;
  if (is_contiguous()) return with_layout(to, contiguous_strides(to), offset_);
  if (!view_strides(shape_, strides_, to, st))
    fail("view: cannot view shape ", shape_str(shape_), " with strides ", shape_str(strides_),
         " as ", shape_str(to), " without a copy; call contiguous() or reshape()");
  return with_layout(to, st, offset_);
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape to = infer_shape("reshape", shape_, shape);
  if (is_contiguous()) return with_layout(to, contiguous_strides(to), offset_);
  Shape st;
  if (view_strides(shape_, strides_, to, st)) return with_layout(to, st, offset_);
  return contiguous().view(to);
}

static int64_t wrap_dim(const char* op, int64_t d, int64_t n, const Shape& shape) {
  if (d < -n || d >= n) fail(op, ": dim ", d, " out of range for shape ", shape_str(shape));
  return d < 0 ? d + n : d;
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  a = wrap_dim("transpose", a, dim(), shape_);
  b = wrap_dim("transpose", b, dim(), shape_);
  Shape sh = shape_, st = strides_;
  std::swap(sh[a], sh[b]);
  std::swap(st[a], st[b]);
  return with_layout(sh, st, offset_);
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  if (static_cast<int64_t>(order.size()) != dim())
    fail("permute: expected ", dim(), " dims for shape ", shape_str(shape_), ", but got ",
         shape_str(order));
  Shape sh(dim()), st(dim());
  std::vector<bool> seen(dim(), false);
  for (int64_t i = 0; i < dim(); ++i) {
    int64_t d = wrap_dim("permute", order[i], dim(), shape_);
    if (seen[d]) fail("permute: dim ", d, " repeated in ", shape_str(order));
    seen[d] = true;
    sh[i] = shape_[d];
    st[i] = strides_[d];
  }
  return with_layout(sh, st, offset_);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  d = wrap_dim("slice", d, dim(), shape_);
  int64_t n = shape_[d];
  if (step <= 0) fail("slice: expected a positive step, but got ", step);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sh = shape_, st = strides_;
  sh[d] = (end - start + step - 1) / step;
  st[d] = strides_[d] * step;
  return with_layout(sh, st, offset_ + start * strides_[d]);
}

Tensor Tensor::expand(const Shape& shape) const {
  if (shape.size() < shape_.size())
    fail("expand: cannot expand shape ", shape_str(shape_), " to fewer dims ", shape_str(shape));
  Shape st(shape.size(), 0);
  size_t lead = shape.size() - shape_.size();
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (shape_[i] == shape[lead + i])
      st[lead + i] = strides_[i];
    else if (shape_[i] != 1)
      fail("expand: cannot expand shape ", shape_str(shape_), " to ", shape_str(shape));
  }
  return with_layout(shape, st, offset_);
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim("unsqueeze", d, dim() + 1, shape_);
  Shape sh = shape_, st = strides_;
  int64_t s = d < dim() ? strides_[d] * shape_[d] : 1;
  sh.insert(sh.begin() + d, 1);
  st.insert(st.begin() + d, s);
  return with_layout(sh, st, offset_);
}

Tensor Tensor::squeeze(int64_t d) const {
  d = wrap_dim("squeeze", d, dim(), shape_);
  if (shape_[d] != 1) fail("squeeze: dim ", d, " of shape ", shape_str(shape_), " is not 1");
  Shape sh = shape_, st = strides_;
  sh.erase(sh.begin() + d);
  st.erase(st.begin() + d);
  return with_layout(sh, st, offset_);
}

}  // namespace poslab
