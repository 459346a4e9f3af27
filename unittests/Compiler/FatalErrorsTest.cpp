//===- FatalErrorsTest.cpp - LLVM's fatal errors as diagnostics -----------===//
//
// An LLVM fatal error or failed allocation inside runRecoverably, on any
// thread, ends that region with an error, and the process goes on; outside
// one it is one line and exit 1, not an abort.
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/FatalErrors.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ErrorHandling.h"

#include "gtest/gtest.h"

#include <string>
#include <thread>
#include <vector>

using namespace mlir;

namespace {

/// The errors emitted in a context.
struct Errors {
  Errors()
      : handler(&context, [this](Diagnostic &diag) {
          messages.push_back(diag.str());
          return success();
        }) {}

  Location loc() { return NameLoc::get(StringAttr::get(&context, "here")); }

  MLIRContext context;
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler;
};

TEST(FatalErrors, FatalErrorEndsTheRegionWithAnError) {
  Errors errors;
  int after = 0;
  LogicalResult result = pp::runRecoverably(errors.loc(), [&] {
    llvm::report_fatal_error("no such subtarget");
    ++after;
    return success();
  });
  EXPECT_TRUE(failed(result));
  EXPECT_EQ(after, 0);
  EXPECT_EQ(errors.messages,
            std::vector<std::string>{"LLVM failed: no such subtarget"});
  // The process goes on, and the next region starts clean.
  EXPECT_TRUE(
      succeeded(pp::runRecoverably(errors.loc(), [] { return success(); })));
  EXPECT_TRUE(
      failed(pp::runRecoverably(errors.loc(), [] { return failure(); })));
  EXPECT_EQ(errors.messages.size(), 1u);
}

TEST(FatalErrors, BadAllocEndsTheRegion) {
  Errors errors;
  LogicalResult result = pp::runRecoverably(errors.loc(), [] {
    llvm::report_bad_alloc_error("Allocation failed");
    return success();
  });
  EXPECT_TRUE(failed(result));
  EXPECT_EQ(errors.messages,
            std::vector<std::string>{"LLVM failed: Allocation failed"});
}

TEST(FatalErrors, EachThreadRecoversOnItsOwn) {
  Errors errors;
  std::vector<LogicalResult> results(4, success());
  std::vector<std::thread> threads;
  for (int index = 0; index < 4; ++index)
    threads.emplace_back([&, index] {
      results[index] = pp::runRecoverably(errors.loc(), [&] {
        if (index % 2)
          llvm::reportFatalUsageError("bad option");
        return success();
      });
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_TRUE(succeeded(results[0]) && succeeded(results[2]));
  EXPECT_TRUE(failed(results[1]) && failed(results[3]));
  EXPECT_EQ(errors.messages.size(), 2u);
}

TEST(FatalErrorsDeathTest, OutsideARegionIsOneLineAndExitOne) {
  pp::installFatalErrorHandlers("pp-test");
  EXPECT_EXIT(llvm::report_fatal_error("no such subtarget"),
              testing::ExitedWithCode(1),
              "^pp(-test)?: error: no such subtarget\n$");
}

} // namespace
