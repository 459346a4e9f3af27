//===- CompileProgress.cpp - Progress of long compiles --------------------===//
//
// Names the phases of a compile that run for long (CompileProgress.h).
//
//===----------------------------------------------------------------------===//

#include "pp/Compiler/CompileProgress.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::pp;

/// How often the watcher looks at the running phases.
static constexpr std::chrono::milliseconds pollInterval{100};

ProgressTimingManager::ProgressTimingManager(double threshold,
                                             llvm::raw_ostream &os)
    : threshold(threshold), os(os) {
  if (threshold > 0)
    watcher = std::thread([this] { watch(); });
}

ProgressTimingManager::~ProgressTimingManager() {
  {
    std::lock_guard<std::mutex> guard(lock);
    stopped = true;
  }
  stopping.notify_all();
  if (watcher.joinable())
    watcher.join();
  // Timed for the progress lines only: no report.
  if (!reportAtEnd) {
    clear();
    setEnabled(false);
  }
}

void ProgressTimingManager::startTiming() {
  reportAtEnd = isEnabled();
  if (threshold >= 0)
    setEnabled(true);
}

double ProgressTimingManager::secondsSince(Clock::time_point t) const {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void ProgressTimingManager::report(Phase &phase, double running) {
  phase.reported = true;
  os << "pp-compile: " << llvm::format("%.1f", secondsSince(begin))
     << " s: " << phase.name << " (running for "
     << llvm::format("%.1f", running) << " s)\n";
  os.flush();
}

void *
ProgressTimingManager::nestTimer(void *handle, const void *id,
                                 function_ref<std::string()> nameBuilder) {
  void *nested = DefaultTimingManager::nestTimer(handle, id, nameBuilder);
  std::lock_guard<std::mutex> guard(lock);
  Phase &phase = phases[nested];
  if (phase.name.empty())
    phase.name = nameBuilder();
  return nested;
}

void ProgressTimingManager::startTimer(void *handle) {
  DefaultTimingManager::startTimer(handle);
  std::lock_guard<std::mutex> guard(lock);
  auto it = phases.find(handle);
  if (it == phases.end() || it->second.running++ > 0)
    return;
  it->second.started = Clock::now();
  it->second.reported = false;
  if (threshold == 0)
    report(it->second, 0.0);
}

void ProgressTimingManager::stopTimer(void *handle) {
  DefaultTimingManager::stopTimer(handle);
  std::lock_guard<std::mutex> guard(lock);
  auto it = phases.find(handle);
  if (it == phases.end() || it->second.running == 0 ||
      --it->second.running > 0 || !it->second.reported)
    return;
  os << "pp-compile: " << llvm::format("%.1f", secondsSince(begin))
     << " s: " << it->second.name << " done after "
     << llvm::format("%.1f", secondsSince(it->second.started)) << " s\n";
  os.flush();
}

void ProgressTimingManager::watch() {
  std::unique_lock<std::mutex> guard(lock);
  while (!stopping.wait_for(guard, pollInterval, [&] { return stopped; }))
    for (auto &entry : phases) {
      Phase &phase = entry.second;
      double running = secondsSince(phase.started);
      if (phase.running > 0 && !phase.reported && running >= threshold)
        report(phase, running);
    }
}
