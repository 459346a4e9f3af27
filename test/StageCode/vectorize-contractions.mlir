// RUN: pp-opt %s -split-input-file --pp-vectorize-contractions | FileCheck %s
// RUN: pp-opt %s -split-input-file --pp-vectorize-contractions="vector-bits=256" | FileCheck %s --check-prefix=AVX2
// RUN: pp-opt %s -split-input-file --pp-vectorize-contractions="wide-tile-vectors=4" | FileCheck %s --check-prefix=WIDE
// RUN: pp-opt %s -split-input-file --pp-vectorize-contractions="wide-tile-vectors=4 vector-bits=256" | FileCheck %s --check-prefix=AVX2

// A matmul becomes 4 x 32 register tiles (2 AVX-512 vectors a row): the
// accumulators are read before the reduction loop, carried through it and
// written after it, and the body is one broadcast FMA per row.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT:     linalg.matmul
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c32
// CHECK:             vector.load %{{.*}}[%[[I]], %[[J]]] : memref<64x64xf32>, vector<32xf32>
// CHECK:             %[[ACC:.*]] = scf.for %{{.*}} iter_args(%{{.*}}) -> (vector<4x32xf32>)
// CHECK-COUNT-4:       vector.fma %{{.*}} : vector<32xf32>
// CHECK:               scf.yield
// CHECK-COUNT-4:     vector.store %{{.*}} : memref<64x64xf32>, vector<32xf32>
// With wide-tile-vectors=4, rows that hold 4 AVX-512 vectors take 4 x 64
// tiles (16 accumulators); AVX2's 16 registers keep 4 x 2 vectors either way.
// WIDE-LABEL: func.func @matmul
// WIDE:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4
// WIDE-NOT:       scf.for
// WIDE:           vector.load %{{.*}}[%[[I]], %c0] : memref<64x64xf32>, vector<64xf32>
// WIDE:           scf.for %{{.*}} iter_args(%{{.*}}) -> (vector<4x64xf32>)
// WIDE-COUNT-4:     vector.fma %{{.*}} : vector<64xf32>
// WIDE:             scf.yield
// WIDE-COUNT-4:   vector.store %{{.*}} : memref<64x64xf32>, vector<64xf32>
// AVX2-LABEL: func.func @matmul
// AVX2:         scf.for %{{.*}} step %c4
// AVX2:           scf.for %{{.*}} step %c16
// AVX2-COUNT-4:     vector.fma %{{.*}} : vector<16xf32>
func.func @matmul(%a: memref<64x32xf32>, %b: memref<32x64xf32>,
                  %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>)
                outs(%c : memref<64x64xf32>)
  return
}

// -----

