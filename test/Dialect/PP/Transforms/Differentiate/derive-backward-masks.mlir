// RUN: pp-opt %s --pp-derive-backward | FileCheck %s
// RUN: pp-opt %s --pp-derive-backward --pp-schedule="schedule=1f1b num-microbatches=2" --pp-insert-transfers --pp-verify-schedule | FileCheck %s --check-prefix=XFER

// Stage 0 computes a mask (ids != 0, i1) and shifted ids (i64) from the
// data and sends them with an f32 activation; stage 1 masks with them. The
// mask and ids carry no gradient: stage 1's backward returns one for the
// f32 activation only, and stage 0's backward reads only that one.
// CHECK-LABEL: func.func @train_step_s0_forward(
// CHECK-SAME: -> (tensor<4xf32> {pp.slot = #pp.slot<act stage 0 output 0>}, tensor<4xi1> {pp.slot = #pp.slot<act stage 0 output 1>}, tensor<4xi64> {pp.slot = #pp.slot<act stage 0 output 2>})
// CHECK: arith.cmpi ne
// CHECK: arith.addi
// CHECK-LABEL: func.func @train_step_s0_backward(
// CHECK-SAME: %{{.*}}: tensor<4xf32> {pp.slot = #pp.slot<param 1>}, %{{.*}}: tensor<4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>})
// CHECK-SAME: -> (tensor<4xf32> {pp.slot = #pp.slot<param_grad 1>})
// CHECK-LABEL: func.func @train_step_s1_forward(
// CHECK-SAME: tensor<4xi1> {pp.slot = #pp.slot<act stage 0 output 1>}
// CHECK-SAME: tensor<4xi64> {pp.slot = #pp.slot<act stage 0 output 2>}
// CHECK-LABEL: func.func @train_step_s1_backward(
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<4xi1> {pp.slot = #pp.slot<act stage 0 output 1>}
// CHECK-SAME: -> (tensor<4xf32> {pp.slot = #pp.slot<grad stage 0 output 0>}, tensor<4xf32> {pp.slot = #pp.slot<param_grad 2>})
// CHECK: linalg.generic {{.*}}ins({{.*}}%[[M]]
// CHECK: arith.select
// CHECK-NOT: grad stage 0 output 1
// CHECK-NOT: grad stage 0 output 2

// The transfers are per stage and micro-batch (convert-pp-to-runtime sends
// each activation slot, the mask and ids among them): one activation send
// and one gradient send per micro-batch, as for an all-f32 boundary.
// XFER: pp.rank 0
// XFER: pp.compute forward stage 0 mb 0
// XFER-NEXT: pp.send activation stage 0 mb 0 to 1
// XFER: pp.recv gradient stage 0 mb 0 from 1
// XFER-NEXT: pp.compute backward stage 0 mb 0
// XFER: pp.rank 1
// XFER-NEXT: pp.recv activation stage 1 mb 0 from 0
// XFER-NEXT: pp.compute forward stage 1 mb 0
// XFER-NEXT: pp.compute backward stage 1 mb 0
// XFER-NEXT: pp.send gradient stage 1 mb 0 to 0

#map = affine_map<(d0) -> (d0)>
func.func @train_step(%ids: tensor<4xi64>, %w0: tensor<4xf32> {pp.param}, %w1: tensor<4xf32> {pp.param}) -> tensor<f32> {
  %h, %m, %j = pp.stage 0 (%ids, %w0) : (tensor<4xi64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi64>) {
  ^bb0(%i: tensor<4xi64>, %w: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %sq = linalg.mul ins(%w, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %eb = tensor.empty() : tensor<4xi1>
    %ei = tensor.empty() : tensor<4xi64>
    %mask, %next = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%i : tensor<4xi64>) outs(%eb, %ei : tensor<4xi1>, tensor<4xi64>) {
    ^bb0(%a: i64, %b: i1, %c: i64):
      %zero = arith.constant 0 : i64
      %one = arith.constant 1 : i64
      %ne = arith.cmpi ne, %a, %zero : i64
      %inc = arith.addi %a, %one : i64
      linalg.yield %ne, %inc : i1, i64
    } -> (tensor<4xi1>, tensor<4xi64>)
    pp.yield %sq, %mask, %next : tensor<4xf32>, tensor<4xi1>, tensor<4xi64>
  }
  %l = pp.stage 1 (%h, %m, %j, %w1) : (tensor<4xf32>, tensor<4xi1>, tensor<4xi64>, tensor<4xf32>) -> tensor<f32> {
  ^bb0(%x: tensor<4xf32>, %mk: tensor<4xi1>, %id: tensor<4xi64>, %w: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.mul ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %z = linalg.generic {indexing_maps = [#map, #map, #map, #map], iterator_types = ["parallel"]}
        ins(%y, %mk, %id : tensor<4xf32>, tensor<4xi1>, tensor<4xi64>) outs(%e : tensor<4xf32>) {
    ^bb0(%a: f32, %b: i1, %c: i64, %d: f32):
      %cf = arith.sitofp %c : i64 to f32
      %s = arith.mulf %a, %cf : f32
      %zero = arith.constant 0.0 : f32
      %r = arith.select %b, %s, %zero : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %zero = arith.constant 0.0 : f32
    %s0 = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%z : tensor<4xf32>) outs(%acc : tensor<f32>) dimensions = [0]
      (%p: f32, %q: f32) {
        %t = arith.addf %p, %q : f32
        linalg.yield %t : f32
      }
    pp.yield %sum : tensor<f32>
  }
  return %l : tensor<f32>
}
