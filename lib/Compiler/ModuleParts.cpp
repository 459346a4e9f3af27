//===- ModuleParts.cpp - split a program's LLVM module for parallel builds ===//
//
// Assigns every definition of the translated module to a part, then clones
// each part with CloneModule: definitions of other parts become declarations.
//
//===----------------------------------------------------------------------===//

#include "ModuleParts.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <algorithm>

using namespace llvm;
namespace pp = mlir::pp;

bool pp::isDriverFunction(StringRef name) {
  if (name == "pp_define_program" || name == "pp_run_step")
    return true;
  return name.consume_front("pp_run_step_rank") && !name.empty() &&
         llvm::all_of(name, [](char c) { return c >= '0' && c <= '9'; });
}

namespace {
/// A symbol with no part of its own: used by a part, or by no function.
constexpr int kNoPart = -1;

/// Where each definition of a module goes.
class PartAssignment {
public:
  PartAssignment(Module &module, unsigned numStageParts);

  unsigned getNumParts() const { return sizes.size(); }
  int getDriverPart() const { return driverPart; }
  size_t getSize(unsigned part) const { return sizes[part]; }
  /// Whether `part` holds (a copy of) the definition of `value`.
  bool defines(const GlobalValue *value, unsigned part) const;

private:
  void assignFunctions(unsigned numStageParts);
  void assignGlobals();
  void collectUsers(const Value *value, SmallDenseSet<int, 4> &parts,
                    bool &usedByGlobal) const;
  /// Gives a local symbol that another part uses a hidden external name.
  static void exportSymbol(GlobalValue &value);

  Module &module;
  DenseMap<const GlobalValue *, int> home;
  /// Functions copied into every part that calls them.
  DenseSet<const Function *> copiedFunctions;
  /// Local constants and copied functions, in every part listed.
  DenseMap<const GlobalValue *, SmallDenseSet<int, 4>> copies;
  SmallVector<size_t> sizes;
  int driverPart = kNoPart;
};
} // namespace

static size_t countInstructions(const Function &func) {
  size_t count = 0;
  for (const BasicBlock &block : func)
    count += block.size();
  return count;
}

/// Whether `func` is copied into every part that calls it, like a local
/// constant: a local function that only calls declarations and is only
/// called (pp-outline-loop-nests' shared loop nests). Each part's callers
/// keep it internal, so LLVM drops its unused arguments, and the nests
/// shared by stage functions do not tie those into one part.
static bool isCopiedFunction(const Function &func) {
  if (!func.hasLocalLinkage() || func.isDeclaration())
    return false;
  for (const User *user : func.users()) {
    auto *call = dyn_cast<CallBase>(user);
    if (!call || call->getCalledOperand() != &func)
      return false;
  }
  for (const BasicBlock &block : func)
    for (const Instruction &inst : block) {
      if (auto *call = dyn_cast<CallBase>(&inst))
        if (auto *callee = call->getCalledFunction();
            !callee || !callee->isDeclaration())
          return false;
      // A function it passes on (an OpenMP region's outlined body) must
      // be in its part.
      for (const Value *operand : inst.operands())
        if (auto *passed = dyn_cast<Function>(operand->stripPointerCasts()))
          if (!passed->isDeclaration())
            return false;
    }
  return true;
}

PartAssignment::PartAssignment(Module &module, unsigned numStageParts)
    : module(module) {
  for (const Function &func : module)
    if (isCopiedFunction(func))
      copiedFunctions.insert(&func);
  assignFunctions(std::max(numStageParts, 1u));
  assignGlobals();
}

void PartAssignment::assignFunctions(unsigned numStageParts) {
  // Stage functions that reach each other directly form one group.
  EquivalenceClasses<const Function *> groups;
  SmallVector<const Function *> driver;
  for (const Function &func : module) {
    if (func.isDeclaration())
      continue;
    if (pp::isDriverFunction(func.getName())) {
      driver.push_back(&func);
      continue;
    }
    if (copiedFunctions.contains(&func))
      continue;
    groups.insert(&func);
    for (const BasicBlock &block : func)
      for (const Instruction &inst : block)
        for (const Value *operand : inst.operands())
          if (auto *callee = dyn_cast<Function>(operand->stripPointerCasts()))
            if (!callee->isDeclaration() &&
                !pp::isDriverFunction(callee->getName()) &&
                !copiedFunctions.contains(callee))
              groups.unionSets(&func, callee);
  }
  SmallVector<std::pair<size_t, SmallVector<const Function *>>> members;
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    auto &[size, funcs] = members.emplace_back();
    for (auto member = groups.member_begin(**it); member != groups.member_end();
         ++member) {
      funcs.push_back(*member);
      size += countInstructions(**member);
    }
  }
  // Largest group first onto the least loaded part; ties keep module order.
  llvm::stable_sort(
      members, [](const auto &a, const auto &b) { return a.first > b.first; });
  // Part 0 always exists: it holds the globals no function uses.
  unsigned numParts =
      std::max<size_t>(1, std::min<size_t>(numStageParts, members.size()));
  sizes.assign(numParts, 0);
  for (auto &[size, funcs] : members) {
    unsigned part =
        std::min_element(sizes.begin(), sizes.end()) - sizes.begin();
    sizes[part] += size;
    for (const Function *func : funcs)
      home[func] = part;
  }
  if (driver.empty())
    return;
  driverPart = sizes.size();
  sizes.push_back(0);
  for (const Function *func : driver) {
    home[func] = driverPart;
    sizes[driverPart] += countInstructions(*func);
  }
}

