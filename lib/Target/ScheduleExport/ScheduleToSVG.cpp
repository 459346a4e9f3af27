//===- ScheduleToSVG.cpp - pp.schedule to an SVG timeline -----------------===//
//
// Draws the unit-cost timeline of a schedule as a standalone SVG image for
// documents and browsers: a time axis, one row of boxes per rank coloured by
// phase and labelled with the micro-batch (and slice), and a legend. Times come
// from ScheduleSimulator, like the ASCII and Chrome-trace timelines; transfers,
// all-reduces and optimizer steps take no time and are not drawn. The two
// halves of an overlapped pair share their row, one above the other.
//
//===----------------------------------------------------------------------===//

#include "pp/Dialect/PP/Analysis/ScheduleSimulator.h"
#include "pp/Dialect/PP/IR/ActionVocabulary.h"
#include "pp/Dialect/PP/IR/PPOps.h"
#include "pp/Target/ScheduleExport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pp;
using namespace mlir::pp::sched;

// Layout, in pixels.
static constexpr double kMinUnitWidth = 24;
static constexpr double kCharWidth = 7; // of the 11px monospace labels
static constexpr double kRowHeight = 24;
static constexpr double kRowGap = 6;
static constexpr double kLeftMargin = 64; // rank names
static constexpr double kRightMargin = 16;
static constexpr double kTitleHeight = 24;
static constexpr double kAxisHeight = 24;
static constexpr double kLegendHeight = 32;
static constexpr double kMinTickSpacing = 40;
static constexpr double kMinWidth = 600; // room for the title and legend

/// The phases in legend order; boxes of a phase take their colour from the
/// action vocabulary, and their CSS class is the phase's name.
static constexpr Phase kPhases[] = {Phase::forward, Phase::backward_input,
                                    Phase::backward_weight, Phase::backward};

static const ActionSpelling &getPhaseSpelling(Phase phase) {
  return getActionSpelling(getComputeAction(phase));
}

/// A number as an SVG coordinate: "%g" writes the whole and half pixels of
/// this layout exactly, and the same on every platform.
static std::string px(double value) {
  return llvm::formatv("{0}", llvm::format("%g", value)).str();
}

/// `text` with the characters XML reserves escaped.
static std::string escapeXML(StringRef text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    default:
      escaped += c;
    }
  }
  return escaped;
}

/// The micro-batch, "i:j" for slice j of micro-batch i in a schedule of
/// `slices` sequence slices, prefixed with "stage." where a rank runs
/// several stages.
static std::string getBoxLabel(ComputeOp compute, bool withStage,
                               int64_t slices) {
  int64_t mb = compute.getMb();
  std::string label =
      slices > 1 ? llvm::formatv("{0}:{1}", mb / slices, mb % slices).str()
                 : std::to_string(mb);
  if (withStage)
    return llvm::formatv("{0}.{1}", compute.getStage(), label).str();
  return label;
}

/// The smallest of 1, 2, 5, 10, 20, 50, ... time units whose ticks are at
/// least kMinTickSpacing apart.
static int64_t getTickStep(double unitWidth) {
  for (int64_t scale = 1;; scale *= 10)
    for (int64_t step : {1, 2, 5})
      if (step * scale * unitWidth >= kMinTickSpacing)
        return step * scale;
}

namespace {
/// Writes the parts of the image; x grows with time, y with the rank.
class TimelineDrawing {
public:
  TimelineDrawing(ScheduleOp schedule, const ScheduleSimulator &simulator,
                  raw_ostream &os);

  void write();

private:
  double xOf(double time) const { return kLeftMargin + time * unitWidth; }
  double yOf(int64_t rank) const {
    return kTitleHeight + kAxisHeight + rank * (kRowHeight + kRowGap);
  }
  void writeHeader();
  void writeAxis();
  void writeRank(int64_t rank);
  void writeLegend();

  ScheduleOp schedule;
  const ScheduleSimulator &simulator;
  raw_ostream &os;
  int64_t numRanks;
  bool withStage;
  int64_t slices;
  double unitWidth;
  double makespan;
  double width;
  double height;
};
} // namespace

TimelineDrawing::TimelineDrawing(ScheduleOp schedule,
                                 const ScheduleSimulator &simulator,
                                 raw_ostream &os)
    : schedule(schedule), simulator(simulator), os(os),
      numRanks(simulator.getNumRanks()),
      withStage(schedule.getNumStages() > numRanks),
      slices(schedule.getNumSlices()), makespan(simulator.getMakespan()) {
  // Wide enough for the longest label in a one-unit box.
  size_t longest = 1;
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (Operation *op : simulator.getActions(rank))
      if (auto compute = dyn_cast<ComputeOp>(op))
        longest =
            std::max(longest, getBoxLabel(compute, withStage, slices).size());
  unitWidth = std::max(kMinUnitWidth, kCharWidth * (longest + 1));
  width = std::max(xOf(makespan) + kRightMargin, kMinWidth);
  height = yOf(numRanks) + kLegendHeight;
}

void TimelineDrawing::write() {
  writeHeader();
  writeAxis();
  for (int64_t rank = 0; rank < numRanks; ++rank)
    writeRank(rank);
  writeLegend();
  os << "</svg>\n";
}

