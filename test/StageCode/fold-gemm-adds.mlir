// RUN: pp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(pp-fold-gemm-adds))' | FileCheck %s

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (j, k)>
#c = affine_map<(i, j, k) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>

// A linear layer: the broadcast bias is the GEMM's C, and the add is gone.
// CHECK-LABEL: func.func @bias
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x4xf32>, %[[W:[^:]*]]: tensor<16x4xf32>, %[[B:[^:]*]]: tensor<16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[C:.*]] = linalg.generic {indexing_maps = [#[[$ROW:.*]], #[[$ID:.*]]], iterator_types = ["parallel", "parallel"]} ins(%[[B]] : tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[E]]
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[C]] : tensor<8x16xf32>) attrs = {pp.gemm = "library"}
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @bias(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>, %bias: tensor<16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (j, k)>
#c = affine_map<(i, j, k) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>

// A residual block's projection: the bias, then the residual seen through
// the product's [B*T, C] -> [B, T, C] view. The residual is collapsed to
// the GEMM's shape, and bias and residual are summed into C in one loop.
// CHECK-LABEL: func.func @bias_and_residual
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x4xf32>, %[[W:[^:]*]]: tensor<16x4xf32>, %[[B:[^:]*]]: tensor<16xf32>, %[[R:[^:]*]]: tensor<2x4x16xf32>)
// CHECK: %[[RC:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0, 1], [2]] : tensor<2x4x16xf32> into tensor<8x16xf32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[B]], %[[RC]] : tensor<16xf32>, tensor<8x16xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]*]]: f32, %[[F:[^:]*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[E]], %[[F]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[C]] : tensor<8x16xf32>) attrs = {pp.gemm = "library"}
// CHECK: %[[Y:.*]] = tensor.expand_shape %[[P]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @bias_and_residual(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>, %bias: tensor<16xf32>, %r: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %pb = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %v = tensor.expand_shape %pb [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
  %e3 = tensor.empty() : tensor<2x4x16xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r, %v : tensor<2x4x16xf32>, tensor<2x4x16xf32>) outs(%e3 : tensor<2x4x16xf32>) {
  ^bb0(%u: f32, %w2: f32, %o: f32):
    %s = arith.addf %u, %w2 : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (j, k)>
#c = affine_map<(i, j, k) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>

// Left alone: a product used again (saved for the backward), a generated
// contraction, a sum whose addend is made after the GEMM, and a product
// minus a bias.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.fill
func.func @kept(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>, %bias: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: %[[P:.*]] = linalg.generic {{.*}} attrs = {pp.gemm = "library"}
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<8x16xf32>, tensor<16xf32>)
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // CHECK: %[[Q:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
  // CHECK-NOT: pp.gemm
  %q = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[Q]], %{{.*}} : tensor<8x16xf32>, tensor<16xf32>)
  %yq = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%q, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // CHECK: %[[R:.*]] = linalg.generic {{.*}} attrs = {pp.gemm = "library"}
  %r = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %late = tensor.empty() : tensor<8x16xf32>
  // CHECK: linalg.fill
  %lz = linalg.fill ins(%zero : f32) outs(%late : tensor<8x16xf32>) -> tensor<8x16xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>)
  %yr = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r, %lz : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  // CHECK: %[[S:.*]] = linalg.generic {{.*}} attrs = {pp.gemm = "library"}
  %s = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) attrs = {pp.gemm = "library"} {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s2 = arith.addf %o, %m : f32
    linalg.yield %s2 : f32
  } -> tensor<8x16xf32>
  // CHECK: linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<8x16xf32>, tensor<16xf32>)
  // CHECK: arith.subf
  %ys = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %bias : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %d = arith.subf %u, %v : f32
    linalg.yield %d : f32
  } -> tensor<8x16xf32>
  return %p, %y, %yq, %yr, %ys : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (j, k)>
#c = affine_map<(i, j, k) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>

// A residual made before a loop is defined before the GEMM in its body:
// it becomes the GEMM's C there.
// CHECK-LABEL: func.func @addend_before_loop
// CHECK: %[[R:.*]] = linalg.fill
// CHECK: scf.for
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs(%[[C]] : tensor<8x16xf32>) attrs = {pp.gemm = "library"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[Y]]
func.func @addend_before_loop(%x: tensor<8x4xf32>, %w: tensor<16x4xf32>, %n: index) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.fill ins(%one : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %e) -> (tensor<8x16xf32>) {
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<8x4xf32>, tensor<16x4xf32>) outs(%z : tensor<8x16xf32>) attrs = {pp.gemm = "library"} {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%p, %r : tensor<8x16xf32>, tensor<8x16xf32>) outs(%acc : tensor<8x16xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %s = arith.addf %u, %v : f32
      linalg.yield %s : f32
    } -> tensor<8x16xf32>
    scf.yield %y : tensor<8x16xf32>
  }
  return %out : tensor<8x16xf32>
}
