//===- pp-device-file-fuzzer.cpp - fuzz the device-file reader ------------===//
//
// Reads the input as a device file (docs/CostModel.md); devices that read
// must have finite, positive speeds.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "pp/Dialect/PP/Analysis/DeviceDescription.h"

#include <cmath>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<SmallVector<pp::DeviceDescription>> devices =
      pp::parseDeviceFile(text);
  if (!devices) {
    llvm::consumeError(devices.takeError());
    return 0;
  }
  for (const pp::DeviceDescription &device : *devices)
    if (!(std::isfinite(device.peakFlops) && device.peakFlops > 0 &&
          std::isfinite(device.memoryBandwidth) && device.memoryBandwidth > 0))
      pp::fuzz::finding("a device with an invalid speed was read");
  return 0;
}
