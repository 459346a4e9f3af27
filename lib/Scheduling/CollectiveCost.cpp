//===- CollectiveCost.cpp - ring all-reduces on a device's links ----------===//

#include "pp/Scheduling/CollectiveCost.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::pp;

CollectiveLink CollectiveLink::getSlowest(ArrayRef<DeviceDescription> devices,
                                          double secondsPerUnit) {
  CollectiveLink link;
  double bandwidth = 0.0;
  for (const DeviceDescription &device : devices) {
    bandwidth = bandwidth > 0.0 ? std::min(bandwidth, device.linkBandwidth)
                                : device.linkBandwidth;
    link.latency = std::max(link.latency, device.linkLatency);
  }
  link.bandwidth = bandwidth * secondsPerUnit;
  link.latency /= secondsPerUnit;
  return link;
}

double mlir::pp::getRingAllReduceTime(double bytes, int64_t parts,
                                      CollectiveLink link) {
  if (parts <= 1)
    return 0.0;
  return link.getTime(2.0 * double(parts - 1) / double(parts) * bytes);
}

std::optional<double> mlir::pp::getSecondsPerUnit(StringRef unit) {
  return llvm::StringSwitch<std::optional<double>>(unit)
      .Case("s", 1.0)
      .Case("ms", 1e-3)
      .Case("us", 1e-6)
      .Case("ns", 1e-9)
      .Default(std::nullopt);
}
