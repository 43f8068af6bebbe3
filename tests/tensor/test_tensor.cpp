// Tensor handle: layout, views, copies, generator, printing, errors.
#include <catch2/catch.hpp>

#include "tensor/ops.h"

using namespace poslab;
using Catch::Contains;

TEST_CASE("creation gives contiguous row-major tensors", "[tensor]") {
  Tensor t = Tensor::arange(6).reshape({2, 3});
  REQUIRE(t.shape() == Shape{2, 3});
  REQUIRE(t.strides() == Shape{3, 1});
  REQUIRE(t.is_contiguous());
  REQUIRE(t.at({1, 2}) == 5);
  REQUIRE(Tensor::zeros({4}).to_vector() == std::vector<double>(4, 0.0));
  REQUIRE(Tensor::full({2}, 2.5, DType::f64).to_vector() == std::vector<double>{2.5, 2.5});
  REQUIRE(Tensor::scalar(3).item() == 3);
}

TEST_CASE("views share storage and do not copy", "[tensor]") {
  Tensor t = Tensor::arange(24).reshape({2, 3, 4});
  Tensor tr = t.transpose(0, 2);  // (4,3,2)
  REQUIRE(tr.shape() == Shape{4, 3, 2});
  REQUIRE(tr.storage() == t.storage());
  REQUIRE_FALSE(tr.is_contiguous());
  REQUIRE(tr.at({3, 1, 1}) == t.at({1, 1, 3}));

  Tensor p = t.permute({1, 2, 0});
  REQUIRE(p.at({2, 3, 1}) == t.at({1, 2, 3}));

  Tensor s = t.slice(2, 1, 4, 2);  // columns 1 and 3
  REQUIRE(s.shape() == Shape{2, 3, 2});
  REQUIRE(s.at({1, 2, 1}) == t.at({1, 2, 3}));
  REQUIRE(s.storage() == t.storage());

  Tensor e = Tensor::arange(3).reshape({3, 1}).expand({3, 4});
  REQUIRE(e.strides()[1] == 0);
  REQUIRE(e.at({2, 3}) == 2);

  // a non-contiguous tensor whose merged dims are still contiguous views without a copy
  Tensor v = t.slice(0, 1, 2).view({3, 4});
  REQUIRE(v.storage() == t.storage());
  REQUIRE(v.at({2, 3}) == 23);
}

TEST_CASE("contiguous copies only when needed and keeps values", "[tensor]") {
  Tensor t = Tensor::arange(6).reshape({2, 3});
  REQUIRE(t.contiguous().storage() == t.storage());
  Tensor c = t.transpose(0, 1).contiguous();
  REQUIRE(c.storage() != t.storage());
  REQUIRE(c.to_vector() == std::vector<double>{0, 3, 1, 4, 2, 5});
  REQUIRE(t.transpose(0, 1).reshape({6}).to_vector() == std::vector<double>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("a view that strides cannot express is an error naming the shapes", "[tensor][errors]") {
  Tensor t = Tensor::arange(6).reshape({2, 3}).transpose(0, 1);
  REQUIRE_THROWS_WITH(t.view({6}), Contains("view: cannot view shape (3,2)") && Contains("(6)"));
  REQUIRE_THROWS_WITH(Tensor::arange(6).reshape({4, 2}), Contains("cannot view shape (6)"));
  REQUIRE_THROWS_WITH(Tensor::arange(6).expand({2, 3}),
                      Contains("expand: cannot expand shape (6)"));
}

TEST_CASE("dtype conversion and element access", "[tensor]") {
  Tensor t = Tensor::from_vector({1.5, -2.25}, {2}, DType::f64);
  Tensor f = t.to(DType::f32);
  REQUIRE(f.dtype() == DType::f32);
  REQUIRE(f.to_vector() == std::vector<double>{1.5, -2.25});
  REQUIRE_THROWS_WITH(t.data<float>(), Contains("expected dtype f32, but got f64"));
  REQUIRE_THROWS_WITH(t.at({2}), Contains("out of range"));
}

TEST_CASE("the generator is deterministic and has the right moments", "[tensor]") {
  Generator a(42), b(42), c(43);
  for (int i = 0; i < 10; ++i) REQUIRE(a.next_u64() == b.next_u64());
  REQUIRE(Generator(42).next_u64() != c.next_u64());
  Generator g(7);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double x = g.normal();
    s += x, s2 += x * x;
  }
  REQUIRE(std::abs(s / n) < 0.01);
  REQUIRE(std::abs(s2 / n - 1) < 0.02);
  Generator u(9);
  for (int i = 0; i < 1000; ++i) {
    double x = u.uniform();
    REQUIRE((x >= 0 && x < 1));
  }
  // state round trip continues the same sequence
  Generator r(5);
  r.normal();
  auto st = r.state();
  double next = r.normal();
  Generator r2(0);
  r2.set_state(st);
  REQUIRE(r2.normal() == next);
}

TEST_CASE("printing shows shape, dtype and values", "[tensor]") {
  std::string s = Tensor::arange(4).reshape({2, 2}).str();
  REQUIRE_THAT(s, Contains("Tensor(2,2) f32 cpu") && Contains("[0 1]") && Contains("[2 3]"));
}

TEST_CASE("mixed dtypes and unbroadcastable shapes are named errors", "[tensor][errors]") {
  Tensor a = Tensor::zeros({2, 3}), b = Tensor::zeros({4});
  REQUIRE_THROWS_WITH(kernel::binary(kernel::BinaryOp::add, a, b),
                      Contains("add: shapes (2,3) and (4) cannot be broadcast"));
  Tensor d = Tensor::zeros({2, 3}, DType::f64);
  REQUIRE_THROWS_WITH(
      kernel::binary(kernel::BinaryOp::mul, a, d),
      Contains("mul: expected operands of the same dtype, but got f32 (2,3) and f64 (2,3)"));
}

TEST_CASE("the caching allocator reuses freed blocks", "[tensor]") {
  { Tensor warm = Tensor::empty({1000, 37}); }
  AllocStats before = cpu_alloc_stats();
  for (int i = 0; i < 10; ++i) Tensor t = Tensor::empty({1000, 37});
  REQUIRE(cpu_alloc_stats().fresh_allocations == before.fresh_allocations);
}