void TimelineDrawing::writeHeader() {
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(width)
     << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << " "
     << px(height) << "\" font-family=\"monospace\" font-size=\"11\">\n";
  os << "<style>\n";
  for (Phase phase : kPhases)
    os << "  ." << stringifyPhase(phase)
       << " { fill: " << getPhaseSpelling(phase).colour << "; }\n";
  os << "  rect { stroke: #ffffff; stroke-width: 1; }\n"
     << "  text.box { fill: #ffffff; text-anchor: middle; }\n"
     << "  text.tick { text-anchor: middle; }\n"
     << "</style>\n";
  os << "<rect x=\"0\" y=\"0\" width=\"" << px(width) << "\" height=\""
     << px(height) << "\" fill=\"#ffffff\" stroke=\"none\"/>\n";
  // A sliced schedule's units are slices, each costing one unit here.
  int64_t microbatches = schedule.getNumMicrobatches() / slices;
  std::string sliced =
      slices > 1 ? llvm::formatv(" of {0} slices", slices).str() : "";
  os << "<text class=\"title\" x=\"" << px(kLeftMargin) << "\" y=\"16\">"
     << escapeXML(llvm::formatv("pp.schedule @{0} \"{1}\": {2} ranks, {3} "
                                "micro-batch{4}{5}, makespan {6} (unit costs)",
                                schedule.getSymName(), schedule.getName(),
                                numRanks, microbatches,
                                microbatches == 1 ? "" : "es", sliced,
                                px(makespan))
                      .str())
     << "</text>\n";
}

void TimelineDrawing::writeAxis() {
  double axisY = kTitleHeight + kAxisHeight - 4;
  os << "<g class=\"axis\" stroke=\"#000000\">\n";
  os << "  <line x1=\"" << px(xOf(0)) << "\" y1=\"" << px(axisY) << "\" x2=\""
     << px(xOf(makespan)) << "\" y2=\"" << px(axisY) << "\"/>\n";
  int64_t step = getTickStep(unitWidth);
  for (int64_t t = 0; t <= makespan + 1e-9; t += step)
    os << "  <line x1=\"" << px(xOf(t)) << "\" y1=\"" << px(axisY - 4)
       << "\" x2=\"" << px(xOf(t)) << "\" y2=\"" << px(axisY) << "\"/>\n"
       << "  <text class=\"tick\" x=\"" << px(xOf(t)) << "\" y=\""
       << px(axisY - 7) << "\" stroke=\"none\">" << t << "</text>\n";
  os << "</g>\n";
}

void TimelineDrawing::writeRank(int64_t rank) {
  double y = yOf(rank);
  os << "<g class=\"rank\" id=\"rank" << rank << "\">\n";
  os << "  <text x=\"4\" y=\"" << px(y + kRowHeight / 2 + 4) << "\">rank "
     << rank << "</text>\n";
  for (auto [op, interval] : llvm::zip_equal(simulator.getActions(rank),
                                             simulator.getIntervals(rank))) {
    auto compute = dyn_cast<ComputeOp>(op);
    if (!compute || interval.end <= interval.start)
      continue;
    double x = xOf(interval.start),
           w = (interval.end - interval.start) * unitWidth;
    // An overlapped pair shares the row: the forward above, the backward
    // below.
    auto next = dyn_cast_or_null<ComputeOp>(compute->getNextNode());
    bool overlapped = next && next.getOverlapPartner();
    double top = y, height = kRowHeight;
    if (overlapped || compute.getOverlapPartner()) {
      height = kRowHeight / 2;
      top = overlapped ? y : y + height;
    }
    os << "  <rect class=\"" << stringifyPhase(compute.getPhase()) << "\" x=\""
       << px(x) << "\" y=\"" << px(top) << "\" width=\"" << px(w)
       << "\" height=\"" << px(height) << "\"><title>" << getActionName(compute)
       << " stage " << compute.getStage() << " mb " << compute.getMb();
    if (slices > 1)
      os << " (micro-batch " << compute.getMb() / slices << " slice "
         << compute.getMb() % slices << ")";
    os << ", " << px(interval.start) << " to " << px(interval.end)
       << "</title></rect>\n";
    os << "  <text class=\"box\" x=\"" << px(x + w / 2) << "\" y=\""
       << px(top + height / 2 + 4) << "\">"
       << getBoxLabel(compute, withStage, slices) << "</text>\n";
  }
  os << "</g>\n";
}

void TimelineDrawing::writeLegend() {
  double y = yOf(numRanks) + 8;
  os << "<g class=\"legend\">\n";
  double x = kLeftMargin;
  for (Phase phase : kPhases) {
    const ActionSpelling &spelling = getPhaseSpelling(phase);
    std::string legend = (spelling.json + " " + spelling.description).str();
    os << "  <rect class=\"" << stringifyPhase(phase) << "\" x=\"" << px(x)
       << "\" y=\"" << px(y) << "\" width=\"12\" height=\"12\"/>\n"
       << "  <text x=\"" << px(x + 16) << "\" y=\"" << px(y + 10) << "\">"
       << legend << "</text>\n";
    x += 16 + kCharWidth * (legend.size() + 3);
  }
  os << "</g>\n";
}

LogicalResult mlir::pp::exportScheduleToSVG(ScheduleOp schedule,
                                            raw_ostream &os) {
  ScheduleSimulator simulator(schedule);
  if (failed(simulator.runForTimeline(schedule)))
    return failure();
  TimelineDrawing(schedule, simulator, os).write();
  return success();
}
