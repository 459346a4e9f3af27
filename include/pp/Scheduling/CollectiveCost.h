//===- CollectiveCost.h - ring all-reduces on a device's links --*- C++ -*-===//
//
// What a collective over the devices of a tensor-parallel group or of the
// data-parallel replicas costs: the closed forms of a ring, on the link
// bandwidth and latency of the cost model's devices (docs/CostModel.md).
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_COLLECTIVECOST_H
#define PP_SCHEDULING_COLLECTIVECOST_H

#include "pp/Scheduling/Device.h"

#include <optional>

namespace mlir::pp {

/// The link a collective runs over: bytes per time unit and the time before
/// the first byte arrives. A zero bandwidth moves bytes for free.
struct CollectiveLink {
  double bandwidth = 0.0, latency = 0.0;

  /// The slowest link of `devices` (smallest bandwidth, largest latency),
  /// in time units of `secondsPerUnit` seconds.
  static CollectiveLink getSlowest(ArrayRef<DeviceDescription> devices,
                                   double secondsPerUnit = 1.0);

  /// latency + bytes / bandwidth.
  double getTime(double bytes) const {
    return latency + (bandwidth > 0.0 ? bytes / bandwidth : 0.0);
  }
};

/// Seconds per unit of a time unit (`s`, `ms`, `us`, `ns`), or none for
/// anything else.
std::optional<double> getSecondsPerUnit(StringRef unit);

/// Time of a ring all-reduce of `bytes` over `parts` devices: each sends
/// 2 (parts - 1) / parts of them, after one latency; 0 for one part.
double getRingAllReduceTime(double bytes, int64_t parts, CollectiveLink link);

} // namespace mlir::pp

#endif // PP_SCHEDULING_COLLECTIVECOST_H
