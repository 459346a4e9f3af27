//===- DeviceDescription.cpp - built-in devices and device files ----------===//
//
// The built-in device descriptions and the JSON device-file reader.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/DeviceDescription.h"
#include "pp/Dialect/PP/IR/Limits.h"
#include "pp/Dialect/PP/Utils/InputFile.h"
#include "pp/Dialect/PP/Utils/JSONDepth.h"
#include "pp/Scheduling/ScheduleTiming.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pp;

/// Nominal peaks from the vendors' data sheets; docs/CostModel.md says
/// where each number comes from.
static const DeviceDescription kBuiltinDevices[] = {
    // One x86-64 core at 3 GHz with two 8-wide f32 FMA units; its share of
    // a socket's DRAM bandwidth; MPI over shared memory to the next core.
    {"cpu", /*peakFlops=*/96e9, /*memoryBandwidth=*/20e9,
     /*linkBandwidth=*/10e9, /*linkLatency=*/1e-6,
     /*memoryCapacity=*/8.0 * (1ull << 30)},
    // NVIDIA H200 SXM: f32 (not tensor-core) peak, HBM3e, one direction of
    // NVLink 4, NCCL point-to-point latency, 141 GB of HBM.
    {"h200", /*peakFlops=*/67e12, /*memoryBandwidth=*/4.8e12,
     /*linkBandwidth=*/450e9, /*linkLatency=*/5e-6,
     /*memoryCapacity=*/141e9},
};

std::optional<DeviceDescription> mlir::pp::lookupBuiltinDevice(StringRef name) {
  for (const DeviceDescription &device : kBuiltinDevices)
    if (device.name == name)
      return device;
  return std::nullopt;
}

std::string mlir::pp::listBuiltinDevices() {
  return llvm::join(llvm::map_range(kBuiltinDevices,
                                    [](const DeviceDescription &device) {
                                      return StringRef(device.name);
                                    }),
                    ", ");
}

static llvm::Error deviceError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// A numeric field of a device object, where it goes and its range. Speeds
/// are at least 1 per second and every amount at most kMaxQuantity, so that
/// the times derived from them stay finite: a peak_flops of 5e-324 made
/// every time infinite and the planner report that no partition exists.
struct DeviceField {
  StringRef key;
  double DeviceDescription::*member;
  double min;
  /// Whether `min` itself is excluded (a capacity must be positive).
  bool positive;
  /// The range as errors state it.
  StringRef range;
};
} // namespace

static const DeviceField kDeviceFields[] = {
    {"peak_flops", &DeviceDescription::peakFlops, 1, false,
     "between 1 and 1e280"},
    {"memory_bandwidth", &DeviceDescription::memoryBandwidth, 1, false,
     "between 1 and 1e280"},
    {"link_bandwidth", &DeviceDescription::linkBandwidth, 1, false,
     "between 1 and 1e280"},
    {"link_latency", &DeviceDescription::linkLatency, 0, false,
     "between 0 and 1e280"},
    {"memory_capacity", &DeviceDescription::memoryCapacity, 0, true,
     "positive and at most 1e280"},
};

/// Whether `number` lies in `field`'s range (NaN does not).
static bool isInRange(const DeviceField &field, double number) {
  return (field.positive ? number > field.min : number >= field.min) &&
         number <= kMaxQuantity;
}

/// Reads `gemm_flops`: a non-empty array of {"min_dim": d, "flops": f} in
/// ascending `min_dim`, each rate in peak_flops' range.
static llvm::Error parseGemmRates(const llvm::json::Value &value,
                                  StringRef where, DeviceDescription &device) {
  const llvm::json::Array *list = value.getAsArray();
  if (!list || list->empty())
    return deviceError(where + ": 'gemm_flops' must be a non-empty array of "
                               "{\"min_dim\": ..., \"flops\": ...}");
  for (auto [index, item] : llvm::enumerate(*list)) {
    std::string entry = llvm::formatv("{0}: gemm_flops[{1}]", where, index);
    const llvm::json::Object *rate = item.getAsObject();
    std::optional<double> dim =
        rate ? rate->getNumber("min_dim") : std::nullopt;
    std::optional<double> flops =
        rate ? rate->getNumber("flops") : std::nullopt;
    if (!dim || !flops || rate->size() != 2)
      return deviceError(entry + " must be {\"min_dim\": ..., \"flops\": ...}");
    if (!(*dim >= 1 && *dim <= kMaxQuantity) ||
        !isInRange(kDeviceFields[0], *flops))
      return deviceError(entry + ": min_dim must be between 1 and 1e280 and "
                                 "flops between 1 and 1e280");
    if (!device.gemmRates.empty() && *dim <= device.gemmRates.back().minDim)
      return deviceError(entry + ": min_dim must grow from entry to entry");
    device.gemmRates.push_back({*dim, *flops});
  }
  return llvm::Error::success();
}

