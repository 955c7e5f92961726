// The PSL abstract syntax tree. Plain data with source locations; built by the
// parser (ANTLR types never appear here) and read by checks and later stages.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "poems/base/source.h"
#include "poems/base/units.h"

namespace poems::psl {

struct Identifier {
  std::string name;  // may be dotted ("Odin.L", "study.compute")
  SourceLocation location;
};

// `head[path]`: a domain (`hardware[network]`) or a paradigm (`simulation[MPI-Sim]`).
struct QualifiedRef {
  std::string head;
  std::string path;  // empty for a bare domain such as `runtime`
  SourceLocation location;
  std::string str() const { return path.empty() ? head : head + "[" + path + "]"; }
};

// ------------------------------------------------------------ expressions
enum class ExprKind {
  Number,   // number / dimension
  String,   // text
  Bool,     // boolean
  Name,     // text (possibly dotted)
  Ref,      // ref
  Unary,    // op, operands[0]
  Binary,   // op, operands[0..1]
  Compare,  // compare_ops[i] between operands[i] and operands[i+1] (chained: conjunction)
  Logical,  // op (And/Or), operands (two or more)
  Not,      // operands[0]
  Ternary,  // operands[0] ? operands[1] : operands[2]
  Call,     // text = function, operands = arguments
  Tuple,    // (a, b, ...)
  List,     // [a, b, ...]
  Invalid,  // a malformed literal already reported
};

enum class Op { Add, Sub, Mul, Div, Mod, Neg, Plus, Not, And, Or, Lt, Le, Gt, Ge, Eq, Ne };
const char* op_spelling(Op op);

struct Expr {
  Expr() = default;
  Expr(Expr&&) = default;
  Expr& operator=(Expr&&) = default;
  // Frees its operands without recursion: a chain of 10^6 operators cannot
  // overflow the stack when it goes away.
  ~Expr();