// pp's derived form: two m dimensions (b, t), the reduction first in loop
// order and an input the body never reads. The loops are put in output
// order with the reduction last (b by 1, t by 4 rows, n by 32) and the
// unused input is dropped.
// CHECK-LABEL: func.func @derived
// CHECK-NOT:     linalg.generic
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c1
// CHECK:           scf.for %{{.*}} = %c0 to %c16 step %c4
// CHECK:             scf.for %{{.*}} = %c0 to %c128 step %c1 iter_args(%{{.*}}) -> (vector<4x32xf32>)
// CHECK-COUNT-4:       vector.fma %{{.*}} : vector<32xf32>
// CHECK-NOT:     %arg2
func.func @derived(%x: memref<16x16x128xf32>, %w: memref<128x32xf32>,
                   %unused: memref<16x16x32xf32>, %y: memref<16x16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k, b, t, n) -> (b, t, k)>,
                                   affine_map<(k, b, t, n) -> (k, n)>,
                                   affine_map<(k, b, t, n) -> (b, t, n)>,
                                   affine_map<(k, b, t, n) -> (b, t, n)>],
                  iterator_types = ["reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %w, %unused : memref<16x16x128xf32>, memref<128x32xf32>, memref<16x16x32xf32>)
      outs(%y : memref<16x16x32xf32>) {
  ^bb0(%in: f32, %in_w: f32, %in_u: f32, %out: f32):
    %0 = arith.mulf %in, %in_w : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// dY W^T: W would be read with a stride along the vectorized loop, so it
// is transposed once, in 16 x 16 vector tiles, into a buffer of the
// function (pp-static-scratch later places it) that the FMAs then read
// contiguously.
// CHECK-LABEL: func.func @transposed_rhs
// CHECK:         %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128x32xf32>
// CHECK:         vector.shuffle
// CHECK:         vector.store %{{.*}}, %[[T]]
// CHECK:         scf.for
// CHECK:           vector.load %[[T]]{{.*}} : memref<128x32xf32>, vector<32xf32>
// CHECK:           vector.fma
// CHECK:         memref.dealloc %[[T]] : memref<128x32xf32>
// CHECK-NEXT:    return
func.func @transposed_rhs(%dy: memref<256x128xf32>, %w: memref<32x128xf32>,
                          %dx: memref<256x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<256x128xf32>, memref<32x128xf32>)
      outs(%dx : memref<256x32xf32>) {
  ^bb0(%in: f32, %in_w: f32, %out: f32):
    %0 = arith.mulf %in, %in_w : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A batch matmul keeps its batch loop with tiles of 1; a 28-wide output
// (not a whole number of vectors) takes 4-lane vectors.
// CHECK-LABEL: func.func @batch_and_narrow
// CHECK:         scf.for %{{.*}} = %c0 to %c32 step %c1
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}}) -> (vector<8x16xf32>)
// CHECK:             vector.fma %{{.*}} : vector<16xf32>
// CHECK:         vector.fma %{{.*}} : vector<4xf32>
// CHECK-NOT:     vector<28xf32>
func.func @batch_and_narrow(%q: memref<32x16x16xf32>, %k: memref<32x16x16xf32>,
                            %s: memref<32x16x16xf32>, %x: memref<256x32xf32>,
                            %w: memref<32x28xf32>, %y: memref<256x28xf32>) {
  linalg.batch_matmul ins(%q, %k : memref<32x16x16xf32>, memref<32x16x16xf32>)
                      outs(%s : memref<32x16x16xf32>)
  linalg.matmul ins(%x, %w : memref<256x32xf32>, memref<32x28xf32>)
                outs(%y : memref<256x28xf32>)
  return
}

// -----

// Left alone: a contraction left to the GEMM library, one on tensors, an
// elementwise op and a reduction that is no contraction.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     vector.
// CHECK:         linalg.matmul {pp.gemm = "library"}
// CHECK:         linalg.matmul ins(%{{.*}} : tensor<64x32xf32>, tensor<32x64xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "reduction"]
func.func @untouched(%a: memref<64x32xf32>, %b: memref<32x64xf32>,
                     %c: memref<64x64xf32>, %ta: tensor<64x32xf32>,
                     %tb: tensor<32x64xf32>, %tc: tensor<64x64xf32>,
                     %sum: memref<64xf32>) -> tensor<64x64xf32> {
  linalg.matmul {pp.gemm = "library"}
      ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>)
      outs(%c : memref<64x64xf32>)
  %r = linalg.matmul ins(%ta, %tb : tensor<64x32xf32>, tensor<32x64xf32>)
                     outs(%tc : tensor<64x64xf32>) -> tensor<64x64xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%c : memref<64x64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return %r : tensor<64x64xf32>
}

// -----

