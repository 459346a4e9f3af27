// REQUIRES: mlir-runner
// RUN: pp-opt %s --pp-approximate-math=ops=erf \
// RUN:   | mlir-opt --convert-scf-to-cf --convert-to-llvm \
// RUN:       --reconcile-unrealized-casts \
// RUN:   | %mlir_runner -e main -entry-point-result=void \
// RUN:       -shared-libs=%mlir_lib_dir/libmlir_c_runner_utils.so \
// RUN:   | FileCheck %s

// The rational erf against libm's erf (in f64) on [-6, 6] in steps of
// 2^-14 (196609 points, the clamp at +-3.8325 included): how many are off
// by more than 3.7e-7, and erf at the infinities and at NaN.
// CHECK: 0
// CHECK-NEXT: 1
// CHECK-NEXT: -1
// CHECK-NEXT: nan

func.func private @erf(f64) -> f64

func.func @approx(%x: f32) -> f32 attributes {llvm.emit_c_interface} {
  %y = math.erf %x : f32
  return %y : f32
}

func.func @main() {
  %lo = arith.constant -98304 : i32
  %hi = arith.constant 98305 : i32
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %step = arith.constant 6.103515625e-05 : f32
  %tolerance = arith.constant 3.7e-07 : f64
  %off = scf.for %i = %lo to %hi step %one iter_args(%n = %zero) -> i32 : i32 {
    %fi = arith.sitofp %i : i32 to f32
    %x = arith.mulf %fi, %step : f32
    %y = func.call @approx(%x) : (f32) -> f32
    %yd = arith.extf %y : f32 to f64
    %xd = arith.extf %x : f32 to f64
    %ref = func.call @erf(%xd) : (f64) -> f64
    %d = arith.subf %yd, %ref : f64
    %e = math.absf %d : f64
    %bad = arith.cmpf ugt, %e, %tolerance : f64
    %b = arith.extui %bad : i1 to i32
    %m = arith.addi %n, %b : i32
    scf.yield %m : i32
  }
  vector.print %off : i32
  %inf = arith.constant 0x7F800000 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %a = func.call @approx(%inf) : (f32) -> f32
  %b = func.call @approx(%ninf) : (f32) -> f32
  %c = func.call @approx(%nan) : (f32) -> f32
  vector.print %a : f32
  vector.print %b : f32
  vector.print %c : f32
  return
}
