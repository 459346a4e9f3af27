// RUN: pp-opt %s --pp-drop-unused-stage-functions | FileCheck %s

// The called stage function and functions without pp.stage stay; the stage
// function nothing references goes.
// CHECK-LABEL: func.func @f_s0_backward(
// CHECK-NOT: @f_s0_backward_weight
// CHECK-LABEL: func.func @helper(
// CHECK-LABEL: func.func @pp_run_step_rank0(
// CHECK: call @f_s0_backward
func.func @f_s0_backward(%x: memref<4xf32>) attributes {pp.stage = 0 : i64} {
  return
}
func.func @f_s0_backward_weight(%x: memref<4xf32>) attributes {pp.stage = 0 : i64} {
  return
}
func.func @helper() {
  return
}
func.func @pp_run_step_rank0(%x: memref<4xf32>) {
  call @f_s0_backward(%x) : (memref<4xf32>) -> ()
  return
}