/// Reads one device object; `where` names it in errors.
static llvm::Expected<DeviceDescription>
parseDevice(const llvm::json::Value &value, StringRef where) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return deviceError(where + " is not an object");
  DeviceDescription device;
  std::optional<StringRef> base;
  if (const llvm::json::Value *baseValue = object->get("base")) {
    base = baseValue->getAsString();
    std::optional<DeviceDescription> builtin =
        base ? lookupBuiltinDevice(*base) : std::nullopt;
    if (!builtin)
      return deviceError(where + ": 'base' must be a built-in device (" +
                         listBuiltinDevices() + ")");
    device = *builtin;
  }
  for (const auto &[key, field] : *object) {
    if (key == "base" || key == "meta") // meta: provenance, not read
      continue;
    if (key == "gemm_flops") {
      if (llvm::Error error = parseGemmRates(field, where, device))
        return std::move(error);
      continue;
    }
    if (key == "name") {
      std::optional<StringRef> name = field.getAsString();
      if (!name)
        return deviceError(where + ": 'name' must be a string");
      device.name = name->str();
      continue;
    }
    const auto *known = llvm::find_if(kDeviceFields, [&](const DeviceField &f) {
      return f.key == key.str();
    });
    if (known == std::end(kDeviceFields))
      return deviceError(where + ": unknown field '" + key.str() + "'");
    std::optional<double> number = field.getAsNumber();
    if (!number)
      return deviceError(where + ": '" + key.str() + "' must be a number");
    if (!isInRange(*known, *number))
      return deviceError(where + ": '" + key.str() + "' must be " +
                         known->range + ", got " +
                         sched::formatQuantity(*number));
    device.*(known->member) = *number;
  }
  if (!base)
    for (const DeviceField &field : kDeviceFields)
      if (!object->get(field.key))
        return deviceError(where + ": missing '" + field.key +
                           "' (or a 'base' device to take it from)");
  if (device.name.empty())
    device.name = base ? base->str() : "custom";
  return device;
}

llvm::Expected<SmallVector<DeviceDescription>>
mlir::pp::parseDeviceFile(StringRef json) {
  // llvm::json parses and destroys values recursively.
  if (std::optional<size_t> tooDeep = findTooDeepJSON(json)) {
    auto [line, column] = getLineAndColumn(json, *tooDeep);
    return deviceError(llvm::formatv("line {0}, column {1}: JSON nested more "
                                     "than {2} levels deep",
                                     line, column, kMaxJSONDepth));
  }
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(json);
  if (!root)
    return root.takeError();
  const llvm::json::Object *object = root->getAsObject();
  if (!object)
    return deviceError("the device file must hold a JSON object");
  const llvm::json::Value *ranks = object->get("ranks");
  if (!ranks) {
    llvm::Expected<DeviceDescription> device = parseDevice(*root, "the device");
    if (!device)
      return device.takeError();
    return SmallVector<DeviceDescription>{*device};
  }
  const llvm::json::Array *list = ranks->getAsArray();
  if (!list || list->empty() || object->size() != 1)
    return deviceError("'ranks' must be a non-empty array of devices and the "
                       "only field next to it");
  SmallVector<DeviceDescription> devices;
  for (auto [index, value] : llvm::enumerate(*list)) {
    llvm::Expected<DeviceDescription> device =
        parseDevice(value, llvm::formatv("rank {0}'s device", index).str());
    if (!device)
      return device.takeError();
    devices.push_back(*device);
  }
  return devices;
}

llvm::Expected<SmallVector<DeviceDescription>>
mlir::pp::resolveDevices(ArrayRef<std::string> names, StringRef deviceFile,
                         int64_t numRanks) {
  SmallVector<DeviceDescription> devices;
  if (!deviceFile.empty()) {
    if (!names.empty())
      return deviceError("give either 'device' or 'device-file', not both");
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
        readRegularFile(deviceFile, kMaxJSONFileBytes);
    if (!buffer)
      return deviceError("cannot read device file '" + deviceFile +
                         "': " + llvm::toString(buffer.takeError()));
    llvm::Expected<SmallVector<DeviceDescription>> parsed =
        parseDeviceFile((*buffer)->getBuffer());
    if (!parsed)
      return deviceError("device file '" + deviceFile +
                         "': " + llvm::toString(parsed.takeError()));
    devices = std::move(*parsed);
  } else {
    static const std::string kDefaultDevice = "cpu";
    for (StringRef name : names.empty() ? ArrayRef(kDefaultDevice) : names) {
      std::optional<DeviceDescription> device = lookupBuiltinDevice(name);
      if (!device)
        return deviceError("unknown device '" + name +
                           "'; the built-in "
                           "devices are " +
                           listBuiltinDevices());
      devices.push_back(*device);
    }
  }
  if (devices.size() == 1)
    devices.resize(numRanks, devices.front());
  if (int64_t(devices.size()) != numRanks)
    return deviceError(llvm::formatv("{0} devices given for {1} ranks; give "
                                     "one for every rank or one per rank",
                                     devices.size(), numRanks)
                           .str());
  return devices;
}
