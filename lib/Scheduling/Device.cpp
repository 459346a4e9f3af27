//===- Device.cpp - what a pipeline rank's device can do ------------------===//

#include "pp/Scheduling/Device.h"

using namespace mlir::pp;

double DeviceDescription::getGemmRate(double dim) const {
  if (gemmRates.empty())
    return peakFlops;
  double rate = gemmRates.front().flops;
  for (const GemmRate &entry : gemmRates)
    if (entry.minDim <= dim)
      rate = entry.flops;
  return rate;
}
