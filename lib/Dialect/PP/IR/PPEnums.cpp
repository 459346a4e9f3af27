//===- PPEnums.cpp - keywords of the pp enumerations ----------------------===//
//
// The generated stringify/symbolize functions of PPEnums.td and
// PPOptionEnums.td.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/IR/PPEnums.h"

#include "llvm/ADT/StringSwitch.h"

#include "pp/Dialect/PP/IR/PPEnums.cpp.inc"
#include "pp/Dialect/PP/IR/PPOptionEnums.cpp.inc"