// Unit dimensions (a micro-batch of one row, the weight gradient of one
// row with a unit reduction) are vectorized too: the unit-dimension
// patterns and the subview folding run apart, so they cannot undo one
// another (together they never terminated). A one-column output would take
// one-lane vectors, scalar code: it stays a linalg op (for the library
// under gemm=auto).
// CHECK-LABEL: func.func @single_row
// CHECK-NOT:     linalg.matmul
// CHECK:         %[[ACC:.*]] = vector.load %{{.*}} : memref<1x32xf32>, vector<32xf32>
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args(%{{.*}} = %[[ACC]]) -> (vector<32xf32>)
// CHECK:           vector.fma %{{.*}} : vector<32xf32>
// CHECK:         vector.store %{{.*}} : memref<1x32xf32>, vector<32xf32>
// CHECK-LABEL: func.func @single_column
// CHECK-NOT:     vector.fma
// CHECK:         linalg.matmul
// CHECK-LABEL: func.func @unit_reduction
// CHECK-NOT:     linalg.matmul
// CHECK:         scf.for %{{.*}} = %c0 to %c16 step %c4
// CHECK-COUNT-4:   vector.fma %{{.*}} : vector<32xf32>
func.func @single_row(%a: memref<1x16xf32>, %b: memref<16x32xf32>, %c: memref<1x32xf32>) {
  linalg.matmul ins(%a, %b : memref<1x16xf32>, memref<16x32xf32>) outs(%c : memref<1x32xf32>)
  return
}
func.func @single_column(%a: memref<32x16xf32>, %b: memref<16x1xf32>, %c: memref<32x1xf32>) {
  linalg.matmul ins(%a, %b : memref<32x16xf32>, memref<16x1xf32>) outs(%c : memref<32x1xf32>)
  return
}
func.func @unit_reduction(%a: memref<16x1xf32>, %b: memref<1x32xf32>, %c: memref<16x32xf32>) {
  linalg.matmul ins(%a, %b : memref<16x1xf32>, memref<1x32xf32>) outs(%c : memref<16x32xf32>)
  return
}

// -----

