#include "poems/taskgraph/comm_check.h"

#include "isl_context.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/val.h>

#include <cmath>
#include <map>

#include "poems/taskgraph/dtg.h"

namespace poems::taskgraph {

namespace {

// Reads a relation and fixes every parameter that has an integer default.
isl_map* read_relation(isl_ctx* ctx, const std::string& text, const StaticTaskGraph& g,
                       const std::vector<double>& defaults) {
  isl_map* m = isl_map_read_from_str(ctx, text.c_str());
  if (!m) return nullptr;
  for (int i = static_cast<int>(isl_map_dim(m, isl_dim_param)) - 1; i >= 0; --i) {
    const char* name = isl_map_get_dim_name(m, isl_dim_param, static_cast<unsigned>(i));
    if (!name || name[0] != '_') continue;
    std::string psl_name(name + 1);
    for (std::size_t s = 0; s < defaults.size(); ++s)
      if (g.slot_names[s] == psl_name && std::floor(defaults[s]) == defaults[s] && std::fabs(defaults[s]) < 1e15) {
        m = isl_map_fix_val(m, isl_dim_param, static_cast<unsigned>(i),
                            isl_val_int_from_si(ctx, static_cast<long>(defaults[s])));
        break;
      }
  }
  return m;
}

std::vector<long> sample(isl_map* m) {
  std::vector<long> out;
  const int n = static_cast<int>(isl_map_dim(m, isl_dim_in) + isl_map_dim(m, isl_dim_out));
  isl_point* p = isl_set_sample_point(isl_map_wrap(isl_map_copy(m)));
  if (!p) return out;
  for (int i = 0; i < n; ++i) {
    isl_val* v = isl_point_get_coordinate_val(p, isl_dim_set, i);
    out.push_back(v ? isl_val_get_num_si(v) : 0);
    isl_val_free(v);
  }
  isl_point_free(p);
  return out;
}

// "the message from process [1, 0] to [0, 0] with tag 0 at its = 1, iq = 0"
std::string describe(const std::vector<long>& point, std::size_t dims, const std::vector<std::string>& loops) {
  if (point.size() < 2 * dims + 2 * loops.size() + 1) return "";
  auto coords = [&](std::size_t from) {
    std::string s = "[";
    for (std::size_t k = 0; k < dims; ++k) s += (k ? ", " : "") + std::to_string(point[from + k]);
    return s + "]";
  };
  std::string s = "the message from process " + coords(0) + " to " + coords(dims + loops.size()) + " with tag " +
                  std::to_string(point.back());
  for (std::size_t k = 0; k < loops.size(); ++k)
    s += (k ? ", " : " at ") + loops[k] + " = " + std::to_string(point[dims + k]);
  return s;
}

std::vector<std::string> split_loops(const std::string& nest) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (!nest.empty() && start <= nest.size()) {
    std::size_t comma = nest.find(',', start);
    if (comma == std::string::npos) comma = nest.size();
    out.push_back(nest.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::optional<double> constant_size(const StaticTaskGraph& g, std::uint32_t node, const std::vector<double>& defaults) {
  std::vector<std::optional<double>> known(g.slot_count());
  for (std::size_t i = 0; i < defaults.size(); ++i) known[i] = defaults[i];
  for (const StgInstr& in : g.code)
    if (in.op == StgOp::Comm && in.node == node) {
      CompiledExpr s = in.size.specialize(known);
      if (s.is_constant()) return s.constant_value();
    }
  return std::nullopt;
}

}  // namespace

std::size_t check_communication(const StaticTaskGraph& g, psl::DiagnosticEngine& diags) {
  std::vector<double> defaults;
  try {
    defaults = evaluate_model_values(g, {});
  } catch (const std::exception&) {
    return 0;  // no usable defaults: nothing can be decided
  }
  IslContext isl;
  std::size_t errors = 0;
  // Group communication nodes by loop nest.
  std::map<std::string, std::vector<std::uint32_t>> groups;
  for (std::uint32_t i = 1; i < g.nodes.size(); ++i) {
    const StaticNode& n = g.nodes[i];
    if (n.kind == StaticNode::Kind::Send || n.kind == StaticNode::Kind::Recv) groups[n.loop_nest].push_back(i);
  }
  for (const auto& [nest, members] : groups) {
    isl_ctx_reset_operations(isl.ctx);
    bool decidable = true;
    std::map<std::uint32_t, isl_map*> rel;
    for (std::uint32_t i : members) {
      const StaticNode& n = g.nodes[i];
      isl_map* m = n.wildcard || n.messages.empty() ? nullptr : read_relation(isl.ctx, n.messages, g, defaults);
      if (!m) decidable = false;
      rel[i] = m;
    }
    if (decidable) {
      isl_map* sends = nullptr;
      isl_map* recvs = nullptr;
      for (std::uint32_t i : members) {
        isl_map*& acc = g.nodes[i].kind == StaticNode::Kind::Send ? sends : recvs;
        acc = acc ? isl_map_union(acc, isl_map_copy(rel[i])) : isl_map_copy(rel[i]);
      }
      const std::vector<std::string> loops = split_loops(nest);
      const std::size_t dims = g.process_dims.size();
      for (std::uint32_t i : members) {
        const StaticNode& n = g.nodes[i];
        bool is_send = n.kind == StaticNode::Kind::Send;
        isl_map* other = is_send ? recvs : sends;
        isl_map* unmatched = other ? isl_map_subtract(isl_map_copy(rel[i]), isl_map_copy(other)) : isl_map_copy(rel[i]);
        if (unmatched && isl_map_is_empty(unmatched) == isl_bool_false) {
          std::string example = describe(sample(unmatched), dims, loops);
          auto& d =
              diags.error(n.source, std::string(is_send ? "send has no matching recv" : "recv has no matching send") +
                                        (example.empty() ? "" : " for " + example));
          for (std::uint32_t j : members)
            if (g.nodes[j].kind != n.kind)
              psl::DiagnosticEngine::note(
                  d, g.nodes[j].source, std::string(is_send ? "a recv" : "a send") + " in the same loop nest is here");
          ++errors;
        }
        isl_map_free(unmatched);
        // Sizes of matching pairs must agree.
        if (!is_send) continue;
        for (std::uint32_t j : members) {
          if (g.nodes[j].kind != StaticNode::Kind::Recv) continue;
          isl_map* both = isl_map_intersect(isl_map_copy(rel[i]), isl_map_copy(rel[j]));
          bool overlap = both && isl_map_is_empty(both) == isl_bool_false;
          isl_map_free(both);
          if (!overlap) continue;
          auto a = constant_size(g, i, defaults), b = constant_size(g, j, defaults);
          if (a && b && *a != *b) {
            auto& d = diags.error(n.source, "send of " + std::to_string(static_cast<long long>(*a)) +
                                                " bytes is matched by a recv of " +
                                                std::to_string(static_cast<long long>(*b)) + " bytes");
            psl::DiagnosticEngine::note(d, g.nodes[j].source, "the matching recv is here");
            ++errors;
          }
        }
      }
      isl_map_free(sends);
      isl_map_free(recvs);
    }
    if (isl.over_budget()) {
      // Undecided, like a nest with wildcards: a warning, not a verdict.
      diags.warning(g.nodes[members.front()].source,
                    "the communication of this loop nest was not checked: isl gave up after " +
                        std::to_string(isl_ctx_get_max_operations(isl.ctx)) +
                        " operations (raise the limit with --limit isl-operations=N)");
      isl_ctx_reset_error(isl.ctx);
    }
    for (auto& [i, m] : rel) isl_map_free(m);
  }
  return errors;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> matching_nodes(const StaticTaskGraph& g) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  std::vector<double> defaults;
  try {
    defaults = evaluate_model_values(g, {});
  } catch (const std::exception&) {
    return out;
  }
  IslContext isl;
  for (std::uint32_t i = 1; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != StaticNode::Kind::Send || g.nodes[i].messages.empty()) continue;
    isl_map* s = read_relation(isl.ctx, g.nodes[i].messages, g, defaults);
    for (std::uint32_t j = 1; s && j < g.nodes.size(); ++j) {
      const StaticNode& r = g.nodes[j];
      if (r.kind != StaticNode::Kind::Recv || r.messages.empty() || r.loop_nest != g.nodes[i].loop_nest) continue;
      isl_map* m = read_relation(isl.ctx, r.messages, g, defaults);
      isl_map* both = m ? isl_map_intersect(isl_map_copy(s), m) : nullptr;
      if (both && isl_map_is_empty(both) == isl_bool_false) out.push_back({i, j});
      isl_map_free(both);
    }
    isl_map_free(s);
  }
  return out;
}

std::size_t check_program_communication(const psl::Program& program, const psl::SourceManager& sources,
                                        psl::DiagnosticEngine& diags) {
  std::size_t errors = 0;
  for (const psl::Module& m : program.modules)
    for (const psl::ModelDecl& model : m.models)
      for (const psl::TaskGraphDecl& tg : model.taskgraphs) {
        try {
          errors += check_communication(lower(program, sources, model, tg), diags);
        } catch (const std::exception& e) {
          diags.error(tg.name.location, std::string("cannot lower taskgraph '") + tg.name.name + "': " + e.what());
          ++errors;
        }
      }
  return errors;
}

}  // namespace poems::taskgraph
