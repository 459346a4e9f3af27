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
