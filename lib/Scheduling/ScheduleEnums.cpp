//===- ScheduleEnums.cpp - keywords of the schedule enumerations ----------===//
//
// The generated stringify/symbolize functions of ScheduleEnums.td and
// ScheduleOptionEnums.td.
//
//===----------------------------------------------------------------------===//

#include "pp/Scheduling/ScheduleEnums.h"

#include "llvm/ADT/StringSwitch.h"

#include "pp/Scheduling/ScheduleEnums.cpp.inc"
#include "pp/Scheduling/ScheduleOptionEnums.cpp.inc"
