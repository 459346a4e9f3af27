//===- TestPasses.h - passes that exercise pp's utilities -------*- C++ -*-===//
//
// Test-only passes, registered in pp-opt with a pp-test- prefix, as
// mlir-opt registers upstream's -test- passes.
//
//===----------------------------------------------------------------------===//

#ifndef PP_TEST_LIB_TESTPASSES_H
#define PP_TEST_LIB_TESTPASSES_H

namespace mlir::pp {

void registerTestBoundedRewritePass();

/// Registers every test pass.
inline void registerTestPasses() { registerTestBoundedRewritePass(); }

} // namespace mlir::pp

#endif // PP_TEST_LIB_TESTPASSES_H
