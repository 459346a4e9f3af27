// RUN: pp-opt %s --pp-approximate-math | FileCheck %s
// RUN: pp-opt %s --pp-approximate-math=ops=erf | FileCheck %s --check-prefix=ERF

// tanh, exp, expm1 and erf become arithmetic, on scalars and vectors.
// CHECK-LABEL: func.func @default_ops
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: math.expm1
// CHECK-NOT: math.erf
// CHECK: math.log
// CHECK: return
// ERF-LABEL: func.func @default_ops
// ERF: math.tanh
// ERF: math.exp
// ERF: math.expm1
// ERF-NOT: math.erf
func.func @default_ops(%x: f32, %v: vector<8xf32>) -> (f32, f32, f32, vector<8xf32>, f32) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %m = math.expm1 %x : f32
  %r = math.erf %v : vector<8xf32>
  %l = math.log %x : f32
  return %t, %e, %m, %r, %l : f32, f32, f32, vector<8xf32>, f32
}

// Inside linalg bodies too, where stage code has them.
// CHECK-LABEL: func.func @in_generic
// CHECK: linalg.generic
// CHECK-NOT: math.tanh
// CHECK: arith.divf
// CHECK: linalg.yield
func.func @in_generic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// erf is one rational polynomial on the clamped argument: no selects
// between intervals, one division.
// CHECK-LABEL: func.func @rational_erf
// CHECK-COUNT-2: arith.select
// CHECK-NOT: arith.select
// CHECK: %[[X2:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK-COUNT-10: math.fma %[[X2]]
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: %[[R:.*]] = arith.divf %[[P]], %{{.*}} : vector<16xf32>
// CHECK-NOT: arith.select
// CHECK: return %[[R]]
func.func @rational_erf(%x: vector<16xf32>) -> vector<16xf32> {
  %r = math.erf %x : vector<16xf32>
  return %r : vector<16xf32>
}

// A division by a constant becomes a multiplication by its reciprocal where
// that is a normal f32 (GELU's x / sqrt(2)); by a variable, by zero or by
// a constant whose reciprocal is subnormal it stays a division, and so it
// does outside the default ops.
// CHECK-LABEL: func.func @reciprocal_division
// CHECK-DAG: %[[HALF:.*]] = arith.constant dense<0.707106769> : vector<8xf32>
// CHECK-DAG: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: arith.mulf %{{.*}}, %[[HALF]] : vector<8xf32>
// CHECK: arith.mulf %{{.*}}, %[[QUARTER]] : f32
// CHECK: arith.divf %{{.*}}, %arg2 : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: arith.divf %{{.*}}, %{{.*}} : f64
// ERF-LABEL: func.func @reciprocal_division
// ERF-NOT: arith.mulf
// ERF: return
func.func @reciprocal_division(%v: vector<8xf32>, %x: f32, %y: f32, %d: f64)
    -> (vector<8xf32>, f32, f32, f32, f32, f64) {
  %sqrt2 = arith.constant dense<1.41421354> : vector<8xf32>
  %four = arith.constant 4.0 : f32
  %zero = arith.constant 0.0 : f32
  %huge = arith.constant 1.0e+38 : f32
  %two = arith.constant 2.0 : f64
  %a = arith.divf %v, %sqrt2 : vector<8xf32>
  %b = arith.divf %x, %four : f32
  %c = arith.divf %x, %y : f32
  %e = arith.divf %x, %zero : f32
  %f = arith.divf %x, %huge : f32
  %g = arith.divf %d, %two : f64
  return %a, %b, %c, %e, %f, %g : vector<8xf32>, f32, f32, f32, f32, f64
}
