#include "poems/core/compute_rates.h"

#include <stdexcept>

#include "poems/core/error.h"
#include "poems/processor/processor_model.h"

namespace poems::core {

namespace {

bool same_place(const psl::SourceLocation& a, const psl::SourceLocation& b) {
  return a.valid() && a.file == b.file && a.line == b.line && a.column == b.column;
}

const psl::TaskStmt* find_task(const psl::StmtList& body, const psl::SourceLocation& at) {
  for (const psl::StmtPtr& s : body) {
    if (const auto* t = std::get_if<psl::TaskStmt>(&s->node))
      if (same_place(s->location, at)) return t;
    const psl::TaskStmt* found = nullptr;
    if (const auto* f = std::get_if<psl::ForStmt>(&s->node)) found = find_task(f->body, at);
    if (const auto* b = std::get_if<psl::IfStmt>(&s->node)) {
      found = find_task(b->then_body, at);
      if (!found) found = find_task(b->else_body, at);
    }
    if (found) return found;
  }
  return nullptr;
}

}  // namespace

ProcessorTask compute_task(const psl::Program& program, const psl::SystemModel& system, const Ted& ted,
                           const taskgraph::StaticTaskGraph& graph, const std::vector<double>& model_values) {
  // Model-level names (parameters, then lets) for the task's arguments.
  std::map<std::string, psl::Value> scope;
  for (std::uint32_t i = 0; i < graph.model_slot_count() && i < model_values.size(); ++i)
    scope[graph.slot_names[i]] = psl::Value::of_number(model_values[i]);
  auto lookup = [&](std::string_view n) -> const psl::Value* {
    auto it = scope.find(std::string(n));
    return it == scope.end() ? nullptr : &it->second;
  };
  const psl::ModelDecl* model = program.find_model(graph.model);
  const taskgraph::StaticNode& node = graph.nodes.at(ted.node);
  const psl::TaskStmt* task =
      model && !model->taskgraphs.empty() ? find_task(model->taskgraphs.front().body, node.source) : nullptr;
  if (!task || node.label.find('+') != std::string::npos)
    throw InputError("node " + node.text + ": " + ted.evaluator +
                     " times one task; this node is not a single task statement");
  std::map<std::string, psl::Value> args;
  ProcessorTask request;
  request.component = node.component;
  for (const psl::Binding& a : task->arguments) {
    psl::EvalResult v = psl::evaluate(*a.value, lookup);
    if (!v.value || v.value->kind != psl::Value::Kind::Number)
      throw InputError("node " + node.text + ": argument '" + a.name.name + "' must be known per binding for " +
                       ted.evaluator + (v.value ? "" : " (" + v.error + ")"));
    args[a.name.name] = *v.value;
    request.params[a.name.name] = v.value->number;
  }
  const std::size_t app = system.find(node.component);
  const psl::InterfaceBinding* b = app == psl::kNoInstance ? nullptr : system.request_of(app);
  if (b) {
    request.transaction = b->transaction;
    for (const auto& [k, v] : psl::bind_arguments(system, *b, args))
      if (v.kind == psl::Value::Kind::Number) request.params[k] = v.number;
  }
  auto work = request.params.find("work");
  if (work == request.params.end() || work->second <= 0)
    throw InputError("node " + node.text + ": " + ted.evaluator + " needs a positive 'work'");
  return request;
}

ComputeRates compute_rates(const psl::Program& program, const psl::SystemModel& system, const EvaluationPlan& plan,
                           const taskgraph::StaticTaskGraph& graph, const std::vector<double>& model_values,
                           ProcessorModels& models) {
  ComputeRates rates;
  bool first = true;
  for (const Ted& ted : plan.teds) {
    if (ted.kind != "compute") continue;
    const taskgraph::StaticNode& node = graph.nodes.at(ted.node);
    double rate = 0;
    nlohmann::json entry = {{"node", ted.node}, {"evaluator", ted.evaluator}};
    auto wg = ted.parameters.find("Wg");
    if (ted.evaluator == "processor[wg]" && (ted.implicit || wg == ted.parameters.end())) {
      rate = -1;  // the run's default Wg (no processor composed for this node)
    } else if (ted.evaluator == "processor[wg]") {
      if (wg->second.kind != psl::Value::Kind::Number || wg->second.dimension != psl::kTime)
        throw InputError("node " + node.text + ": Wg of " + ted.chain.back() + " must be a time, e.g. 60ns");
      rate = wg->second.number;
    } else {
      // Time one task instance of the node at this binding.
      const ProcessorTask request = compute_task(program, system, ted, graph, model_values);
      const double work = request.params.at("work");
      double t = 0;
      try {
        t = models.task_time_ns(ted, request);
      } catch (const processor::ProcessorError& e) {
        throw EvaluationError("node " + node.text + ": " + e.what());
      }
      rate = t / work;
      entry["task_ns"] = t;
      entry["work"] = work;
    }
    entry["ns_per_work"] = rate;
    rates.report.push_back(entry);
    if (rate >= 0) rates.ns_per_work[ted.node] = rate;
    if (first) rates.main_ns_per_work = rate;
    first = false;
  }
  return rates;
}

}  // namespace poems::core