  ExprKind kind = ExprKind::Invalid;
  SourceLocation location;
  double number = 0;
  Dimension dimension;
  bool boolean = false;
  std::string text;
  QualifiedRef ref;
  Op op = Op::Add;
  std::vector<Op> compare_ops;
  std::vector<std::unique_ptr<Expr>> operands;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Binding {
  Identifier name;
  ExprPtr value;
};

// --------------------------------------------------- symbolic sets and maps
// `{ [i, j] : constraint }`; the constraint is a PSL expression handed to isl.
struct IntegerSet {
  SourceLocation location;
  std::vector<Identifier> dims;
  ExprPtr constraint;  // may be null
};

// `{ [i, j] -> [f(i,j), g(i,j)] : constraint }`.
struct IntegerMap {
  SourceLocation location;
  std::vector<Identifier> in_dims;
  std::vector<ExprPtr> out;
  ExprPtr constraint;  // may be null
};

// ------------------------------------------------------ task-graph statements
struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

struct ProcessesStmt {
  IntegerSet set;
};
struct LetStmt {
  std::vector<Binding> bindings;
};
struct ForStmt {
  Identifier variable;
  ExprPtr first, last, step;  // inclusive range; step may be null (1)
  StmtList body;
};
struct IfStmt {
  ExprPtr condition;
  StmtList then_body;
  StmtList else_body;
};

enum class CommOp { Send, Recv, Isend, Irecv };
const char* comm_op_spelling(CommOp op);

struct Peer {
  enum class Kind { Index, Map, Any };
  Kind kind = Kind::Index;
  SourceLocation location;
  std::vector<ExprPtr> index;  // Kind::Index: coordinates in the process set
  std::optional<IntegerMap> map;
};

struct CommStmt {
  CommOp op = CommOp::Send;
  Peer peer;
  ExprPtr size;  // bytes (a bare number means bytes)
  ExprPtr tag;   // null with tag_any false: tag 0
  bool tag_any = false;
  std::optional<Identifier> communicator;
};

struct TaskStmt {
  Identifier name;
  Identifier component;
  std::vector<Binding> arguments;
};

struct WaitAllStmt {};

struct CollectiveStmt {
  Identifier operation;  // barrier, bcast, reduce, allreduce, gather, scatter, allgather, alltoall
  ExprPtr size;
  ExprPtr root;
  std::optional<Identifier> algorithm;
  std::optional<Identifier> communicator;
};

struct Stmt {
  SourceLocation location;
  std::variant<ProcessesStmt, LetStmt, ForStmt, IfStmt, CommStmt, TaskStmt, WaitAllStmt, CollectiveStmt> node;
};

// ------------------------------------------------------------- declarations
struct TaskGraphDecl {
  Identifier name;
  SourceLocation location;
  StmtList body;
};

// `model NAME from trace "PATH";`: an OTF2 archive replayed as the task graph.
struct TraceSource {
  Identifier kind;          // the name after 'from' ("trace")
  std::string path;         // as written, relative to the file
  SourceLocation location;  // of the string
};

// `program { ... }` in a model, `kernel { ... }` in an application component:
// a real program attached to the specification (docs/psl.md, "Programs and
// kernels"). Entries are `name = expr;`; which names mean what is checked later.
struct AttachedCommand {
  SourceLocation location;
  std::vector<Binding> entries;  // in order
  const Binding* find(std::string_view name) const;
};

struct ModelDecl {
  Identifier name;
  SourceLocation location;
  std::optional<TraceSource> trace;  // a model from a trace: no taskgraph, the parameter compute_scale
  std::vector<Binding> params;       // in declaration order
  std::vector<Binding> lets;         // model-level derived values, in order
  std::vector<TaskGraphDecl> taskgraphs;
  std::optional<AttachedCommand> program;  // its real program, if attached
};

enum class TxParamKind { Typed, Coerced, Forwarded };

struct TxParam {
  Identifier name;
  TxParamKind kind = TxParamKind::Typed;
  Identifier type;  // Typed
  ExprPtr value;    // Coerced
};

struct Transaction {
  Identifier name;
  SourceLocation location;
  std::vector<TxParam> params;
  std::optional<Identifier> result_type;
};

struct ProfileEntry {
  Identifier name;
  ExprPtr value;
};

enum class InterfaceKind { Accepts, Requests };

// One `accepts { ... }` or `requests NAME { ... }` block.
struct Interface {
  InterfaceKind kind = InterfaceKind::Accepts;
  std::optional<Identifier> name;
  SourceLocation location;
  std::optional<SourceLocation> profile_location;
  std::vector<ProfileEntry> profile;  // accepts only
  ExprPtr selector;                   // requests only
  std::optional<Transaction> transaction;
  std::optional<Identifier> protocol;  // dataflow | call_return
};

struct ComponentDecl {
  Identifier name;
  SourceLocation location;
  QualifiedRef domain;  // application[Ring], runtime[MPI], hardware[network]
  std::vector<Binding> params;
  std::vector<Interface> accepts;
  std::vector<Interface> requests;
  std::optional<QualifiedRef> implementation;
  std::optional<AttachedCommand> kernel;  // application components: the command that times a task
};

struct VaryClause {
  SourceLocation location;
  std::vector<Identifier> targets;  // one name, or a tuple of names
  bool is_range = false;
  ExprPtr first, last, step;  // range (inclusive; step may be null)
  ExprPtr values;             // list of values or of tuples
};

struct StudyDecl {
  Identifier name;
  SourceLocation location;
  std::optional<Identifier> model;
  std::optional<Identifier> machine;
  std::vector<Binding> settings;  // `set name = value` (names may be dotted)
  std::vector<VaryClause> varies;
  // `where EXPR;`: the bindings kept are those where every constraint holds.
  std::vector<ExprPtr> constraints;
  std::vector<QualifiedRef> compare;
  std::vector<Identifier> report;
};

struct ImportDecl {
  std::string path;  // as written
  SourceLocation location;
};

// One parsed file.
struct Module {
  FileId file = kNoFile;
  std::string path;
  std::vector<ImportDecl> imports;
  std::vector<ModelDecl> models;
  std::vector<ComponentDecl> components;
  std::vector<StudyDecl> studies;
};

// Every file of a run, dependencies before the files that import them.
struct Program {
  std::vector<Module> modules;

  const ModelDecl* find_model(std::string_view name) const;
  const ComponentDecl* find_component(std::string_view name) const;
  const StudyDecl* find_study(std::string_view name) const;
  // "file:line:col" of a location in one of the modules ("" if none holds it).
  std::string location_text(SourceLocation at) const;
  std::size_t model_count() const;
  std::size_t component_count() const;
  std::size_t study_count() const;
};

}  // namespace poems::psl

namespace poems::psl {
// The expression as PSL source text (fully parenthesized where needed).
std::string to_source(const Expr& e);
// The elements of a list expression `[a, b, ...]`, or the expression itself.
std::vector<const Expr*> list_items(const Expr& e);
}  // namespace poems::psl
