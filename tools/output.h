// Printing shared by the evaluating commands.
#pragma once

#include <string>

#include "cli.h"
#include "poems/core/session.h"

namespace poems::cli {

// "model Ring (6 processes) on Odin, Wg=60ns from Opteron".
std::string describe(const core::Cell& cell, const std::string& model);
// "LogGOPS L=5300ns ... S=32768B, 1 CPU(s) and 1 NIC(s) per process, matched semantics".
std::string describe_machine(const core::Machine& machine);
// What happened to the run in the knowledge base, on err ("stored as run 3
// in poems.db"); returns the exit code the record asks for: evaluation
// failure when the result could not be stored.
int report_record(const core::Cell& cell, const Context& ctx, bool quiet = false);
// Warnings the store collected (runs not linked to a study).
void report_store_warnings(core::Store& store, const Context& ctx);

}  // namespace poems::cli
