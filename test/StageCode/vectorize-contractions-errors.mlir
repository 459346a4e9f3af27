// RUN: pp-opt %s --pp-vectorize-contractions="vector-bits=0" -verify-diagnostics
// RUN: not pp-opt %s --pp-vectorize-contractions="tile-rows=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: pp-vectorize-contractions needs vector-bits between 8 and 4096, tile-rows and tile-vectors between 1 and 64 and wide-tile-vectors between 0 and 64, got 512, 9223372036854775807, 2 and 0

// expected-error @below {{pp-vectorize-contractions needs vector-bits between 8 and 4096, tile-rows and tile-vectors between 1 and 64 and wide-tile-vectors between 0 and 64, got 0, 4, 2 and 0}}
module {
  func.func @f() {
    return
  }
}
