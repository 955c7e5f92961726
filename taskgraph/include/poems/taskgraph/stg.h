// The static task graph (POEMS paper 3.2.3, 4.1): the application as static
// nodes (compute tasks with scaling functions, sends, receives, collectives)
// inside loops and branches, each node with its symbolic instance set and
// each communication with its symbolic peer relation (isl notation, the
// model's parameters as isl parameters). For evaluation it is also lowered to
// a compact program of control instructions over compiled expressions, which
// instantiation specializes for a parameter binding.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "poems/psl/ast.h"
#include "poems/taskgraph/collectives.h"
#include "poems/taskgraph/compiled_expr.h"

namespace poems::taskgraph {

struct StaticNode {
  enum class Kind { Compute, Send, Recv, Collective };
  Kind kind = Kind::Compute;
  bool nonblocking = false;     // isend / irecv
  std::string label;            // task name, "send", "recv", collective name
  std::string text;             // the statement as written (for DOT and reports)
  std::string location;         // "file:line:col"
  std::string component;        // Compute: the application component it is bound to
  std::string work;             // Compute: scaling function, as written (sum after condensation)
  std::string size, tag, root;  // Send/Recv/Collective: those expressions as written ("" if absent)
  std::string instances;        // isl set: process coordinates x enclosing loop variables
  std::string messages;         // Send/Recv: isl map [sender, loops] -> [receiver, loops, tag] ("" if not affine)
  std::string loop_nest;        // enclosing loop variables, outermost first, e.g. "its,iq,mo,kk"
  psl::SourceLocation source;   // where the node is written
  bool wildcard = false;        // Recv from any source or with any tag: excluded from static matching
  CollectiveOp collective = CollectiveOp::Barrier;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Dissemination;
};

enum class StgOp : std::uint8_t {
  Let,
  LoopBegin,
  LoopEnd,
  Branch,
  Jump,
  Comm,
  Compute,
  Collective,
  WaitAll,
  End,
  PeerRank,  // instantiation only: a message's peer rank and tag, hoisted out of loops that do not change them
};

// One instruction of the lowered program. Loops are inclusive ranges: the
// variable, its limit and its step live in slots.
struct StgInstr {
  StgOp op = StgOp::End;
  std::uint32_t node = 0;          // Comm / Compute / Collective: index into nodes
  std::uint32_t slot = 0;          // Let target; loop variable
  std::uint32_t limit_slot = 0;    // loop limit
  std::uint32_t step_slot = 0;     // loop step
  std::uint32_t target = 0;        // LoopBegin: pc after the loop; LoopEnd: loop body; Branch: else; Jump
  CompiledExpr value;              // Let value; loop first; Branch condition; Compute work; Collective root
  CompiledExpr last, step;         // loop last and step
  CompiledExpr size, tag;          // Comm / Collective
  std::vector<CompiledExpr> peer;  // Comm: peer coordinates (empty: any source)
  CompiledExpr peer_guard;         // Comm with an isl map peer: its constraint (empty: always)
  bool tag_any = false;
  std::string text;                      // LoopBegin / Branch: the header as written
  std::string location;                  // LoopBegin: "file:line:col" of the loop
  std::uint32_t peer_slot = UINT32_MAX;  // Comm: peer rank (and tag at +1) precomputed by a PeerRank
  bool is_send = false;                  // Comm: copied from the node, so the hot loop never looks it up
  bool nonblocking = false;              // Comm
};

class StaticTaskGraph {
 public:
  std::string model;
  std::string name;
  std::vector<std::string> slot_names;
  // Model parameters occupy slots [0, params.size()), model lets the next ones;
  // both are compiled over earlier slots so a binding can re-derive them.
  std::vector<std::string> params;
  std::vector<CompiledExpr> param_defaults;
  std::vector<CompiledExpr> model_lets;
  std::vector<std::string> model_let_text;      // each let as written ("" for one that is not a number)
  std::vector<std::string> model_let_location;  // "file:line:col"
  std::vector<std::uint32_t> process_dims;      // slots of the process coordinates
  std::string process_set;                      // isl text, PSL names prefixed with '_'
  std::string process_set_source;               // as written in PSL
  std::string process_set_location;             // "file:line:col" of the process set
  std::vector<std::string> process_set_params;
  std::vector<StaticNode> nodes{StaticNode{}};  // nodes[0] is "none"
  std::vector<StgInstr> code;

  std::uint32_t slot_count() const { return static_cast<std::uint32_t>(slot_names.size()); }
  std::uint32_t model_slot_count() const { return static_cast<std::uint32_t>(params.size() + model_lets.size()); }
};

struct LowerOptions {
  // Merge consecutive compute tasks of a block into one whose scaling
  // function is the sum (POEMS paper 4.1).
  bool condense = true;
};

// Lowers a checked model's task graph. Throws std::runtime_error with a
// "file:line:col: message" text on constructs it cannot lower.
StaticTaskGraph lower(const psl::Program& program, const psl::SourceManager& sources, const psl::ModelDecl& model,
                      const psl::TaskGraphDecl& graph, const LowerOptions& options = {});

// Finds the model (or the only one) and its first task graph and lowers it.
StaticTaskGraph lower_model(const psl::Program& program, const psl::SourceManager& sources,
                            const std::string& model_name, const LowerOptions& options = {});

}  // namespace poems::taskgraph
