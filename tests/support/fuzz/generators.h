// Deterministic input generators for the fuzz harness: grammar-aware PSL
// and GOAL programs (mostly valid, with hostile values), and byte- and
// token-level mutations of seed files. Everything is drawn from the caller's
// seeded generator, so a run is reproducible from its seed and index.
#pragma once

#include <random>
#include <string>
#include <vector>

namespace poems::fuzz {

using Rng = std::mt19937_64;

// A PSL specification from the grammar: a model with parameters, lets and a
// task graph (loops, branches, messages, collectives, tasks), components and
// sometimes a study; values range over the hostile ones of issue 25 (huge,
// negative, fractional, division by zero, long chains).
std::string generate_psl(Rng& rng);

// A GOAL schedule from its grammar: ranks, labelled calc/send/recv with
// sizes, tags, CPUs and NICs, requires/irequires (also forward and cyclic).
std::string generate_goal(Rng& rng);

// 1 to 8 byte-level edits: deletions, insertions of fragments from
// `vocabulary` or of random bytes, duplications, swaps, truncation, and
// splices with another seed.
std::string mutate_bytes(const std::string& seed, const std::vector<std::string>& seeds,
                         const std::vector<std::string>& vocabulary, Rng& rng);

// Token-level edits: the input split at word boundaries, tokens replaced,
// duplicated, dropped or repeated many times.
std::string mutate_tokens(const std::string& seed, const std::vector<std::string>& vocabulary, Rng& rng);

// Fragments worth inserting into PSL / GOAL text.
const std::vector<std::string>& psl_vocabulary();
const std::vector<std::string>& goal_vocabulary();

}  // namespace poems::fuzz
