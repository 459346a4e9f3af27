// REQUIRES: mlir-runner
// RUN: pp-opt %s --pp-vectorize-elementwise \
// RUN:   | mlir-opt --lower-affine --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s

// An op that reads one input transposed, one broadcast along a row and one
// as it is, in 16 x 16 tiles transposed by shuffles, against scalar loops:
// how many of the 48 x 32 results differ, and one result checked by hand.
// CHECK: 0
// CHECK-NEXT: 194

#in = affine_map<(i, j) -> (j, i)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

func.func @transposing(%x: memref<32x48xf32>, %s: memref<48xf32>, %z: memref<48x32xf32>, %y: memref<48x32xf32>) {
  linalg.generic {indexing_maps = [#in, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %z : memref<32x48xf32>, memref<48xf32>, memref<48x32xf32>) outs(%y : memref<48x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %m, %c : f32
    linalg.yield %r : f32
  }
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c48 = arith.constant 48 : index
  %x = memref.alloc() : memref<32x48xf32>
  %s = memref.alloc() : memref<48xf32>
  %z = memref.alloc() : memref<48x32xf32>
  %y = memref.alloc() : memref<48x32xf32>
  scf.for %j = %c0 to %c32 step %c1 {
    scf.for %i = %c0 to %c48 step %c1 {
      %j48 = arith.muli %j, %c48 : index
      %k = arith.addi %j48, %i : index
      %ki = arith.index_cast %k : index to i32
      %kf = arith.sitofp %ki : i32 to f32
      memref.store %kf, %x[%j, %i] : memref<32x48xf32>
      %neg = arith.negf %kf : f32
      memref.store %neg, %z[%i, %j] : memref<48x32xf32>
    }
  }
  scf.for %i = %c0 to %c48 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %if = arith.sitofp %ii : i32 to f32
    %two = arith.constant 2.0 : f32
    %v = arith.addf %if, %two : f32
    memref.store %v, %s[%i] : memref<48xf32>
  }
  call @transposing(%x, %s, %z, %y) : (memref<32x48xf32>, memref<48xf32>, memref<48x32xf32>, memref<48x32xf32>) -> ()
  %zero = arith.constant 0 : i64
  %bad = scf.for %i = %c0 to %c48 step %c1 iter_args(%n = %zero) -> (i64) {
    %m = scf.for %j = %c0 to %c32 step %c1 iter_args(%nj = %n) -> (i64) {
      %a = memref.load %x[%j, %i] : memref<32x48xf32>
      %b = memref.load %s[%i] : memref<48xf32>
      %c = memref.load %z[%i, %j] : memref<48x32xf32>
      %p = arith.mulf %a, %b : f32
      %want = arith.addf %p, %c : f32
      %got = memref.load %y[%i, %j] : memref<48x32xf32>
      %ne = arith.cmpf une, %want, %got : f32
      %one = arith.extui %ne : i1 to i64
      %next = arith.addi %nj, %one : i64
      scf.yield %next : i64
    }
    scf.yield %m : i64
  }
  vector.print %bad : i64
  // y[1][2] = x[2][1] * s[1] + z[1][2] = 97 * 3 - 97 = 194.
  %c2 = arith.constant 2 : index
  %y12 = memref.load %y[%c1, %c2] : memref<48x32xf32>
  %y12i = arith.fptosi %y12 : f32 to i64
  vector.print %y12i : i64
  memref.dealloc %x : memref<32x48xf32>
  memref.dealloc %s : memref<48xf32>
  memref.dealloc %z : memref<48x32xf32>
  memref.dealloc %y : memref<48x32xf32>
  return
}
