// RUN: pp-opt %s --pp-outline-loop-nests | FileCheck %s

// The same layer in two blocks of a stage, and again in another stage's
// function: one outlined function for all three, another for the loop that
// differs in its constant; the constants are copied in, the buffers and the
// scalar are arguments, and the loop's result comes back from the call.
// Functions without pp.stage are left alone.
// CHECK-LABEL: func.func @f_s0_forward
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x8xf32>, %[[Y:[a-z0-9]+]]: memref<4x8xf32>, %[[Z:[a-z0-9]+]]: memref<4x8xf32>, %[[S:[a-z0-9]+]]: f32
// CHECK: call @f_s0_forward_nest0(%[[X]], %[[Y]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK-NEXT: call @f_s0_forward_nest0(%[[Y]], %[[Z]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK-NEXT: %[[SUM:.*]] = call @f_s0_forward_nest1(%[[S]]) : (f32) -> f32
// CHECK-NEXT: %[[SUM2:.*]] = call @f_s0_forward_nest2(%[[S]]) : (f32) -> f32
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[SUM]], %[[SUM2]]
// CHECK-NEXT: memref.store %[[ADD]], %[[Z]]
// CHECK-NEXT: return
// CHECK-LABEL: func.func @f_s1_forward
// CHECK: call @f_s0_forward_nest0(
// CHECK-NEXT: return
// CHECK-LABEL: func.func @not_a_stage
// CHECK-NEXT: linalg.generic
// CHECK: func.func private @f_s0_forward_nest0(%[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]] : memref<4x8xf32>) outs(%[[B]] : memref<4x8xf32>)
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: return
// CHECK: func.func private @f_s0_forward_nest1(%[[SCALE:.*]]: f32) -> f32
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 4 : index
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32
// CHECK: func.func private @f_s0_forward_nest2(
// CHECK-DAG: arith.constant 8 : index
// CHECK-NOT: func.func private

#id = affine_map<(i, j) -> (i, j)>
func.func @f_s0_forward(%x: memref<4x8xf32>, %y: memref<4x8xf32>,
                        %z: memref<4x8xf32>, %s: f32)
    attributes {pp.stage = 0 : i64} {
  %two = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %s) -> f32 {
    %n = arith.addf %acc, %s : f32
    scf.yield %n : f32
  }
  %sum2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %s) -> f32 {
    %n = arith.addf %acc, %s : f32
    scf.yield %n : f32
  }
  %add = arith.addf %sum, %sum2 : f32
  memref.store %add, %z[%c0, %c0] : memref<4x8xf32>
  return
}

func.func @f_s1_forward(%x: memref<4x8xf32>, %y: memref<4x8xf32>)
    attributes {pp.stage = 1 : i64} {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  }
  return
}

func.func @not_a_stage(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  return
}
