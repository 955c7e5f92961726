// The message of the ProcessorError a call throws, for the processor tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "poems/processor/processor_model.h"

namespace poems::processor::testing {

// The message of the ProcessorError that f throws (fails the test if none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ProcessorError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ProcessorError thrown";
  return "";
}

}  // namespace poems::processor::testing