void PartAssignment::collectUsers(const Value *value,
                                  SmallDenseSet<int, 4> &parts,
                                  bool &usedByGlobal) const {
  for (const User *user : value->users()) {
    if (auto *inst = dyn_cast<Instruction>(user))
      parts.insert(home.lookup(inst->getFunction()));
    else if (isa<GlobalValue>(user))
      usedByGlobal = true;
    else
      collectUsers(user, parts, usedByGlobal);
  }
}

void PartAssignment::exportSymbol(GlobalValue &value) {
  if (!value.hasLocalLinkage())
    return;
  value.setName(value.hasName() ? value.getName() + ".part" : "pp.part");
  value.setLinkage(GlobalValue::ExternalLinkage);
  value.setVisibility(GlobalValue::HiddenVisibility);
}

void PartAssignment::assignGlobals() {
  // Global variables live where their users are. Functions already have a
  // part; they are exported when another part (or a global) refers to them.
  for (GlobalValue &value : module.global_values()) {
    if (value.isDeclaration())
      continue;
    SmallDenseSet<int, 4> parts;
    bool usedByGlobal = false;
    collectUsers(&value, parts, usedByGlobal);
    auto *variable = dyn_cast<GlobalVariable>(&value);
    auto *func = dyn_cast<Function>(&value);
    if (func && copiedFunctions.contains(func)) {
      copies[func] = parts;
      continue;
    }
    if (!variable) {
      if (!home.count(&value))
        home[&value] = 0;
      int own = home[&value];
      if (usedByGlobal ||
          llvm::any_of(parts, [&](int part) { return part != own; }))
        exportSymbol(value);
      continue;
    }
    if (variable->isConstant() && variable->hasLocalLinkage() &&
        !usedByGlobal && !parts.empty()) {
      copies[variable] = parts;
      continue;
    }
    home[variable] = parts.empty() ? 0 : *llvm::min_element(parts);
    if (usedByGlobal || parts.size() > 1)
      exportSymbol(*variable);
  }
}

bool PartAssignment::defines(const GlobalValue *value, unsigned part) const {
  auto copy = copies.find(value);
  if (copy != copies.end())
    return copy->second.contains(part);
  auto it = home.find(value);
  return it != home.end() && it->second == static_cast<int>(part);
}

/// Removes the declarations nothing in `module` refers to.
static void dropUnusedDeclarations(Module &module) {
  SmallVector<GlobalValue *> unused;
  for (GlobalValue &value : module.global_values())
    if (value.isDeclaration() && value.use_empty())
      unused.push_back(&value);
  for (GlobalValue *value : unused)
    value->eraseFromParent();
}

SmallVector<pp::ModulePart> pp::splitModule(Module &module,
                                            unsigned numStageParts) {
  // Aliases must stay with their aliasees; pp's modules have none, so such
  // a module stays whole.
  if (!module.alias_empty() || !module.ifunc_empty())
    return {writeModule(module)};
  PartAssignment assignment(module, numStageParts);
  SmallVector<ModulePart> parts(assignment.getNumParts());
  for (unsigned index = 0; index < parts.size(); ++index) {
    ValueToValueMapTy map;
    std::unique_ptr<Module> clone =
        CloneModule(module, map, [&](const GlobalValue *value) {
          return assignment.defines(value, index);
        });
    dropUnusedDeclarations(*clone);
    ModulePart &part = parts[index];
    part.driver = static_cast<int>(index) == assignment.getDriverPart();
    part.size = assignment.getSize(index);
    raw_svector_ostream os(part.bitcode);
    WriteBitcodeToFile(*clone, os);
  }
  return parts;
}

pp::ModulePart pp::writeModule(const Module &module) {
  ModulePart part;
  for (const Function &func : module)
    part.size += countInstructions(func);
  raw_svector_ostream os(part.bitcode);
  WriteBitcodeToFile(module, os);
  return part;
}

std::unique_ptr<Module> pp::readPart(mlir::Location loc, const ModulePart &part,
                                     LLVMContext &context) {
  MemoryBufferRef buffer(StringRef(part.bitcode.data(), part.bitcode.size()),
                         "part");
  Expected<std::unique_ptr<Module>> module = parseBitcodeFile(buffer, context);
  if (!module) {
    mlir::emitError(loc) << "cannot read a module part: "
                         << toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}