// A dot product (scalar output) has no loop to vectorize along, and a
// contraction whose unused input alone spans a loop would lose that loop's
// range: both stay linalg ops.
// CHECK-LABEL: func.func @not_tiled
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
func.func @not_tiled(%a: memref<64xf32>, %b: memref<64xf32>, %c: memref<f32>,
                     %x: memref<16x32xf32>, %w: memref<32x16xf32>,
                     %z: memref<16x16x4xf32>, %y: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k) -> (k)>, affine_map<(k) -> (k)>, affine_map<(k) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%a, %b : memref<64xf32>, memref<64xf32>) outs(%c : memref<f32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (i, k)>, affine_map<(i, j, k, l) -> (k, j)>,
                                   affine_map<(i, j, k, l) -> (i, j, l)>, affine_map<(i, j, k, l) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w, %z : memref<16x32xf32>, memref<32x16xf32>, memref<16x16x4xf32>) outs(%y : memref<16x16xf32>) {
  ^bb0(%p: f32, %q: f32, %unused: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The left operand is a reshaped view of a flat buffer (what
// nn.MultiheadAttention's head merge leaves before its output projection).
// Its tiles are 6x1 transfer_reads through a memref.expand_shape of a
// rank-1 buffer, which the alias folding cannot fold: the unit-dimension
// patterns converge and leave the view in place, and the contraction is
// vectorized as it is on the buffer itself.
// CHECK-LABEL: func.func @reshaped_lhs
// CHECK:         %[[VIEW:.*]] = memref.expand_shape
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c6
// CHECK:           scf.for %[[K:.*]] = %{{.*}} iter_args(%{{.*}}) -> (vector<6x16xf32>)
// CHECK:             vector.load %[[VIEW]][%[[I]], %[[K]]] : memref<12x16xf32>, vector<1xf32>
// CHECK-COUNT-6:     vector.fma %{{.*}} : vector<16xf32>
// CHECK:             scf.yield
// CHECK-COUNT-6:   vector.store %{{.*}} : memref<12x16xf32>, vector<16xf32>
func.func @reshaped_lhs(%x: memref<6x4x8xf32>, %b: memref<16x16xf32>,
                        %c: memref<12x16xf32>) {
  %flat = memref.collapse_shape %x [[0, 1, 2]]
      : memref<6x4x8xf32> into memref<192xf32>
  %a = memref.expand_shape %flat [[0, 1]] output_shape [12, 16]
      : memref<192xf32> into memref<12x16xf32>
  linalg.matmul ins(%a, %b : memref<12x16xf32>, memref<16x16xf32>)
                outs(%c : memref<12x16xf32>)
  return
}

// -----

// A Gram matrix of a view, t @ t^T with t = [b, n, k] expanded from
// [b, n*k] (torch.stack then bmm with its own transpose): the packed
// right operand is read 2 x 1 along (n, k). Folding the view into that read
// would step along b; the read stays on the view, one load per n.
// CHECK-LABEL: func.func @gram_of_view
// CHECK:         %[[VIEW:.*]] = memref.expand_shape
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK:             vector.load %[[VIEW]][%[[B]], %c0, %[[K]]] : memref<2x2x3xf32>, vector<1xf32>
// CHECK:             vector.load %[[VIEW]][%[[B]], %c1, %[[K]]] : memref<2x2x3xf32>, vector<1xf32>
func.func @gram_of_view(%flat: memref<2x6xf32>, %gram: memref<2x2x2xf32>) {
  %t = memref.expand_shape %flat [[0], [1, 2]] output_shape [2, 2, 3]
      : memref<2x6xf32> into memref<2x2x3xf32>
  linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                       affine_map<(b, m, n, k) -> (b, n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%t, %t : memref<2x2x3xf32>, memref<2x2x3xf32>)
      outs(%gram : memref<2x2x2xf32>)
  return
}

// -----

// A reduction of a masked value (the sum after `triu`: a select of the
// mask, added into the init) has the shape of a contraction, but LLVM packs
// a vector of i1 into bits where the mask's buffer holds a byte per
// element: it is no tileable contraction and stays a scalar loop nest.
// CHECK-LABEL: func.func @masked_sum
// CHECK-NOT:     vector
// CHECK:         linalg.generic
// CHECK-NOT:     vector
// CHECK:         return
func.func @masked_sum(%mask: memref<16x16xi1>, %x: memref<16x16x16xf32>,
                      %out: memref<16x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {
      indexing_maps = [affine_map<(b, i, j) -> (i, j)>,
                       affine_map<(b, i, j) -> (b, i, j)>,
                       affine_map<(b, i, j) -> (b, i)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%mask, %x : memref<16x16xi1>, memref<16x16x16xf32>)
      outs(%out : memref<16x16xf32>) {
  ^bb0(%m: i1, %v: f32, %o: f32):
    %s = arith.select %m, %v, %zero : f32
    %a = arith.addf %s, %o : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Sums of elementwise products reuse no input along an output dimension (no
// m or n dimension): a layer norm's weight gradient (columns of dy * x summed
// over the rows) and the count of a row's ties with its max. Register tiles
// would save no loads, and packing the rows for them is a transposing pass
// over memory: they are no tileable contractions and are left to
// pp-vectorize-elementwise.
// CHECK-LABEL: func.func @product_column_sum
// CHECK-NOT:     vector
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @row_ties
// CHECK-NOT:     vector
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic
// CHECK-NOT:     vector
// CHECK:         return
func.func @product_column_sum(%dy: memref<64x256xf32>, %x: memref<64x256xf32>,
                              %dw: memref<256xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(r, c) -> (r, c)>,
                       affine_map<(r, c) -> (r, c)>,
                       affine_map<(r, c) -> (c)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%dy, %x : memref<64x256xf32>, memref<64x256xf32>)
      outs(%dw : memref<256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @row_ties(%x: memref<4x128x128xf32>, %max: memref<4x128xf32>,
                    %count: memref<4x128xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.generic {
      indexing_maps = [affine_map<(b, q, k) -> (b, q, k)>,
                       affine_map<(b, q, k) -> (b, q)>,
                       affine_map<(b, q, k) -> (b, q)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %max : memref<4x128x128xf32>, memref<4x128xf32>)
      outs(%count : memref<4x128xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %tie = arith.cmpf oeq, %v, %m : f32
    %c = arith.select %tie, %one, %zero : f32
    %s = arith.addf %o, %c : f32
    linalg.yield %s : f32
  }
  return
}
