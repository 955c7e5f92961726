// The parser builds the AST the checks and later stages rely on.
#include <gtest/gtest.h>

#include "poems/psl/ast_json.h"
#include "poems/psl/frontend.h"

using namespace poems::psl;

namespace {
std::string sweep_path() { return std::string(POEMS_SOURCE_DIR) + "/examples/sweep3d/sweep3d.psl"; }

template <typename T>
const T& node(const StmtPtr& s) {
  return std::get<T>(s->node);
}
}  // namespace

TEST(Parser, Sweep3DSpecificationLoadsWithImports) {
  Frontend fe;
  ASSERT_TRUE(fe.load_files({sweep_path()}));
  const Program& p = fe.program();
  // machines.psl and mpi.psl come before the file that imports them.
  ASSERT_EQ(p.modules.size(), 3u);
  EXPECT_NE(p.modules[0].path.find("machines.psl"), std::string::npos);
  EXPECT_NE(p.modules[1].path.find("mpi.psl"), std::string::npos);
  EXPECT_EQ(p.model_count(), 1u);
  EXPECT_EQ(p.study_count(), 9u);
  EXPECT_TRUE(p.find_component("Odin"));
  EXPECT_TRUE(p.find_component("KBlock"));
  EXPECT_EQ(fe.diagnostics().warning_count(), 0u);
}

TEST(Parser, Sweep3DTaskGraphStructure) {
  Frontend fe;
  ASSERT_TRUE(fe.load_files({sweep_path()}));
  const ModelDecl* m = fe.program().find_model("Sweep3D");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->params.size(), 9u);
  EXPECT_EQ(m->params[0].name.name, "it_g");
  ASSERT_EQ(m->taskgraphs.size(), 1u);
  const StmtList& body = m->taskgraphs[0].body;
  ASSERT_EQ(body.size(), 2u);
  const auto& processes = node<ProcessesStmt>(body[0]);
  ASSERT_EQ(processes.set.dims.size(), 2u);
  EXPECT_EQ(processes.set.dims[1].name, "pj");
  const auto& iterations = node<ForStmt>(body[1]);
  EXPECT_EQ(iterations.variable.name, "its");
  ASSERT_EQ(iterations.body.size(), 2u);
  EXPECT_EQ(node<CollectiveStmt>(iterations.body[1]).operation.name, "allreduce");
  const auto& octants = node<ForStmt>(iterations.body[0]);
  const auto& angles = node<ForStmt>(octants.body[2]);
  const auto& kblocks = node<ForStmt>(angles.body[0]);
  ASSERT_EQ(kblocks.body.size(), 5u);
  const auto& recv = node<CommStmt>(kblocks.body[0]);
  EXPECT_EQ(recv.op, CommOp::Recv);
  EXPECT_EQ(recv.peer.kind, Peer::Kind::Index);
  EXPECT_EQ(recv.peer.index.size(), 2u);
  const auto& task = node<TaskStmt>(kblocks.body[2]);
  EXPECT_EQ(task.component.name, "KBlock");
  ASSERT_EQ(task.arguments.size(), 9u);  // cells, angles, the block's shape it, jt, mk, the column kt, mm, procs, bytes
  EXPECT_EQ(task.arguments[8].name.name, "working_set");
  EXPECT_EQ(task.arguments[6].name.name, "mm");
  EXPECT_EQ(task.arguments[1].name.name, "angles");
  EXPECT_EQ(task.arguments[4].name.name, "mk");
  EXPECT_EQ(node<CommStmt>(kblocks.body[4]).op, CommOp::Send);
}

TEST(Parser, ExpressionTreeAndLocations) {
  Frontend fe;
  fe.load_text("e.psl", "model M {\n  param x = 1 + 2 * 3 < 4 ? 5us : 6us;\n}\n");
  const ModelDecl* m = fe.program().find_model("M");
  ASSERT_TRUE(m);
  const Expr& e = *m->params[0].value;
  ASSERT_EQ(e.kind, ExprKind::Ternary);
  const Expr& cond = *e.operands[0];
  ASSERT_EQ(cond.kind, ExprKind::Compare);
  const Expr& sum = *cond.operands[0];
  ASSERT_EQ(sum.kind, ExprKind::Binary);
  EXPECT_EQ(sum.op, Op::Add);
  EXPECT_EQ(sum.operands[1]->op, Op::Mul);
  EXPECT_EQ(e.operands[1]->dimension, kTime);
  EXPECT_DOUBLE_EQ(e.operands[2]->number, 6000);
  // Locations are 1-based line and column of the token.
  EXPECT_EQ(sum.operands[0]->location.line, 2u);
  EXPECT_EQ(sum.operands[0]->location.column, 13u);
}

