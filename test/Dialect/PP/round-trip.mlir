// RUN: pp-opt %s | pp-opt | FileCheck %s

// CHECK-LABEL: func.func @stages
func.func @stages(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[B:.*]] = pp.boundary %{{.*}} : tensor<4xf32>
  %b = pp.boundary %x : tensor<4xf32>
  // CHECK: pp.stage 0 (%[[B]]) : (tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: pp.yield %{{.*}} : tensor<4xf32>
  %r = pp.stage 0 (%b) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    pp.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK: pp.schedule @s "gpipe" for @train_step microbatches 1 stage_rank [0, 1] {
// CHECK-NEXT: pp.rank 0 {
// CHECK-NEXT: pp.compute forward stage 0 mb 0
// CHECK-NEXT: pp.send activation stage 0 mb 0 to 1
// CHECK-NEXT: pp.recv gradient stage 0 mb 0 from 1
// CHECK-NEXT: pp.compute backward stage 0 mb 0
// CHECK-NEXT: pp.optimizer_step stage 0
// CHECK: pp.rank 1 {
// CHECK: pp.compute backward_input stage 1 mb 0
// CHECK: pp.compute backward_weight stage 1 mb 0
// CHECK: pp.all_reduce stage 1
pp.schedule @s "gpipe" for @train_step microbatches 1 stage_rank [0, 1] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.send activation stage 0 mb 0 to 1
    pp.recv gradient stage 0 mb 0 from 1
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
  pp.rank 1 {
    pp.recv activation stage 1 mb 0 from 0
    pp.compute forward stage 1 mb 0
    pp.compute backward_input stage 1 mb 0
    pp.send gradient stage 1 mb 0 to 0
    pp.compute backward_weight stage 1 mb 0
    pp.all_reduce stage 1
  }
}
