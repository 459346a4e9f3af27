//===- CompileProgress.h - Progress of long compiles ------------*- C++ -*-===//
//
// A timing manager that also says, on stderr, which phase of a compile has
// been running for long: the phases are the compile's timing scopes (parse,
// each pipeline's passes, translation, the LLVM back end, link), so what
// --mlir-timing reports afterwards is what the progress lines name while
// it runs.
//
//===----------------------------------------------------------------------===//

#ifndef PP_COMPILER_COMPILEPROGRESS_H
#define PP_COMPILER_COMPILEPROGRESS_H

#include "mlir/Support/Timing.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace mlir::pp {

/// MLIR's DefaultTimingManager (its report stays --mlir-timing's), timing
/// always, and printing a line to `os` when a phase has run for
/// `threshold` seconds (`pp-compile: 12.3 s: pp-derive-backward (running
/// for 2.0 s)`) and another when such a phase ends (`... done after
/// 9.8 s`). A threshold of 0 names every phase as it starts; a negative
/// one prints nothing.
class ProgressTimingManager : public DefaultTimingManager {
public:
  ProgressTimingManager(double threshold, llvm::raw_ostream &os);
  ~ProgressTimingManager() override;

  /// Call after applyDefaultTimingManagerCLOptions: whether the report was
  /// asked for, so that it is printed only then.
  void startTiming();

protected:
  void startTimer(void *handle) override;
  void stopTimer(void *handle) override;
  void *nestTimer(void *handle, const void *id,
                  function_ref<std::string()> nameBuilder) override;

private:
  using Clock = std::chrono::steady_clock;
  struct Phase {
    std::string name;
    Clock::time_point started;
    unsigned running = 0; ///< starts not yet stopped
    bool reported = false;
  };

  double secondsSince(Clock::time_point t) const;
  void report(Phase &phase, double running);
  void watch();

  double threshold;
  llvm::raw_ostream &os;
  bool reportAtEnd = false;
  Clock::time_point begin = Clock::now();
  std::mutex lock;
  std::condition_variable stopping;
  bool stopped = false;
  llvm::DenseMap<void *, Phase> phases;
  std::thread watcher;
};

} // namespace mlir::pp

#endif // PP_COMPILER_COMPILEPROGRESS_H