TEST(Parser, ComponentInterfaces) {
  Frontend fe;
  ASSERT_TRUE(fe.load_files({sweep_path()}));
  const ComponentDecl* kb = fe.program().find_component("KBlock");
  ASSERT_TRUE(kb);
  EXPECT_EQ(kb->domain.str(), "application[Sweep3D]");
  ASSERT_EQ(kb->accepts.size(), 1u);
  EXPECT_EQ(kb->accepts[0].profile[0].name.name, "node_type");
  EXPECT_EQ(kb->accepts[0].transaction->params[0].type.name, "int");
  ASSERT_EQ(kb->requests.size(), 1u);
  EXPECT_EQ(kb->requests[0].name->name, "cpu");
  EXPECT_EQ(kb->requests[0].protocol->name, "call_return");
  const TxParam& work = kb->requests[0].transaction->params[0];
  EXPECT_EQ(work.kind, TxParamKind::Coerced);
  EXPECT_EQ(work.value->op, Op::Mul);
  const ComponentDecl* mpi = fe.program().find_component("MPI_simulated");
  ASSERT_TRUE(mpi && mpi->implementation);
  EXPECT_EQ(mpi->implementation->str(), "simulation[MPI-Sim]");
}

TEST(Parser, StudyClauses) {
  Frontend fe;
  ASSERT_TRUE(fe.load_files({sweep_path()}));
  const StudyDecl* s = fe.program().find_study("latency");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->model->name, "Sweep3D");
  EXPECT_EQ(s->machine->name, "Odin");
  ASSERT_EQ(s->varies.size(), 2u);
  EXPECT_EQ(s->varies[0].targets[0].name, "Odin.L");
  ASSERT_EQ(s->varies[1].targets.size(), 2u);
  EXPECT_EQ(s->varies[1].values->operands.size(), 4u);
  ASSERT_EQ(s->compare.size(), 2u);
  EXPECT_EQ(s->compare[0].str(), "simulation[MPI-Sim]");
  EXPECT_EQ(s->report.size(), 4u);
}

TEST(Parser, SoftKeywordsAreNames) {
  Frontend fe;
  bool ok = fe.load_text("k.psl", R"(
component C in runtime[MPI] {
  accepts { profile { size = 1; } transaction send(tag: int, size: bytes) -> time; protocol call_return; }
})");
  EXPECT_TRUE(ok);
  EXPECT_EQ(fe.program().find_component("C")->accepts[0].transaction->name.name, "send");
}

TEST(Parser, JsonCarriesLocations) {
  Frontend fe;
  ASSERT_TRUE(fe.load_files({sweep_path()}));
  nlohmann::json j = to_json(fe.program(), fe.sources());
  ASSERT_EQ(j["modules"].size(), 3u);
  const auto& model = j["modules"][2]["models"][0];
  EXPECT_EQ(model["name"]["name"], "Sweep3D");
  EXPECT_EQ(model["name"]["location"]["line"], 7);
  EXPECT_EQ(model["taskgraphs"][0]["body"][0]["kind"], "processes");
  EXPECT_EQ(model["params"][0]["value"]["value"], 150.0);
}

TEST(Parser, RecoversAndReportsSeveralSyntaxErrors) {
  Frontend fe;
  EXPECT_FALSE(fe.load_text("s.psl", "model M {\n  param a = ;\n  param b = 2\n  param c = 3;\n}\n"));
  EXPECT_GE(fe.diagnostics().error_count(), 2u);
  for (const auto& d : fe.diagnostics().all()) EXPECT_TRUE(d.location.valid()) << d.message;
}

// `model NAME from trace "PATH";`: no taskgraph, the path as written and
// located (for errors about the archive), one parameter compute_scale = 1
// that studies may set and vary; a name other than `trace` after `from` is
// an error at that name.
TEST(Parser, ModelFromTrace) {
  Frontend fe;
  ASSERT_TRUE(fe.load_text("t.psl",
                           "model Run from trace \"run/traces.otf2\";\n"
                           "study s { model Run; vary compute_scale in [0.5, 2]; compare simulation[MPI-Sim]; }\n"));
  EXPECT_TRUE(fe.diagnostics().all().empty());
  const ModelDecl* m = fe.program().find_model("Run");
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->trace);
  EXPECT_EQ(m->trace->path, "run/traces.otf2");
  EXPECT_EQ(m->trace->kind.name, "trace");
  EXPECT_EQ(m->trace->location.line, 1u);
  EXPECT_EQ(m->trace->location.column, 22u);
  EXPECT_TRUE(m->taskgraphs.empty());
  ASSERT_EQ(m->params.size(), 1u);
  EXPECT_EQ(m->params[0].name.name, "compute_scale");
  EXPECT_EQ(m->params[0].value->number, 1.0);
  const nlohmann::json j = to_json(fe.program(), fe.sources());
  EXPECT_EQ(j.dump().find("\"path\":\"run/traces.otf2\"") != std::string::npos, true) << j.dump();

  Frontend bad;
  EXPECT_FALSE(bad.load_text("t.psl",
                             "model Run from goal \"x.goal\";\n"
                             "study s { model Run; vary mk in [1, 2]; compare simulation[MPI-Sim]; }\n"));
  ASSERT_EQ(bad.diagnostics().error_count(), 2u);
  EXPECT_EQ(bad.diagnostics().all()[0].location.column, 16u);
  EXPECT_NE(bad.diagnostics().all()[0].message.find("not from 'goal'"), std::string::npos);
  EXPECT_NE(bad.diagnostics().all()[1].message.find("'mk' is not a parameter of model 'Run'"), std::string::npos);
}
