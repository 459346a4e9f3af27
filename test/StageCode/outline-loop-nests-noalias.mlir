// RUN: pp-opt %s --split-input-file --pp-outline-loop-nests | FileCheck %s

// A nest's buffers are noalias (under the bare-pointer convention, which
// keeps the attribute through convert-func-to-llvm) where no call passes
// one overlapping another that the nest writes: a private global or a fresh
// allocation is distinct from the stage's arguments, and two arguments
// the nest only reads may be the same buffer.
// CHECK-LABEL: func.func @f_s0_forward
// CHECK: call @f_s0_forward_nest0(%{{.*}}, %[[G:.*]]) :
// CHECK: call @f_s0_forward_nest1(%{{.*}}, %{{.*}}, %[[A:.*]]) :
// CHECK: func.func private @f_s0_forward_nest0(%{{.*}}: memref<4x8xf32> {llvm.noalias}, %{{.*}}: memref<4x8xf32> {llvm.noalias}) attributes {llvm.bareptr,
// CHECK: func.func private @f_s0_forward_nest1(%{{.*}}: memref<4x8xf32> {llvm.noalias}, %{{.*}}: memref<4x8xf32> {llvm.noalias}, %{{.*}}: memref<4x8xf32> {llvm.noalias}) attributes {llvm.bareptr,

#id = affine_map<(i, j) -> (i, j)>
memref.global "private" @g : memref<4x8xf32> = uninitialized
func.func @f_s0_forward(%x: memref<4x8xf32>, %y: memref<4x8xf32>)
    attributes {pp.stage = 0 : i64} {
  %g = memref.get_global @g : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%g : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  %t = memref.alloc() : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : memref<4x8xf32>, memref<4x8xf32>)
      outs(%t : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  memref.dealloc %t : memref<4x8xf32>
  return
}

// -----

// One call that writes a buffer another argument may share takes noalias
// away from both, in every call: two stage arguments, two views of one
// global. A dynamic offset leaves the descriptors (and noalias) alone.
// CHECK-LABEL: func.func @f_s0_forward
// CHECK: func.func private @f_s0_forward_nest0(%{{[a-z0-9]+}}: memref<4x8xf32>, %{{[a-z0-9]+}}: memref<4x8xf32>) attributes {llvm.linkage
// CHECK: func.func private @f_s0_forward_nest1(%{{[a-z0-9]+}}: memref<4xf32, strided<[1], offset: 4>>, %{{[a-z0-9]+}}: memref<4xf32, strided<[1]>>) attributes {llvm.linkage
// CHECK: func.func private @f_s0_forward_nest2(%{{[a-z0-9]+}}: memref<4xf32, strided<[1], offset: ?>>, %{{[a-z0-9]+}}: memref<4xf32>) attributes {llvm.linkage
// CHECK-NOT: llvm.noalias

#id = affine_map<(i, j) -> (i, j)>
#id1 = affine_map<(i) -> (i)>
memref.global "private" @g : memref<4x8xf32> = uninitialized
memref.global "private" @h : memref<8xf32> = uninitialized
func.func @f_s0_forward(%x: memref<4x8xf32>, %y: memref<4x8xf32>,
                        %i: index) attributes {pp.stage = 0 : i64} {
  %g = memref.get_global @g : memref<4x8xf32>
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%g : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  %h = memref.get_global @h : memref<8xf32>
  %hi = memref.subview %h[4] [4] [1]
      : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %lo = memref.subview %h[0] [4] [1]
      : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%hi : memref<4xf32, strided<[1], offset: 4>>)
      outs(%lo : memref<4xf32, strided<[1]>>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  %d = memref.subview %h[%i] [4] [1]
      : memref<8xf32> to memref<4xf32, strided<[1], offset: ?>>
  %t = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%d : memref<4xf32, strided<[1], offset: ?>>)
      outs(%t : memref<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  memref.dealloc %t : memref<4xf32>
  return
}

// -----

// Stage arguments in different runtime slots are different buffers; the
// same slot twice may be one.
// CHECK-LABEL: func.func @f_s0_forward
// CHECK: func.func private @f_s0_forward_nest0(%{{.*}}: memref<4x8xf32> {llvm.noalias}, %{{.*}}: memref<4x8xf32> {llvm.noalias}) attributes {llvm.bareptr,
// CHECK: func.func private @f_s0_forward_nest1(%{{[a-z0-9]+}}: memref<4x8xf32>, %{{[a-z0-9]+}}: memref<4x8xf32>) attributes {llvm.linkage

#id = affine_map<(i, j) -> (i, j)>
func.func @f_s0_forward(
    %x: memref<4x8xf32> {pp.slot = #pp.slot<act stage 0 output 0>},
    %y: memref<4x8xf32> {pp.slot = #pp.slot<act stage 0 output 1>},
    %z: memref<4x8xf32> {pp.slot = #pp.slot<act stage 0 output 1>})
    attributes {pp.stage = 0 : i64} {
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<4x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.addf %a, %a : f32
    linalg.yield %n : f32
  }
  return
}
