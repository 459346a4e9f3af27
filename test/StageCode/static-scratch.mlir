// RUN: pp-opt %s --pp-static-scratch | FileCheck %s
// RUN: pp-opt %s --pp-static-scratch=max-stack-bytes=0 | FileCheck %s --check-prefix=NOSTACK
// A negative or huge stack limit and an alignment that is not a power of two
// were taken (the stack one crashes the program; alignment=3 made invalid IR).
// RUN: not pp-opt %s --pp-static-scratch=max-stack-bytes=-1 2>&1 | FileCheck %s --check-prefix=STACKNEG
// RUN: not pp-opt %s --pp-static-scratch=max-stack-bytes=9223372036854775807 2>&1 | FileCheck %s --check-prefix=STACKHUGE
// RUN: not pp-opt %s --pp-static-scratch=alignment=0 2>&1 | FileCheck %s --check-prefix=ALIGN0
// RUN: not pp-opt %s --pp-static-scratch=alignment=3 2>&1 | FileCheck %s --check-prefix=ALIGN3
// STACKNEG: error: pp-static-scratch: max-stack-bytes must be between 0 and 1048576, got -1
// STACKHUGE: error: pp-static-scratch: max-stack-bytes must be between 0 and 1048576, got 9223372036854775807
// ALIGN0: error: pp-static-scratch: alignment must be a power of two between 1 and 4096, got 0
// ALIGN3: error: pp-static-scratch: alignment must be a power of two between 1 and 4096, got 3

// A large temporary becomes a private global of its own, a small one a
// stack buffer; their deallocations go.
// CHECK: memref.global "private" @__pp_scratch_stage : memref<64x64xf32> = uninitialized {alignment = 64 : i64}
// CHECK-LABEL: func.func @stage
// CHECK: %[[BIG:.*]] = memref.get_global @__pp_scratch_stage : memref<64x64xf32>
// CHECK: %[[SMALL:.*]] = memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[BIG]] : memref<64x64xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SMALL]] : memref<16xf32>)
// CHECK-NOT: memref.dealloc
// CHECK-NOT: memref.alloc(
// NOSTACK-DAG: memref.global "private" @__pp_scratch_stage : memref<64x64xf32>
// NOSTACK-DAG: memref.global "private" @__pp_scratch_stage_0 : memref<16xf32>
// NOSTACK-LABEL: func.func @stage
// NOSTACK: memref.get_global @__pp_scratch_stage : memref<64x64xf32>
// NOSTACK: memref.get_global @__pp_scratch_stage_0 : memref<16xf32>
// NOSTACK-NOT: memref.alloca
func.func @stage(%out: memref<f32>) {
  %c = arith.constant 0.0 : f32
  %big = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
  %small = memref.alloc() : memref<16xf32>
  linalg.fill ins(%c : f32) outs(%big : memref<64x64xf32>)
  linalg.fill ins(%c : f32) outs(%small : memref<16xf32>)
  memref.dealloc %big : memref<64x64xf32>
  memref.dealloc %small : memref<16xf32>
  return
}

// Buffers a function returns, dynamic shapes and allocations in loops,
// which can be alive more than once at a time, stay on the heap.
// CHECK-LABEL: func.func @returns
// CHECK: memref.alloc() : memref<64x64xf32>
func.func @returns() -> memref<64x64xf32> {
  %a = memref.alloc() : memref<64x64xf32>
  return %a : memref<64x64xf32>
}

// CHECK-LABEL: func.func @dynamic
// CHECK: memref.alloc(%arg0) : memref<?xf32>
// CHECK: scf.for
// CHECK: memref.alloc() : memref<64x64xf32>
func.func @dynamic(%n: index) {
  %a = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %t = memref.alloc() : memref<64x64xf32>
    memref.dealloc %t : memref<64x64xf32>
  }
  return
}

// Temporaries of one type share a global once the earlier one's last use
// (through a view, or inside a loop) is behind. %a (read through a view in
// the loop) and %b overlap; %c comes after both and takes the most recently
// freed buffer, %b's; %d overlaps %c and takes %a's; %e has a type of its
// own.
// CHECK-DAG: memref.global "private" @__pp_scratch_reuse : memref<32x64xf32>
// CHECK-DAG: memref.global "private" @__pp_scratch_reuse_0 : memref<32x64xf32>
// CHECK-DAG: memref.global "private" @__pp_scratch_reuse_1 : memref<64x32xf32>
// CHECK-NOT: @__pp_scratch_reuse_2
// CHECK-LABEL: func.func @reuse
// CHECK: %[[A:.*]] = memref.get_global @__pp_scratch_reuse : memref<32x64xf32>
// CHECK: %[[B:.*]] = memref.get_global @__pp_scratch_reuse_0 : memref<32x64xf32>
// CHECK: scf.for
// CHECK: memref.copy %[[B]], %arg0
// CHECK: %[[C:.*]] = memref.get_global @__pp_scratch_reuse_0 : memref<32x64xf32>
// CHECK: %[[D:.*]] = memref.get_global @__pp_scratch_reuse : memref<32x64xf32>
// CHECK: linalg.add ins(%[[C]], %[[D]] : {{.*}}) outs(%arg0 : memref<32x64xf32>)
// CHECK: %[[E:.*]] = memref.get_global @__pp_scratch_reuse_1 : memref<64x32xf32>
func.func @reuse(%out: memref<32x64xf32>, %row: memref<64xf32>, %n: index) {
  %c0 = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %a = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%c0 : f32) outs(%a : memref<32x64xf32>)
  %view = memref.subview %a[0, 0] [1, 64] [1, 1] : memref<32x64xf32> to memref<64xf32, strided<[1]>>
  %b = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%c0 : f32) outs(%b : memref<32x64xf32>)
  scf.for %i = %i0 to %n step %i1 {
    memref.copy %view, %row : memref<64xf32, strided<[1]>> to memref<64xf32>
  }
  memref.copy %b, %out : memref<32x64xf32> to memref<32x64xf32>
  %c = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%c0 : f32) outs(%c : memref<32x64xf32>)
  %d = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%c0 : f32) outs(%d : memref<32x64xf32>)
  linalg.add ins(%c, %d : memref<32x64xf32>, memref<32x64xf32>) outs(%out : memref<32x64xf32>)
  %e = memref.alloc() : memref<64x32xf32>
  linalg.fill ins(%c0 : f32) outs(%e : memref<64x32xf32>)
  return
}

// A buffer passed to a call may be kept by the callee: it keeps its global.
// CHECK-LABEL: func.func @escapes
// CHECK: memref.get_global @__pp_scratch_escapes : memref<32x64xf32>
// CHECK: memref.get_global @__pp_scratch_escapes_{{[0-9]+}} : memref<32x64xf32>
func.func private @keep(memref<32x64xf32>)
func.func @escapes() {
  %a = memref.alloc() : memref<32x64xf32>
  func.call @keep(%a) : (memref<32x64xf32>) -> ()
  %b = memref.alloc() : memref<32x64xf32>
  func.call @keep(%b) : (memref<32x64xf32>) -> ()
  return
}
