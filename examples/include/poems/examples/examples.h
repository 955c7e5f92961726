// The examples' registrations: what each example application brings to the
// framework (closed forms, kernels, programs, recommender questions) and the
// example files commands fall back on (the machines `poems direct` reads, the
// specification `poems recommend` answers for). The `poems` tool calls
// register_examples() once; generic code names no example.
#pragma once

#include <string>

namespace poems::examples {

// Idempotent.
void register_examples();

// The specification `poems recommend` uses when given none, or "" (found in
// the working directory, else in the source tree this build came from).
std::string default_specification();

}  // namespace poems::examples
