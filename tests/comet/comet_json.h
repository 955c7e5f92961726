// `poems comet --format json` in process, for the comet test files.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run_command.h"

// L = 5 us, o = 1 us, g = 2 us, G = 1 ns/B (S = 65535 B: 256 KiB is a
// rendezvous): one message of s bytes takes o + L + (s-1)G + o = 7000 + (s-1) ns.
inline const std::string kFlat = " -L 5us -o 1us -g 2us -G 1ns/B --no-measure --no-store --format json";

inline nlohmann::json run_json(const std::string& args) {
  const CommandResult r = poems_in_process("comet " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  if (r.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(r.out);
}

// The kernel's entry of the JSON (an empty object, and a failure, if absent).
inline const nlohmann::json& kernel(const nlohmann::json& doc, const std::string& name) {
  for (const nlohmann::json& k : doc.at("kernels"))
    if (k.at("kernel") == name) return k;
  static const nlohmann::json none = nlohmann::json::object();
  ADD_FAILURE() << "no kernel " << name << " in " << doc.dump();
  return none;
}
