// RUN: pp-opt %s --pp-vectorize-contractions="vector-bits=0" -verify-diagnostics

// expected-error @below {{pp-vectorize-contractions needs vector-bits >= 8, tile-rows >= 1 and tile-vectors >= 1}}
module {
  func.func @f() {
    return
  }
}
