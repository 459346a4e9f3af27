//===- ScheduleOptionEnums.td - values of planner options --*- tablegen -*-===//
//
// The enumerated inputs of the scheduling library's planners that pass
// options set, with the strings they take on the command line; apart from
// ScheduleEnums.td, whose enums the dialect's attributes carry and its
// reference lists.
//
//===----------------------------------------------------------------------===//

#ifndef PP_SCHEDULING_SCHEDULEOPTIONENUMS_TD
#define PP_SCHEDULING_SCHEDULEOPTIONENUMS_TD

include "mlir/IR/EnumAttr.td"

// Which stages recompute their forward in their backward: the partition
// planner's input and the value of the recompute options.
def PP_RecomputePolicy : I32Enum<"RecomputePolicy",
    "which stages recompute their forward in their backward", [
    I32EnumCase<"None", 0, "none">,
    I32EnumCase<"All", 1, "all">,
    // Those the partition planner picks so that every rank fits its cap.
    I32EnumCase<"Auto", 2, "auto">
  ]> {
  let cppNamespace = "::mlir::pp";
}

#endif // PP_SCHEDULING_SCHEDULEOPTIONENUMS_TD
