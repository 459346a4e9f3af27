// RUN: pp-opt %s --split-input-file --pp-vectorize-elementwise | FileCheck %s
// RUN: pp-opt %s --split-input-file --pp-vectorize-elementwise="vector-bits=256 max-vectors=1" | FileCheck %s --check-prefix=AVX2
// RUN: pp-opt %s --split-input-file --pp-vectorize-elementwise="reassociate=false" | FileCheck %s --check-prefix=ORDERED

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// An elementwise op with a broadcast operand: one row of 64 lanes per
// iteration (4 x 16 at 512 bits), the broadcast value splat once per row.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.for %[[I:.*]] =
// CHECK-NOT: scf.for
// CHECK-DAG: %[[X:.*]] = vector.load %arg0[%[[I]], %{{.*}}] : memref<8x64xf32>, vector<64xf32>
// CHECK-DAG: %[[S:.*]] = vector.load %arg1[%[[I]]] : memref<8xf32>, vector<f32>
// CHECK: %[[E:.*]] = vector.extract %[[S]][] : f32 from vector<f32>
// CHECK: %[[B:.*]] = vector.broadcast %[[E]] : f32 to vector<64xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[X]], %[[B]] : vector<64xf32>
// CHECK: vector.store %[[M]], %arg2[%[[I]], %{{.*}}] : memref<8x64xf32>, vector<64xf32>
// CHECK-NOT: linalg.
// AVX2-LABEL: func.func @elementwise
// AVX2: scf.for
// AVX2: scf.for
// AVX2: arith.mulf %{{.*}}, %{{.*}} : vector<8xf32>
func.func @elementwise(%x: memref<8x64xf32>, %s: memref<8xf32>, %y: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<8x64xf32>, memref<8xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A row sum (softmax's denominator): the row is read as vectors and
// reduced into the row's scalar accumulator, which stays in a register
// across the tiles of the row.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[A0:.*]] = vector.load %arg1[%[[I]]] : memref<8xf32>, vector<f32>
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[A0]]) -> (vector<f32>)
// CHECK: %[[V:.*]] = vector.load %arg0[%[[I]], %{{.*}}] : memref<8x256xf32>, vector<64xf32>
// CHECK: %[[E:.*]] = math.exp %[[V]] : vector<64xf32>
// CHECK: %[[S:.*]] = vector.extract %[[ACC]][]
// CHECK: vector.reduction <add>, %[[E]], %[[S]] fastmath<reassoc> : vector<64xf32> into f32
// CHECK: vector.store %[[R]], %arg1[%[[I]]] : memref<8xf32>, vector<f32>
// With reassociate=false the lanes are summed in order.
// ORDERED-LABEL: func.func @row_sum
// ORDERED: vector.reduction <add>, %{{.*}}, %{{.*}} : vector<64xf32> into f32
// ORDERED-NOT: fastmath
func.func @row_sum(%x: memref<8x256xf32>, %s: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x256xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %e = math.exp %a : f32
    %r = arith.addf %e, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// A column sum (a bias gradient): the reduction over rows runs innermost
// and the accumulator is a vector register, loaded and stored once.
// CHECK-LABEL: func.func @column_sum
// CHECK: %[[A0:.*]] = vector.load %arg1[%{{.*}}] : memref<32xf32>, vector<32xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[A0]]) -> (vector<32xf32>)
// CHECK: %[[V:.*]] = vector.load %arg0[%[[I]], %{{.*}}] : memref<16x32xf32>, vector<32xf32>
// CHECK: arith.addf %[[ACC]], %[[V]] : vector<32xf32>
// CHECK: vector.store %[[R]], %arg1[%{{.*}}] : memref<32xf32>, vector<32xf32>
func.func @column_sum(%x: memref<16x32xf32>, %b: memref<32xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%b : memref<32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A fill of an extent of 28 (the small GPT's vocabulary): tiles of 4, the
// largest power of two that divides it.
// CHECK-LABEL: func.func @fill
// CHECK: scf.for
// CHECK: vector.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] : memref<4x28xf32>, vector<4xf32>
func.func @fill(%x: memref<4x28xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<4x28xf32>)
  return
}

// -----

#x = affine_map<(i, j, k) -> (i, k)>
#w = affine_map<(i, j, k) -> (k, j)>
#y = affine_map<(i, j, k) -> (i, j)>

// Contractions, ops left to the GEMM library, tensors and odd extents are
// left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: linalg.fill {pp.gemm = "library"}
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @left_alone(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>, %t: tensor<4x16xf32>, %odd: memref<4x7xf32>) -> tensor<4x16xf32> {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill {pp.gemm = "library"} ins(%zero : f32) outs(%c : memref<4x16xf32>)
  %e = tensor.empty() : tensor<4x16xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%odd : memref<4x7xf32>)
  return %n : tensor<4x16xf32>
}

// -----

// Bad options get a diagnostic.
// RUN: not pp-opt %s --split-input-file --pp-vectorize-elementwise="vector-bits=4" 2>&1 | FileCheck %s --check-prefix=ERR
// ERR: pp-vectorize-elementwise needs vector-bits between 8 and 4096 and max-vectors between 1 and 64, got 4 and 4
// RUN: not pp-opt %s --split-input-file --pp-vectorize-elementwise="vector-bits=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=ERRHUGE
// ERRHUGE: pp-vectorize-elementwise needs vector-bits between 8 and 4096 and max-vectors between 1 and 64, got 9223372036854775807 and 4
func.func @empty() {
  return
}

// -----

// The first operand (a keepdim statistic, as torch-mlir's layer norm reads
// it) ends in a unit dimension read at a constant 0: the vector loop is
// the innermost one of an operand that reads a loop there.
// CHECK-LABEL: func.func @keepdim_first
// CHECK: vector.load %arg1[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x16x32xf32>, vector<32xf32>
// CHECK: arith.subf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x16x32xf32>, vector<32xf32>
// CHECK-NOT: linalg.
func.func @keepdim_first(%m: memref<2x16x1xf32>, %x: memref<2x16x32xf32>, %y: memref<2x16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%m, %x : memref<2x16x1xf32>, memref<2x16x32xf32>) outs(%y : memref<2x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %b, %a : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// A mask (memref of i1, a byte per element) stays scalar: LLVM would pack
// a vector<64xi1> store into 8 bytes.
// CHECK-LABEL: func.func @mask
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @mask(%x: memref<8x64xi64>, %m: memref<8x64xi1>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x64xi64>) outs(%m : memref<8x64xi1>) {
  ^bb0(%a: i64, %o: i1):
    %zero = arith.constant 0 : i64
    %ne = arith.cmpi ne, %a, %zero : i64
    linalg.yield %ne : i1
  }
  return
}

// -----

#ids = affine_map<(i, j) -> (i)>
#out = affine_map<(i, j) -> (i, j)>

// A gather (a load of a table at a computed row, as pp-collapse-one-hot
// writes) stays scalar: the vectorizer reads only the op's operands.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: memref.load
// CHECK-NOT: vector.
// CHECK: return
func.func @gather(%ids: memref<8xi64>, %table: memref<10x64xf32>, %out: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel"]}
      ins(%ids : memref<8xi64>) outs(%out : memref<8x64xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %col = linalg.index 1 : index
    %v = memref.load %table[%row, %col] : memref<10x64xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

// A max that also yields its index (torch's `max(dim)`, top-k routing)
// stays scalar: upstream vectorizes no reduction that selects.
// CHECK-LABEL: func.func @max_with_index
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @max_with_index(%x: memref<8x64xf32>, %m: memref<8xf32>, %i: memref<8xi64>) {
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x64xf32>) outs(%m, %i : memref<8xf32>, memref<8xi64>) {
  ^bb0(%a: f32, %o: f32, %oi: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %a, %o : f32
    %gt = arith.cmpf ogt, %a, %o : f32
    %s = arith.select %gt, %ji, %oi : i64
    linalg.yield %mx, %s : f32, i64
  }
  return
}

// -----

#in = affine_map<(b, i, j) -> (b, j, i)>
#out = affine_map<(b, i, j) -> (b, i, j)>

// An op that reads its input transposed (a gradient summed into zeros
// through a transpose, attention's `dK^T`): square tiles of one vector along
// both loops, 16 rows loaded, transposed by shuffles in registers and 16
// rows stored, where tiles along one loop would store every element alone.
// CHECK-LABEL: func.func @transposing
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK-COUNT-16: vector.load %arg0{{.*}} : memref<2x32x48xf32>, vector<16xf32>
// CHECK: vector.shuffle
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<16x16xf32>
// CHECK-COUNT-16: vector.store %{{.*}}, %arg1{{.*}} : memref<2x48x32xf32>, vector<16xf32>
// CHECK-NOT: memref.store
// CHECK-NOT: vector.extract %{{.*}}[{{[0-9]+}}, {{[0-9]+}}]
// AVX2-LABEL: func.func @transposing
// AVX2-COUNT-8: vector.load %arg0{{.*}} : memref<2x32x48xf32>, vector<8xf32>
// AVX2: vector.shuffle
// AVX2-COUNT-8: vector.store %{{.*}}, %arg1{{.*}} : memref<2x48x32xf32>, vector<8xf32>
func.func @transposing(%x: memref<2x32x48xf32>, %y: memref<2x48x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x32x48xf32>) outs(%y : memref<2x48x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %zero : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// A column sum over rows wider than one tile (a bias gradient) reads its
// rows whole, one after another, adding each strip into the sums' row
// (1 KiB here, in the L1 cache); rows longer than 16 KiB keep a strip's sums
// in registers across the rows.
// CHECK-LABEL: func.func @wide_column_sum
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG: %[[V:.*]] = vector.load %arg0[%[[I]], %[[J]]] : memref<16x256xf32>, vector<64xf32>
// CHECK-DAG: %[[A:.*]] = vector.load %arg1[%[[J]]] : memref<256xf32>, vector<64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[V]] : vector<64xf32>
// CHECK: vector.store %[[S]], %arg1[%[[J]]] : memref<256xf32>, vector<64xf32>
// CHECK-LABEL: func.func @long_column_sum
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[A0:.*]] = vector.load %arg1[%[[J]]] : memref<8192xf32>, vector<64xf32>
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[A0]]) -> (vector<64xf32>)
func.func @wide_column_sum(%x: memref<16x256xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<16x256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}
func.func @long_column_sum(%x: memref<4x8192xf32>, %b: memref<8192xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x8192xf32>) outs(%b : memref<8192xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#id = affine_map<(r, c) -> (r, c)>
#col = affine_map<(r, c) -> (c)>

// A column sum of elementwise products (a layer norm's weight gradient) is
// no tileable contraction (no input is reused along an output dimension):
// it is a column sum here, its rows read whole, one after another, adding
// each strip's products into the sums' row.
// CHECK-LABEL: func.func @product_column_sum
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-DAG: %[[A:.*]] = vector.load %arg0[%[[I]], %[[J]]] : memref<64x256xf32>, vector<64xf32>
// CHECK-DAG: %[[B:.*]] = vector.load %arg1[%[[I]], %[[J]]] : memref<64x256xf32>, vector<64xf32>
// CHECK-DAG: %[[W:.*]] = vector.load %arg2[%[[J]]] : memref<256xf32>, vector<64xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : vector<64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[W]], %[[P]] : vector<64xf32>
// CHECK: vector.store %[[S]], %arg2[%[[J]]] : memref<256xf32>, vector<64xf32>
func.func @product_column_sum(%dy: memref<64x256xf32>, %x: memref<64x256xf32>,
                              %dw: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x : memref<64x256xf32>, memref<64x256xf32>) outs(%dw : memref<256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
