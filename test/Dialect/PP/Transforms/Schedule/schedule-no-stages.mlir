// RUN: pp-opt %s -verify-diagnostics --pp-schedule="schedule=gpipe"

// expected-error @+1 {{no stages to schedule: run pp-derive-backward first or pass num-stages}}
module {
}
