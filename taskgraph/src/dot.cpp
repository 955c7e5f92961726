#include "poems/taskgraph/dot.h"

#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>

#include "poems/taskgraph/comm_check.h"

namespace poems::taskgraph {

namespace {
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}
}  // namespace

void write_static_dot(const StaticTaskGraph& g, std::ostream& out) {
  out << "digraph " << quote(g.model + "." + g.name) << " {\n"
      << "  rankdir=TB; compound=true; node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
      << "  label=" << quote("static task graph of " + g.model + ": processes " + g.process_set_source)
      << "; labelloc=t; fontsize=12;\n";
  struct Open {
    std::size_t close_at;
  };
  std::vector<Open> open;
  std::string indent = "  ";
  std::uint32_t previous = 0;
  std::size_t clusters = 0;
  auto close_until = [&](std::size_t pc) {
    while (!open.empty() && open.back().close_at <= pc) {
      open.pop_back();
      indent.resize(indent.size() - 2);
      out << indent << "}\n";
    }
  };
  auto open_cluster = [&](const std::string& label, std::size_t close_at, const char* style) {
    out << indent << "subgraph cluster_" << clusters++ << " {\n"
        << indent << "  label=" << quote(label) << "; style=" << style << ";\n";
    indent += "  ";
    open.push_back({close_at});
  };
  std::map<std::size_t, std::size_t> else_parts;  // else start -> end
  for (std::size_t pc = 0; pc < g.code.size(); ++pc) {
    close_until(pc);
    if (auto e = else_parts.find(pc); e != else_parts.end()) open_cluster("else", e->second, "dashed");
    const StgInstr& in = g.code[pc];
    switch (in.op) {
      case StgOp::LoopBegin: open_cluster(in.text, in.target, "rounded"); break;
      case StgOp::Branch: {
        std::size_t end = in.target;
        if (end > 0 && g.code[end - 1].op == StgOp::Jump) else_parts[end] = g.code[end - 1].target;
        open_cluster(in.text, end, "dashed");
        break;
      }
      case StgOp::Comm:
      case StgOp::Compute:
      case StgOp::Collective: {
        const StaticNode& n = g.nodes[in.node];
        const char* shape = n.kind == StaticNode::Kind::Compute      ? "box"
                            : n.kind == StaticNode::Kind::Collective ? "hexagon"
                                                                     : "ellipse";
        out << indent << "n" << in.node << " [shape=" << shape << ", label=" << quote(n.text + "\n" + n.location)
            << "];\n";
        if (previous) out << indent << "n" << previous << " -> n" << in.node << ";\n";
        previous = in.node;
        break;
      }
      default: break;
    }
  }
  close_until(g.code.size());
  for (const auto& [send, recv] : matching_nodes(g))
    out << "  n" << send << " -> n" << recv << " [style=dashed, color=red, constraint=false, label=\"message\"];\n";
  out << "}\n";
}

void write_dynamic_dot(ScheduleSource& source, std::ostream& out, std::size_t max_ops) {
  std::vector<OpBuffer> ranks(source.ranks());
  std::size_t total = 0;
  for (std::uint32_t r = 0; r < source.ranks(); ++r) {
    while (source.pull(r, 1024, ranks[r]) > 0) {
      if (ranks[r].ops.size() + total > max_ops)
        throw std::length_error("the dynamic task graph has more than " + std::to_string(max_ops) +
                                " operations; draw a smaller binding");
    }
    total += ranks[r].ops.size();
  }
  out << "digraph dynamic {\n  rankdir=TB; node [shape=box, fontname=\"Helvetica\", fontsize=9];\n";
  // Messages: each receive takes the oldest matching send, as MPI matching does.
  std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::uint32_t>, std::deque<std::string>> pending;
  for (std::uint32_t r = 0; r < ranks.size(); ++r) {
    out << "  subgraph cluster_rank" << r << " {\n    label=\"rank " << r << "\";\n";
    const OpBuffer& b = ranks[r];
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const Operation& op = b.ops[i];
      std::string id = "r" + std::to_string(r) + "_" + std::to_string(i);
      std::string label = op.kind == OpKind::Calc ? "calc " + std::to_string(op.duration / kPsPerNs) + "ns"
                          : op.kind == OpKind::Send
                              ? "send " + std::to_string(op.bytes) + "B to " + std::to_string(op.peer)
                              : "recv " + std::to_string(op.bytes) + "B from " +
                                    (op.peer == kAnySource ? "any" : std::to_string(op.peer));
      if (op.kind != OpKind::Calc) label += " tag " + (op.tag == kAnyTag ? std::string("any") : std::to_string(op.tag));
      if (const std::string node = source.node_info(op.node).label; !node.empty()) label += "\n" + node;
      out << "    " << id << " [label=" << quote(label) << "];\n";
      for (std::uint32_t k = 0; k < op.dep_count; ++k) {
        const Dependency& d = b.deps[op.first_dep + k];
        out << "    r" << r << "_" << d.op << " -> " << id << (d.on_start ? " [style=dotted]" : "") << ";\n";
      }
      if (op.kind == OpKind::Send) pending[{static_cast<std::int32_t>(r), op.peer, op.tag, op.comm}].push_back(id);
    }
    out << "  }\n";
  }
  for (std::uint32_t r = 0; r < ranks.size(); ++r) {
    const OpBuffer& b = ranks[r];
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const Operation& op = b.ops[i];
      if (op.kind != OpKind::Recv || op.peer == kAnySource || op.tag == kAnyTag) continue;
      auto it = pending.find({op.peer, static_cast<std::int32_t>(r), op.tag, op.comm});
      if (it == pending.end() || it->second.empty()) continue;
      out << "  " << it->second.front() << " -> r" << r << "_" << i << " [color=red, constraint=false];\n";
      it->second.pop_front();
    }
  }
  out << "}\n";
}

}  // namespace poems::taskgraph
