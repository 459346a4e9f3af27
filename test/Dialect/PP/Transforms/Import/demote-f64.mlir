// RUN: pp-opt %s -split-input-file -verify-diagnostics --pp-demote-f64 | FileCheck %s

// A layer-norm mean as torch-mlir imports it: widened to f64, summed,
// divided by an f64 constant and rounded back. Everything becomes f32 and
// the conversions disappear.
// CHECK-LABEL: func.func @mean(
// CHECK-SAME: %[[X:.*]]: tensor<4x8xf32>) -> tensor<4xf32>
// CHECK-DAG: %[[N:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[ADD]] : f32
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[DIV:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[DIV]] : f32
// CHECK: return %[[MEAN]] : tensor<4xf32>
// CHECK-NOT: f64
func.func @mean(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f64
  %n = arith.constant 8.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf64>) {
    ^bb0(%in: f32, %acc: f64):
      %w = arith.extf %in : f32 to f64
      %a = arith.addf %w, %acc : f64
      linalg.yield %a : f64
  } -> tensor<4xf64>
  %e32 = tensor.empty() : tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                          iterator_types = ["parallel"]}
      ins(%sum : tensor<4xf64>) outs(%e32 : tensor<4xf32>) {
    ^bb0(%s: f64, %o: f32):
      %d = arith.divf %s, %n : f64
      %t = arith.truncf %d : f64 to f32
      linalg.yield %t : f32
  } -> tensor<4xf32>
  return %mean : tensor<4xf32>
}

// -----

// f64 arguments, results and dense constants are rounded to f32; other
// conversions (f16 to f64 becomes f16 to f32) stay.
// CHECK-LABEL: func.func @signature(
// CHECK-SAME: %[[A:.*]]: tensor<2xf32>, %[[H:.*]]: f16) -> (tensor<2xf32>, f32)
// CHECK: %[[C:.*]] = arith.constant dense<[1.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[C]] : tensor<2xf32>
// CHECK: %[[W:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: return %[[SUM]], %[[W]] : tensor<2xf32>, f32
func.func @signature(%a: tensor<2xf64>, %h: f16) -> (tensor<2xf64>, f64) {
  %c = arith.constant dense<[0.1, 0.25]> : tensor<2xf64>
  %s = arith.addf %a, %c : tensor<2xf64>
  %w = arith.extf %h : f16 to f64
  return %s, %w : tensor<2xf64>, f64
}

// -----

// A function without f64 is left as it is.
// CHECK-LABEL: func.func @untouched(
// CHECK-NEXT: %[[C:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %{{.*}}, %[[C]] : f32
// CHECK-NEXT: return %[[M]] : f32
func.func @untouched(%x: f32) -> f32 {
  %c = arith.constant 2.0 : f32
  %m = arith.mulf %x, %c : f32
  return %m : f32
}

// -----

// An f64 resource (a PyTorch export's f64 buffer) is rounded from its blob.
// CHECK-LABEL: func.func @resource
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @resource() -> tensor<2xf64> {
  %c = arith.constant dense_resource<blob> : tensor<2xf64>
  return %c : tensor<2xf64>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x08000000000000000000F03F0000000000000040"
    }
  }
#-}

// -----

func.func @missing_resource() -> tensor<2xf64> {
  // expected-error @+1 {{'arith.constant' op reads the resource 'absent', whose data the module does not hold}}
  %c = arith.constant dense_resource<absent> : tensor<2xf64>
  return %c : tensor<2xf64>
}
