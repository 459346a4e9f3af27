//===- ActionTable.h - schedule actions by (kind, stage, mb) ----*- C++ -*-===//
//
// Finds the first action of a schedule that computes or moves a given
// (phase or transfer kind, stage, micro-batch), for pp-verify-schedule and
// the simulator. A complete schedule has an action for nearly every key, so
// the table is a flat array: lookups touch one word, and the checks stay
// linear in the schedule's size instead of slowing down as a hash map
// outgrows the caches. A malformed schedule may claim far more micro-batches
// than it has actions; its keys go to a hash map instead.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_ACTIONTABLE_H
#define PP_SCHEDULING_ACTIONTABLE_H

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace mlir::pp::sched {

/// (phase or transfer kind, stage, micro-batch).
using ActionKey = std::tuple<int32_t, int64_t, int64_t>;

/// The first value recorded for each ActionKey, `empty` for the others.
template <typename T> class ActionTable {
public:
  /// Keys have kinds in [0, numKinds); `numActions` is about how many
  /// values will be recorded.
  ActionTable(int64_t numKinds, int64_t numStages, int64_t numMicrobatches,
              size_t numActions, T empty = T())
      : numKinds(numKinds), numStages(numStages),
        numMicrobatches(numMicrobatches), empty(empty) {
    // Dense unless the key space is much larger than the schedule (computed
    // in double: a malformed micro-batch count may overflow int64_t).
    double keys = static_cast<double>(numKinds) * numStages * numMicrobatches;
    if (keys <= 4.0 * numActions + 4096.0)
      dense.assign(static_cast<size_t>(keys), empty);
    else
      isDense = false;
  }

  /// The first value recorded for `key`, or `empty`.
  T lookup(const ActionKey &key) const {
    if (!isDense)
      return sparse.lookup_or(key, empty);
    std::optional<size_t> slot = getSlot(key);
    return slot ? dense[*slot] : empty;
  }

  bool contains(const ActionKey &key) const { return lookup(key) != empty; }

  /// Records `value` for `key` unless a value came first; returns the first.
  /// Keys outside the schedule's kinds, stages and micro-batches are ignored
  /// (the verifier reports such actions before it looks them up).
  T insertFirst(const ActionKey &key, T value) {
    if (!isDense)
      return sparse.try_emplace(key, value).first->second;
    std::optional<size_t> slot = getSlot(key);
    if (!slot)
      return value;
    if (dense[*slot] == empty)
      dense[*slot] = value;
    return dense[*slot];
  }

private:
  std::optional<size_t> getSlot(const ActionKey &key) const {
    auto [kind, stage, mb] = key;
    if (kind < 0 || kind >= numKinds || stage < 0 || stage >= numStages ||
        mb < 0 || mb >= numMicrobatches)
      return std::nullopt;
    return (static_cast<size_t>(kind) * numStages + stage) * numMicrobatches +
           mb;
  }

  int64_t numKinds, numStages, numMicrobatches;
  T empty;
  bool isDense = true;
  std::vector<T> dense;
  llvm::DenseMap<ActionKey, T> sparse;
};

} // namespace mlir::pp::sched

#endif // PP_SCHEDULING_ACTIONTABLE_H
