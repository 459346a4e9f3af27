// RUN: pp-opt %s --convert-pp-to-runtime | FileCheck %s

// A stage function takes one table of its buffers: each op of its body that
// uses an argument reads the argument's entry right before it (once per op,
// also for uses in its regions), so no pointer lives from the lookups to a
// call with one argument per buffer.

func.func @m_s0_forward(%x: memref<4xf32> {pp.slot = #pp.slot<data 0>},
                        %loss: memref<f32> {pp.slot = #pp.slot<loss>})
    attributes {pp.phase = #pp<phase forward>, pp.stage = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %first = memref.load %x[%c0] : memref<4xf32>
  memref.store %first, %loss[] : memref<f32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %x[%i] : memref<4xf32>
  }
  return
}

// CHECK-LABEL: func.func @m_s0_forward(
// CHECK-SAME: %[[TABLE:.*]]: !llvm.ptr) attributes
// CHECK: %[[E0:.*]] = llvm.getelementptr %[[TABLE]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: %[[P0:.*]] = llvm.load %[[E0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[X0:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<4xf32>
// CHECK-NEXT: %[[FIRST:.*]] = memref.load %[[X0]]
// CHECK: %[[E1:.*]] = llvm.getelementptr %[[TABLE]][1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK-NEXT: llvm.load %[[E1]]
// CHECK: %[[LOSS:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<f32>
// CHECK-NEXT: memref.store %[[FIRST]], %[[LOSS]][]
// One read for the loop's two uses, before the loop.
// CHECK: llvm.getelementptr %[[TABLE]][0]
// CHECK: %[[X1:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4xf32>
// CHECK-NEXT: scf.for
// CHECK-NOT: llvm.getelementptr
// CHECK: memref.load %[[X1]]
// CHECK-NEXT: memref.store %{{.*}}, %[[X1]]
// CHECK: return

// A stage function another function calls keeps its arguments: its action
// function passes memrefs.

func.func @m_s0_backward(%seed: memref<f32> {pp.slot = #pp.slot<loss_grad>})
    attributes {pp.phase = #pp<phase backward>, pp.stage = 0 : i64} {
  return
}
func.func @caller(%seed: memref<f32>) {
  call @m_s0_backward(%seed) : (memref<f32>) -> ()
  return
}

// CHECK-LABEL: func.func @m_s0_backward(
// CHECK-SAME: %{{.*}}: memref<f32> {pp.slot = #pp.slot<loss_grad>})
// CHECK-LABEL: func.func private @m_s0_backward_action(
// CHECK-SAME: %[[CTX:.*]]: !llvm.ptr, %[[MB:.*]]: i32)
// CHECK: %[[DATA:.*]] = call @pprt_buffer(%[[CTX]], %{{.*}}, %[[MB]])
// CHECK: %[[SEED:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<f32>
// CHECK-NEXT: call @m_s0_backward(%[[SEED]]) : (memref<f32>) -> ()

pp.schedule @m_schedule "gpipe" for @m microbatches 1 stage_rank [0] {
  pp.rank 0 {
    pp.compute forward stage 0 mb 0
    pp.compute backward stage 0 mb 0
    pp.optimizer_step stage 0
  }
}
