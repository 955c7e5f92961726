// Bridges the ANTLR-generated parser to the PSL AST. This is the only file
// that sees ANTLR types; everything it produces is plain AST data.
#include "parse.h"

#include <antlr4-runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "PslLexer.h"
#include "PslParser.h"

namespace poems::psl {

namespace {

using gen = poems_psl_gen::PslParser;
using poems_psl_gen::PslLexer;

std::string display_token(const std::string& text) {
  if (text == "<EOF>") return "end of file";
  return "'" + text + "'";
}

// Rewrites ANTLR's wording into the project's ("unexpected 'x'; expected ';'").
std::string rewrite_message(const std::string& msg) {
  auto replace_eof = [](std::string s) {
    for (std::size_t p; (p = s.find("'<EOF>'")) != std::string::npos;) s.replace(p, 7, "end of file");
    for (std::size_t p; (p = s.find("<EOF>")) != std::string::npos;) s.replace(p, 5, "end of file");
    return s;
  };
  auto shorten_set = [](std::string expected) {
    // "{'a', 'b', ...}" -> "one of 'a', 'b', ..." capped at eight entries.
    if (expected.size() < 2 || expected.front() != '{') return expected;
    std::string inner = expected.substr(1, expected.size() - 2);
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= inner.size()) {
      std::size_t comma = inner.find(", ", start);
      if (comma == std::string::npos) comma = inner.size();
      items.push_back(inner.substr(start, comma - start));
      start = comma + 2;
    }
    std::string out = "one of ";
    for (std::size_t i = 0; i < items.size() && i < 8; ++i) out += (i ? ", " : "") + items[i];
    if (items.size() > 8) out += ", ... (" + std::to_string(items.size() - 8) + " more)";
    return out;
  };
  // When a name is allowed, the soft keywords make the list long and useless.
  auto name_or_set = [&](std::string expected) {
    if (expected.find(", ID") != std::string::npos || expected.find("{ID,") != std::string::npos) {
      std::size_t entries = std::count(expected.begin(), expected.end(), ',') + 1;
      if (entries > 8) return std::string("a name");
    }
    return shorten_set(expected);
  };
  const std::string mismatched = "mismatched input ";
  const std::string extraneous = "extraneous input ";
  const std::string missing = "missing ";
  const std::string noviable = "no viable alternative at input ";
  for (const std::string* prefix : {&mismatched, &extraneous}) {
    if (msg.rfind(*prefix, 0) == 0) {
      std::size_t exp = msg.find(" expecting ");
      if (exp != std::string::npos) {
        std::string got = msg.substr(prefix->size(), exp - prefix->size());
        std::string want = msg.substr(exp + 11);
        return replace_eof("unexpected " + got + "; expected " + name_or_set(want));
      }
    }
  }
  if (msg.rfind(missing, 0) == 0) {
    std::size_t at = msg.find(" at ");
    if (at != std::string::npos)
      return replace_eof("expected " + name_or_set(msg.substr(missing.size(), at - missing.size())) + " before " +
                         msg.substr(at + 4));
  }
  if (msg.rfind(noviable, 0) == 0) {
    std::string input = msg.substr(noviable.size());
    // ANTLR quotes the whole span it tried; the last token is what went wrong.
    if (input.size() > 2 && input.front() == '\'' && input.back() == '\'') input = input.substr(1, input.size() - 2);
    std::size_t cut = input.find_last_of(" \t\n");
    std::string last = cut == std::string::npos ? input : input.substr(cut + 1);
    return replace_eof("syntax error at " + display_token(last));
  }
  return replace_eof(msg);
}

SourceLocation token_location(FileId file, const antlr4::Token* t) {
  if (t == nullptr) return {file, 0, 0, 1};
  SourceLocation loc{file, static_cast<std::uint32_t>(t->getLine()),
                     static_cast<std::uint32_t>(t->getCharPositionInLine() + 1), 1};
  if (t->getType() != antlr4::Token::EOF && t->getStopIndex() >= t->getStartIndex() &&
      t->getStartIndex() != INVALID_INDEX)
    loc.length = static_cast<std::uint32_t>(t->getStopIndex() - t->getStartIndex() + 1);
  return loc;
}

// Thrown out of the parser once a file has had enough syntax errors: error
// recovery can nest statement in statement (`if if if ...`), and ANTLR's
// recovery walks the whole rule stack at each error, so thousands of errors
// would cost quadratic time and a deep stack.
struct ParseAborted {};

class SyntaxErrorListener : public antlr4::BaseErrorListener {
 public:
  SyntaxErrorListener(FileId file, DiagnosticEngine& diags, std::size_t limit)
      : file_(file), diags_(diags), limit_(limit) {}

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, size_t line, size_t column,
                   const std::string& msg, std::exception_ptr) override {
    if (count_ >= limit_) throw ParseAborted{};
    SourceLocation loc{file_, static_cast<std::uint32_t>(line), static_cast<std::uint32_t>(column + 1), 1};
    if (offending != nullptr) loc = token_location(file_, offending);
    // A ';' missing at the end of a line: say so, right after the previous
    // token, as compilers do, instead of complaining about the next line.
    if ((msg.rfind("mismatched input ", 0) == 0 || msg.rfind("extraneous input ", 0) == 0) &&
        msg.find("';'", msg.find(" expecting ")) != std::string::npos) {
      if (auto* parser = dynamic_cast<antlr4::Parser*>(recognizer)) {
        const antlr4::Token* prev = parser->getTokenStream()->LT(-1);
        if (prev != nullptr && offending != nullptr && prev->getLine() < offending->getLine() &&
            prev->getText().find('\n') == std::string::npos) {
          SourceLocation p = token_location(file_, prev);
          diags_.error({file_, p.line, p.column + p.length, 1}, "expected ';' after '" + prev->getText() + "'");
          ++count_;
          return;
        }
      }
    }
    // "expected ';'" is clearer right after the previous token, as compilers do.
    if (msg.rfind("missing ", 0) == 0) {
      if (auto* parser = dynamic_cast<antlr4::Parser*>(recognizer)) {
        const antlr4::Token* prev = parser->getTokenStream()->LT(-1);
        if (prev != nullptr && prev->getType() != antlr4::Token::EOF) {
          SourceLocation p = token_location(file_, prev);
          std::string text = prev->getText();
          std::size_t newline = text.rfind('\n');
          if (newline == std::string::npos) loc = {file_, p.line, p.column + p.length, 1};
        }
      }
    }
    if (loc.line == 0) loc.line = 1;
    if (loc.column == 0) loc.column = 1;
    const std::size_t index = diags_.all().size();
    diags_.error(loc, rewrite_message(msg));
    // Only a diagnostic that was kept (below --max-errors) can take a note later.
    if (offending != nullptr && offending->getType() == antlr4::Token::EOF && !at_eof_ && diags_.all().size() > index)
      at_eof_ = index;
    ++count_;
  }
  std::size_t count() const { return count_; }
  // Index of the first diagnostic reported at end of file, if any.
  std::optional<std::size_t> at_eof() const { return at_eof_; }

 private:
  FileId file_;
  DiagnosticEngine& diags_;
  std::size_t limit_;
  std::size_t count_ = 0;
  std::optional<std::size_t> at_eof_;
};

// Walks parse-tree contexts into AST nodes. Every accessor may return null
// after error recovery, so every step is null-safe.
class AstBuilder {
 public:
  AstBuilder(FileId file, DiagnosticEngine& diags, std::size_t max_depth)
      : file_(file), diags_(diags), max_depth_(max_depth) {}

  SourceLocation at(const antlr4::Token* t) const { return token_location(file_, t); }
  SourceLocation at(antlr4::tree::TerminalNode* n) const { return at(n ? n->getSymbol() : nullptr); }
  SourceLocation at(antlr4::ParserRuleContext* ctx) const {
    if (ctx == nullptr) return {file_, 0, 0, 1};
    SourceLocation loc = at(ctx->getStart());
    const antlr4::Token* stop = ctx->getStop();
    const antlr4::Token* start = ctx->getStart();
    if (start && stop && stop->getLine() == start->getLine() && stop->getStopIndex() >= start->getStartIndex() &&
        stop->getType() != antlr4::Token::EOF)
      loc.length = static_cast<std::uint32_t>(stop->getStopIndex() - start->getStartIndex() + 1);
    return loc;
  }

  Identifier ident(antlr4::tree::TerminalNode* n) const {
    if (n == nullptr) return {"", {file_, 0, 0, 1}};
    return {n->getText(), at(n)};
  }
  Identifier ident(gen::NameContext* n) const {
    if (n == nullptr || n->getStart() == nullptr) return {"", {file_, 0, 0, 1}};
    return {n->getText(), at(n->getStart())};
  }

  Module build(gen::FileContext* ctx) {
    Module m;
    m.file = file_;
    for (auto* top : ctx->topDecl()) {
      if (auto* imp = top->importDecl()) {
        if (imp->STRING()) m.imports.push_back({unquote(imp->STRING()->getText()), at(imp->STRING())});
      } else if (auto* model = top->modelDecl()) {
        m.models.push_back(build_model(model));
      } else if (auto* comp = top->componentDecl()) {
        m.components.push_back(build_component(comp));
      } else if (auto* study = top->studyDecl()) {
        m.studies.push_back(build_study(study));
      }
    }
    return m;
  }

 private:
  static std::string unquote(const std::string& s) {
    std::string out;
    std::size_t end = s.size() >= 2 && s.back() == '"' ? s.size() - 1 : s.size();
    for (std::size_t i = 1; i < end; ++i) {
      if (s[i] == '\\' && i + 1 < end) {
        char c = s[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else {
        out += s[i];
      }
    }
    return out;
  }

  std::vector<Binding> bindings(const std::vector<gen::BindingContext*>& list) {
    std::vector<Binding> out;
    for (auto* b : list) out.push_back({ident(b->name()), expr(b->expr())});
    return out;
  }

  ModelDecl build_model(gen::ModelDeclContext* ctx) {
    ModelDecl m;
    m.name = ident(ctx->name(0));
    m.location = at(ctx->getStart());
    if (ctx->STRING()) {
      // A model from a trace has one parameter: the scale of its computation
      // (Wg of the modelled processor over the traced one's), 1 = as traced.
      m.trace = TraceSource{ident(ctx->name(1)), unquote(ctx->STRING()->getText()), at(ctx->STRING())};
      auto one = make(ExprKind::Number, m.trace->location);
      one->number = 1;
      m.params.push_back({{"compute_scale", m.trace->location}, std::move(one)});
    }
    for (auto* item : ctx->modelItem()) {
      if (auto* p = item->paramDecl()) {
        for (auto& b : bindings(p->binding())) m.params.push_back(std::move(b));
      } else if (auto* l = item->letDecl()) {
        for (auto& b : bindings(l->binding())) m.lets.push_back(std::move(b));
      } else if (auto* tg = item->taskgraphDecl()) {
        TaskGraphDecl t;
        t.name = ident(tg->name());
        t.location = at(tg->getStart());
        t.body = stmts(tg->tgStmt());
        m.taskgraphs.push_back(std::move(t));
      } else if (auto* pr = item->programDecl()) {
        attach(m.program, pr->attachEntry(), at(pr->getStart()), "model '" + m.name.name + "'", "program");
      }
    }
    return m;
  }

  // A `program { }` or `kernel { }` block: one per declaration.
  void attach(std::optional<AttachedCommand>& slot, const std::vector<gen::AttachEntryContext*>& entries,
              SourceLocation where, const std::string& owner, const char* what) {
    if (slot) {
      auto& d = diags_.error(where, owner + " has more than one " + what);
      DiagnosticEngine::note(d, slot->location, std::string("first ") + what + " is here");
      return;
    }
    AttachedCommand a;
    a.location = where;
    for (auto* e : entries) a.entries.push_back({ident(e->name()), expr(e->expr())});
    slot = std::move(a);
  }

  StmtList stmts(const std::vector<gen::TgStmtContext*>& list) {
    StmtList out;
    for (auto* s : list)
      if (auto st = stmt(s)) out.push_back(std::move(st));
    return out;
  }

  StmtList block(gen::BlockContext* b) { return b ? stmts(b->tgStmt()) : StmtList{}; }

  StmtPtr stmt(gen::TgStmtContext* ctx) {
    auto s = std::make_unique<Stmt>();
    s->location = at(ctx->getStart());
    if (auto* p = ctx->processesStmt()) {
      s->node = ProcessesStmt{integer_set(p->setLit())};
    } else if (auto* l = ctx->letDecl()) {
      s->node = LetStmt{bindings(l->binding())};
    } else if (auto* f = ctx->forStmt()) {
      ForStmt fs;
      fs.variable = ident(f->name());
      fs.first = expr(f->expr(0));
      fs.last = expr(f->expr(1));
      fs.step = f->expr().size() > 2 ? expr(f->expr(2)) : nullptr;
      fs.body = block(f->block());
      s->node = std::move(fs);
    } else if (auto* i = ctx->ifStmt()) {
      s->node = if_stmt(i);
    } else if (auto* c = ctx->commStmt()) {
      s->node = comm_stmt(c);
    } else if (auto* t = ctx->taskStmt()) {
      TaskStmt ts;
      ts.name = ident(t->name(0));
      ts.component = ident(t->name(1));
      for (auto* a : t->namedArg()) ts.arguments.push_back({ident(a->name()), expr(a->expr())});
      s->node = std::move(ts);
    } else if (ctx->waitStmt()) {
      s->node = WaitAllStmt{};
    } else if (auto* col = ctx->collectiveStmt()) {
      CollectiveStmt cs;
      cs.operation = ident(col->ID());
      for (auto* clause : col->collClause()) {
        auto duplicate = [&](bool seen, const char* what) {
          if (seen) diags_.error(at(clause), std::string("duplicate '") + what + "' clause");
          return seen;
        };
        if (auto* sz = dynamic_cast<gen::CollSizeContext*>(clause)) {
          if (!duplicate(cs.size != nullptr, "size")) cs.size = expr(sz->expr());
        } else if (auto* r = dynamic_cast<gen::CollRootContext*>(clause)) {
          if (!duplicate(cs.root != nullptr, "root")) cs.root = expr(r->expr());
        } else if (auto* a = dynamic_cast<gen::CollAlgorithmContext*>(clause)) {
          if (!duplicate(cs.algorithm.has_value(), "algorithm")) cs.algorithm = ident(a->name());
        } else if (auto* cm = dynamic_cast<gen::CollCommContext*>(clause)) {
          if (!duplicate(cs.communicator.has_value(), "comm")) cs.communicator = ident(cm->name());
        }
      }
      s->node = std::move(cs);
    } else {
      return nullptr;
    }
    return s;
  }

  IfStmt if_stmt(gen::IfStmtContext* ctx) {
    IfStmt is;
    is.condition = expr(ctx->expr());
    auto blocks = ctx->block();
    if (!blocks.empty()) is.then_body = block(blocks[0]);
    if (blocks.size() > 1) is.else_body = block(blocks[1]);
    if (auto* nested = ctx->ifStmt()) {
      auto s = std::make_unique<Stmt>();
      s->location = at(nested->getStart());
      s->node = if_stmt(nested);
      is.else_body.push_back(std::move(s));
    }
    return is;
  }

  CommStmt comm_stmt(gen::CommStmtContext* ctx) {
    CommStmt cs;
    std::string op = ctx->op ? ctx->op->getText() : "send";
    cs.op = op == "recv" ? CommOp::Recv : op == "isend" ? CommOp::Isend : op == "irecv" ? CommOp::Irecv : CommOp::Send;
    if (ctx->dir) {
      bool is_send = cs.op == CommOp::Send || cs.op == CommOp::Isend;
      std::string dir = ctx->dir->getText();
      if (is_send && dir != "to") diags_.error(at(ctx->dir), op + " names its peer with 'to', not '" + dir + "'");
      if (!is_send && dir != "from") diags_.error(at(ctx->dir), op + " names its peer with 'from', not '" + dir + "'");
    }
    if (auto* p = ctx->peer()) {
      cs.peer.location = at(p);
      if (auto* idx = dynamic_cast<gen::PeerIndexContext*>(p)) {
        cs.peer.kind = Peer::Kind::Index;
        for (auto* e : idx->expr()) cs.peer.index.push_back(expr(e));
      } else if (auto* m = dynamic_cast<gen::PeerMapContext*>(p)) {
        cs.peer.kind = Peer::Kind::Map;
        cs.peer.map = integer_map(m->mapLit());
      } else {
        cs.peer.kind = Peer::Kind::Any;
      }
    }
    for (auto* clause : ctx->commClause()) {
      if (auto* sz = dynamic_cast<gen::SizeClauseContext*>(clause)) {
        if (cs.size)
          diags_.error(at(sz), "duplicate 'size' clause");
        else
          cs.size = expr(sz->expr());
      } else if (auto* tg = dynamic_cast<gen::TagClauseContext*>(clause)) {
        if (cs.tag || cs.tag_any)
          diags_.error(at(tg), "duplicate 'tag' clause");
        else if (tg->expr())
          cs.tag = expr(tg->expr());
        else
          cs.tag_any = true;
      } else if (auto* cm = dynamic_cast<gen::CommNameClauseContext*>(clause)) {
        cs.communicator = ident(cm->name());
      }
    }
    return cs;
  }

  std::vector<Identifier> id_list(gen::IdListContext* ctx) {
    std::vector<Identifier> out;
    if (ctx)
      for (auto* id : ctx->name()) out.push_back(ident(id));
    return out;
  }

  IntegerSet integer_set(gen::SetLitContext* ctx) {
    IntegerSet s;
    if (!ctx) return s;
    s.location = at(ctx);
    s.dims = id_list(ctx->idList());
    s.constraint = ctx->expr() ? expr(ctx->expr()) : nullptr;
    return s;
  }

  IntegerMap integer_map(gen::MapLitContext* ctx) {
    IntegerMap m;
    if (!ctx) return m;
    m.location = at(ctx);
    m.in_dims = id_list(ctx->idList());
    auto exprs = ctx->expr();
    // With a constraint the last expression follows ':'.
    std::size_t outputs = exprs.size();
    if (has_colon(ctx)) {
      if (outputs > 0) {
        m.constraint = expr(exprs.back());
        --outputs;
      }
    }
    for (std::size_t i = 0; i < outputs; ++i) m.out.push_back(expr(exprs[i]));
    return m;
  }

  static bool has_colon(antlr4::ParserRuleContext* ctx) {
    for (auto* child : ctx->children)
      if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(child))
        if (t->getText() == ":") return true;
    return false;
  }

  QualifiedRef qualified(gen::NameContext* head, gen::RefPathContext* path, SourceLocation loc) {
    QualifiedRef r;
    r.head = head ? head->getText() : "";
    r.location = loc;
    if (path) r.path = path->getText();
    return r;
  }

  ComponentDecl build_component(gen::ComponentDeclContext* ctx) {
    ComponentDecl c;
    c.name = ident(ctx->name());
    c.location = at(ctx->getStart());
    if (auto* d = ctx->domainRef()) c.domain = qualified(d->name(), d->refPath(), at(d));
    for (auto* item : ctx->componentItem()) {
      if (auto* p = item->paramDecl()) {
        for (auto& b : bindings(p->binding())) c.params.push_back(std::move(b));
      } else if (auto* a = item->acceptsDecl()) {
        c.accepts.push_back(interface(InterfaceKind::Accepts, a->name(), a, a->interfaceItem()));
      } else if (auto* r = item->requestsDecl()) {
        c.requests.push_back(interface(InterfaceKind::Requests, r->name(), r, r->interfaceItem()));
      } else if (auto* impl = item->implementationDecl()) {
        if (c.implementation) {
          auto& d = diags_.error(at(impl), "component '" + c.name.name + "' has more than one implementation");
          DiagnosticEngine::note(d, c.implementation->location, "first implementation is here");
        } else if (auto* pr = impl->paradigmRef()) {
          c.implementation = qualified(pr->name(), pr->refPath(), at(pr));
        }
      } else if (auto* k = item->kernelDecl()) {
        attach(c.kernel, k->attachEntry(), at(k->getStart()), "component '" + c.name.name + "'", "kernel");
      }
    }
    return c;
  }

  Interface interface(InterfaceKind kind, gen::NameContext* name, antlr4::ParserRuleContext* ctx,
                      const std::vector<gen::InterfaceItemContext*>& items) {
    Interface itf;
    itf.kind = kind;
    if (name) itf.name = ident(name);
    itf.location = at(ctx->getStart());
    const char* where = kind == InterfaceKind::Accepts ? "accepts" : "requests";
    for (auto* item : items) {
      if (auto* p = dynamic_cast<gen::ProfileItemContext*>(item)) {
        if (kind == InterfaceKind::Requests) {
          diags_.error(at(p->getStart()), "a requests interface has a selector, not a profile");
          continue;
        }
        if (itf.profile_location) {
          auto& d = diags_.error(at(p->getStart()), "duplicate profile in accepts interface");
          DiagnosticEngine::note(d, *itf.profile_location, "first profile is here");
          continue;
        }
        itf.profile_location = at(p->getStart());
        for (auto* e : p->profileEntry()) itf.profile.push_back({ident(e->name()), expr(e->expr())});
      } else if (auto* s = dynamic_cast<gen::SelectorItemContext*>(item)) {
        if (kind == InterfaceKind::Accepts) {
          diags_.error(at(s->getStart()), "an accepts interface has a profile, not a selector");
          continue;
        }
        if (itf.selector) {
          diags_.error(at(s->getStart()), "duplicate selector in requests interface");
          continue;
        }
        itf.selector = expr(s->expr());
      } else if (auto* t = dynamic_cast<gen::TransactionItemContext*>(item)) {
        if (itf.transaction) {
          auto& d = diags_.error(at(t->getStart()), std::string("duplicate transaction in ") + where + " interface");
          DiagnosticEngine::note(d, itf.transaction->location, "first transaction is here");
          continue;
        }
        Transaction tx;
        auto ids = t->name();
        tx.name = ident(ids.empty() ? nullptr : ids[0]);
        tx.location = at(t->getStart());
        if (ids.size() > 1) tx.result_type = ident(ids[1]);
        for (auto* p : t->txParam()) {
          TxParam param;
          if (auto* typed = dynamic_cast<gen::TxTypedContext*>(p)) {
            param.kind = TxParamKind::Typed;
            param.name = ident(typed->name(0));
            param.type = ident(typed->name(1));
          } else if (auto* co = dynamic_cast<gen::TxCoercedContext*>(p)) {
            param.kind = TxParamKind::Coerced;
            param.name = ident(co->name());
            param.value = expr(co->expr());
          } else if (auto* fw = dynamic_cast<gen::TxForwardedContext*>(p)) {
            param.kind = TxParamKind::Forwarded;
            param.name = ident(fw->name());
          }
          tx.params.push_back(std::move(param));
        }
        itf.transaction = std::move(tx);
      } else if (auto* pr = dynamic_cast<gen::ProtocolItemContext*>(item)) {
        if (itf.protocol) {
          diags_.error(at(pr->getStart()), std::string("duplicate protocol in ") + where + " interface");
          continue;
        }
        itf.protocol = ident(pr->name());
      }
    }
    return itf;
  }

  StudyDecl build_study(gen::StudyDeclContext* ctx) {
    StudyDecl st;
    st.name = ident(ctx->name());
    st.location = at(ctx->getStart());
    for (auto* item : ctx->studyItem()) {
      if (auto* m = dynamic_cast<gen::StudyModelContext*>(item)) {
        if (st.model) {
          auto& d = diags_.error(at(m->getStart()), "study '" + st.name.name + "' names its model twice");
          DiagnosticEngine::note(d, st.model->location, "first 'model' is here");
          continue;
        }
        auto ids = m->name();
        if (!ids.empty()) st.model = ident(ids[0]);
        if (ids.size() > 1) st.machine = ident(ids[1]);
      } else if (auto* s = dynamic_cast<gen::StudySetContext*>(item)) {
        for (auto* b : s->setBinding()) st.settings.push_back({dotted(b->dottedName()), expr(b->expr())});
      } else if (auto* v = dynamic_cast<gen::StudyVaryContext*>(item)) {
        VaryClause vc;
        vc.location = at(v->getStart());
        if (auto* target = v->varyTarget())
          for (auto* d : target->dottedName()) vc.targets.push_back(dotted(d));
        if (auto* range = dynamic_cast<gen::VaryRangeContext*>(v->varyDomain())) {
          vc.is_range = true;
          vc.first = expr(range->expr(0));
          vc.last = expr(range->expr(1));
          if (range->expr().size() > 2) vc.step = expr(range->expr(2));
        } else if (auto* list = dynamic_cast<gen::VaryListContext*>(v->varyDomain())) {
          vc.values = expr(list->expr());
        }
        st.varies.push_back(std::move(vc));
      } else if (auto* w = dynamic_cast<gen::StudyWhereContext*>(item)) {
        st.constraints.push_back(expr(w->expr()));
      } else if (auto* c = dynamic_cast<gen::StudyCompareContext*>(item)) {
        for (auto* p : c->paradigmRef()) st.compare.push_back(qualified(p->name(), p->refPath(), at(p)));
      } else if (auto* r = dynamic_cast<gen::StudyReportContext*>(item)) {
        for (auto* id : r->name()) st.report.push_back(ident(id));
      }
    }
    return st;
  }

  Identifier dotted(gen::DottedNameContext* ctx) {
    if (!ctx) return {"", {file_, 0, 0, 1}};
    return {ctx->getText(), at(ctx)};
  }

  // ---------------------------------------------------------- expressions
  ExprPtr make(ExprKind kind, SourceLocation loc) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->location = loc;
    return e;
  }

  ExprPtr invalid(antlr4::ParserRuleContext* ctx) { return make(ExprKind::Invalid, at(ctx)); }

  // Every expression, nested ones included, is built here; a whole one (the
  // outermost call) is measured before anything else sees it.
  ExprPtr expr(gen::ExprContext* ctx) {
    ++expr_nesting_;
    ExprPtr e = expr_unmeasured(ctx);
    --expr_nesting_;
    return expr_nesting_ == 0 ? bounded(std::move(e)) : std::move(e);
  }

  // The expression, or an invalid one (reported) when its depth exceeds the
  // limit; measured without recursion, since that depth is the problem.
  ExprPtr bounded(ExprPtr e) {
    std::size_t deepest = 0;
    const Expr* deepest_node = e.get();
    std::vector<std::pair<const Expr*, std::size_t>> stack{{e.get(), 0}};
    while (!stack.empty()) {
      auto [node, depth] = stack.back();
      stack.pop_back();
      if (depth > deepest) {
        deepest = depth;
        deepest_node = node;
      }
      for (const ExprPtr& child : node->operands)
        if (child) stack.push_back({child.get(), depth + 1});
    }
    if (deepest <= max_depth_) return e;
    diags_.error(deepest_node->location, "expression nested " + std::to_string(deepest) +
                                             " operations deep; the limit is " + std::to_string(max_depth_) +
                                             " (split it with 'let' names)");
    return make(ExprKind::Invalid, e->location);
  }

  ExprPtr expr_unmeasured(gen::ExprContext* ctx) {
    if (!ctx || !ctx->orExpr()) return invalid(ctx);
    ExprPtr cond = or_expr(ctx->orExpr());
    auto branches = ctx->expr();
    if (branches.empty()) return cond;
    auto e = make(ExprKind::Ternary, at(ctx));
    e->operands.push_back(std::move(cond));
    e->operands.push_back(expr(branches.size() > 0 ? branches[0] : nullptr));
    e->operands.push_back(expr(branches.size() > 1 ? branches[1] : nullptr));
    return e;
  }

  ExprPtr or_expr(gen::OrExprContext* ctx) {
    auto parts = ctx->andExpr();
    if (parts.size() == 1) return and_expr(parts[0]);
    auto e = make(ExprKind::Logical, at(ctx));
    e->op = Op::Or;
    for (auto* p : parts) e->operands.push_back(and_expr(p));
    if (e->operands.empty()) return invalid(ctx);
    return e;
  }

  ExprPtr and_expr(gen::AndExprContext* ctx) {
    auto parts = ctx->notExpr();
    if (parts.size() == 1) return not_expr(parts[0]);
    auto e = make(ExprKind::Logical, at(ctx));
    e->op = Op::And;
    for (auto* p : parts) e->operands.push_back(not_expr(p));
    if (e->operands.empty()) return invalid(ctx);
    return e;
  }

  ExprPtr not_expr(gen::NotExprContext* ctx) {
    if (!ctx) return invalid(ctx);
    if (auto* inner = ctx->notExpr()) {
      auto e = make(ExprKind::Not, at(ctx->getStart()));
      e->operands.push_back(not_expr(inner));
      return e;
    }
    return cmp_expr(ctx->cmpExpr());
  }

  static Op compare_op(const std::string& s) {
    if (s == "<") return Op::Lt;
    if (s == "<=") return Op::Le;
    if (s == ">") return Op::Gt;
    if (s == ">=") return Op::Ge;
    if (s == "==") return Op::Eq;
    return Op::Ne;
  }

  ExprPtr cmp_expr(gen::CmpExprContext* ctx) {
    if (!ctx) return invalid(ctx);
    auto parts = ctx->addExpr();
    auto ops = ctx->cmpOp();
    if (parts.size() == 1) return add_expr(parts[0]);
    if (parts.empty()) return invalid(ctx);
    auto e = make(ExprKind::Compare, at(ctx));
    for (auto* p : parts) e->operands.push_back(add_expr(p));
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
      e->compare_ops.push_back(i < ops.size() ? compare_op(ops[i]->getText()) : Op::Eq);
    if (e->operands.size() == 2) e->location = at(ops.empty() ? ctx->getStart() : ops[0]->getStart());
    return e;
  }

  // a (op b)*: children alternate operand contexts and operator terminals.
  template <typename Ctx, typename Sub>
  ExprPtr fold_left(Ctx* ctx, ExprPtr (AstBuilder::*sub)(Sub*)) {
    if (!ctx) return invalid(ctx);
    ExprPtr acc;
    Op pending = Op::Add;
    SourceLocation op_loc;
    bool have_op = false;
    for (auto* child : ctx->children) {
      if (auto* operand = dynamic_cast<Sub*>(child)) {
        ExprPtr rhs = (this->*sub)(operand);
        if (!acc) {
          acc = std::move(rhs);
        } else if (have_op) {
          auto e = make(ExprKind::Binary, op_loc);
          e->op = pending;
          e->operands.push_back(std::move(acc));
          e->operands.push_back(std::move(rhs));
          acc = std::move(e);
          have_op = false;
        }
      } else if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(child)) {
        std::string s = t->getText();
        have_op = true;
        op_loc = at(t);
        if (s == "+")
          pending = Op::Add;
        else if (s == "-")
          pending = Op::Sub;
        else if (s == "*")
          pending = Op::Mul;
        else if (s == "/")
          pending = Op::Div;
        else if (s == "%")
          pending = Op::Mod;
        else
          have_op = false;  // an error node left by recovery
      }
    }
    return acc ? std::move(acc) : invalid(ctx);
  }

  ExprPtr add_expr(gen::AddExprContext* ctx) { return fold_left(ctx, &AstBuilder::mul_expr); }
  ExprPtr mul_expr(gen::MulExprContext* ctx) { return fold_left(ctx, &AstBuilder::unary_expr); }

  ExprPtr unary_expr(gen::UnaryExprContext* ctx) {
    if (!ctx) return invalid(ctx);
    if (auto* inner = ctx->unaryExpr()) {
      auto e = make(ExprKind::Unary, at(ctx->getStart()));
      e->op = ctx->getStart()->getText() == "-" ? Op::Neg : Op::Plus;
      e->operands.push_back(unary_expr(inner));
      return e;
    }
    return primary(ctx->primary());
  }

  ExprPtr number(antlr4::tree::TerminalNode* t, bool with_unit) {
    auto e = make(ExprKind::Number, at(t));
    std::string error;
    auto q = parse_quantity(t->getText(), &error);
    if (!q) {
      diags_.error(at(t), error);
      e->kind = ExprKind::Invalid;
      return e;
    }
    (void)with_unit;
    e->number = q->value;
    e->dimension = q->dimension;
    return e;
  }

  ExprPtr primary(gen::PrimaryContext* ctx) {
    if (!ctx) return invalid(ctx);
    if (auto* n = dynamic_cast<gen::NumberLitContext*>(ctx)) return number(n->NUMBER(), false);
    if (auto* q = dynamic_cast<gen::QuantityLitContext*>(ctx)) return number(q->QUANTITY(), true);
    if (auto* b = dynamic_cast<gen::BadQuantityLitContext*>(ctx)) {
      std::string text = b->BAD_QUANTITY()->getText();
      std::size_t i = 0;
      while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
      diags_.error(at(b->BAD_QUANTITY()),
                   "unknown unit '" + text.substr(i) + "' in '" + text + "' (known units: " + known_units() + ")");
      return make(ExprKind::Invalid, at(ctx));
    }
    if (auto* s = dynamic_cast<gen::StringLitContext*>(ctx)) {
      auto e = make(ExprKind::String, at(ctx));
      e->text = unquote(s->STRING()->getText());
      return e;
    }
    if (dynamic_cast<gen::BoolLitContext*>(ctx)) {
      auto e = make(ExprKind::Bool, at(ctx));
      e->boolean = ctx->getText() == "true";
      return e;
    }
    if (auto* c = dynamic_cast<gen::CallExprContext*>(ctx)) {
      auto e = make(ExprKind::Call, at(c->name() ? c->name()->getStart() : c->getStart()));
      e->text = c->name() ? c->name()->getText() : "";
      for (auto* a : c->expr()) e->operands.push_back(expr(a));
      return e;
    }
    if (auto* r = dynamic_cast<gen::RefExprContext*>(ctx)) {
      auto e = make(ExprKind::Ref, at(ctx));
      if (auto* p = r->paradigmRef()) e->ref = qualified(p->name(), p->refPath(), at(p));
      return e;
    }
    if (auto* n = dynamic_cast<gen::NameExprContext*>(ctx)) {
      auto e = make(ExprKind::Name, at(ctx));
      e->text = n->getText();
      return e;
    }
    if (auto* p = dynamic_cast<gen::ParenExprContext*>(ctx)) {
      auto parts = p->expr();
      if (parts.size() == 1) return expr(parts[0]);
      auto e = make(ExprKind::Tuple, at(ctx));
      for (auto* x : parts) e->operands.push_back(expr(x));
      return e;
    }
    if (auto* l = dynamic_cast<gen::ListExprContext*>(ctx)) {
      auto e = make(ExprKind::List, at(ctx));
      for (auto* x : l->expr()) e->operands.push_back(expr(x));
      return e;
    }
    return invalid(ctx);
  }

  FileId file_;
  DiagnosticEngine& diags_;
  std::size_t max_depth_;
  std::size_t expr_nesting_ = 0;
};

// "'@'" for printable ASCII, "U+00E9 'é'" for other code points.
std::string describe_character(const antlr4::Token* t) {
  std::string text = t->getText();
  if (text.size() == 1 && static_cast<unsigned char>(text[0]) >= 0x20 && static_cast<unsigned char>(text[0]) < 0x7f)
    return "'" + text + "'";
  std::u32string code_points = antlrcpp::utf8_to_utf32(text.data(), text.data() + text.size());
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", code_points.empty() ? 0u : static_cast<unsigned>(code_points[0]));
  bool printable = !code_points.empty() && code_points[0] >= 0xA0;
  return std::string(buf) + (printable ? " '" + text + "'" : "");
}

// Rejects inputs whose nesting would recurse deeper than the limit, before the
// recursive-descent parser sees them.
bool check_nesting(antlr4::CommonTokenStream& tokens, FileId file, DiagnosticEngine& diags,
                   const FrontendLimits& limits, std::vector<const antlr4::Token*>& unclosed) {
  const std::size_t limit = limits.max_nesting;
  std::size_t depth = 0, prefix_run = 0, questions = 0;
  std::vector<std::size_t> else_if(1, 0);  // length of the else-if chain at each bracket depth
  std::vector<std::size_t> commas;         // commas directly inside each open bracket
  const antlr4::Token* prev = nullptr;
  for (antlr4::Token* t : tokens.getTokens()) {
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL || t->getType() == antlr4::Token::EOF) continue;
    std::string s = t->getText();
    const char* what = nullptr;
    if (s == "(" || s == "[" || s == "{") {
      if (++depth > limit) what = "brackets nested";
      unclosed.push_back(t);
      commas.push_back(0);
      if (else_if.size() <= depth) else_if.resize(depth + 1, 0);
      else_if[depth] = 0;
    } else if (s == ")" || s == "]" || s == "}") {
      if (depth > 0) --depth;
      if (!unclosed.empty()) unclosed.pop_back();
      if (!commas.empty()) commas.pop_back();
    } else if (s == "," && !commas.empty() && ++commas.back() >= limits.max_list_elements) {
      // Before the parser builds a tree for it: a list of 10^6 numbers would cost a gigabyte or more.
      diags.error(token_location(file, unclosed.back()), "more than " + std::to_string(limits.max_list_elements) +
                                                             " elements in one list; " +
                                                             "split the study or raise the limit");
      return false;
    }
    bool prefix = s == "not" || s == "!" ||
                  ((s == "-" || s == "+") &&
                   (prev == nullptr ||
                    !(prev->getType() == PslLexer::ID || prev->getType() == PslLexer::NUMBER ||
                      prev->getType() == PslLexer::QUANTITY || prev->getText() == ")" || prev->getText() == "]")));
    prefix_run = prefix ? prefix_run + 1 : 0;
    if (prefix_run > limit) what = "prefix operators nested";
    if (s == "?" && ++questions > limit) what = "conditional expressions nested";
    if (s == ";") questions = 0;
    if (s == "if" && prev && prev->getText() == "else") {
      if (++else_if[depth] > limit) what = "else-if branches chained";
    } else if (s == "if" || s == ";") {
      else_if[depth] = 0;  // a new statement at this depth starts a new chain
    }
    if (what) {
      diags.error(token_location(file, t),
                  std::string(what) + " more than " + std::to_string(limit) + " deep; simplify the expression");
      return false;
    }
    prev = t;
  }
  return true;
}

}  // namespace

Module parse_module(FileId file, const SourceManager& sources, DiagnosticEngine& diags, const FrontendLimits& limits) {
  antlr4::ANTLRInputStream input(sources.text(file));
  PslLexer lexer(&input);
  lexer.removeErrorListeners();  // every character is a token; nothing to report here
  // Lexed one token at a time so that an endless stream of tokens stops at
  // the limit, before it costs memory (the parse tree takes ~1 KB a token).
  // Tokens count as a reader counts them (whitespace and comments apart); all
  // of them together are held to four times the limit.
  std::vector<std::unique_ptr<antlr4::Token>> lexed;
  std::size_t significant = 0;
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    const bool eof = t->getType() == antlr4::Token::EOF;
    significant += t->getChannel() == antlr4::Token::DEFAULT_CHANNEL;
    if (!eof && (significant > limits.max_tokens || lexed.size() >= 4 * limits.max_tokens)) {
      diags.error(token_location(file, t.get()),
                  "more than " + std::to_string(limits.max_tokens) + " tokens in one file; " +
                      "PSL specifications are far smaller (split it into imported files)");
      return Module{file, sources.path(file), {}, {}, {}, {}};
    }
    lexed.push_back(std::move(t));
    if (eof) break;
  }
  antlr4::ListTokenSource token_source(std::move(lexed));
  antlr4::CommonTokenStream tokens(&token_source);
  tokens.fill();

  // Report lexical problems once and hand the parser a stream it can use.
  for (antlr4::Token* t : tokens.getTokens()) {
    auto* ct = dynamic_cast<antlr4::CommonToken*>(t);
    if (ct == nullptr) continue;
    switch (t->getType()) {
      case PslLexer::ERROR_CHAR: {
        diags.error(token_location(file, t), "unexpected character " + describe_character(t));
        ct->setChannel(antlr4::Token::HIDDEN_CHANNEL);
        break;
      }
      case PslLexer::UNTERMINATED_STRING:
        diags.error(token_location(file, t), "missing terminating '\"' character");
        ct->setType(PslLexer::STRING);
        break;
      case PslLexer::BLOCK_COMMENT: {
        const std::string text = t->getText();
        if (text.size() < 4 || text.compare(text.size() - 2, 2, "*/") != 0)
          diags.error(token_location(file, t), "unterminated /* comment");
        ct->setChannel(antlr4::Token::HIDDEN_CHANNEL);
        break;
      }
      default: break;
    }
  }
  std::vector<const antlr4::Token*> unclosed;
  if (!check_nesting(tokens, file, diags, limits, unclosed)) return Module{file, sources.path(file), {}, {}, {}, {}};

  poems_psl_gen::PslParser parser(&tokens);
  // As compilers do: stop after as many syntax errors as would be printed
  // (--max-errors), and after 1,000 at most.
  const std::size_t max_errors = diags.limits().max_errors;
  const std::size_t syntax_limit = max_errors == 0 ? 1000 : std::min<std::size_t>(max_errors, 1000);
  SyntaxErrorListener listener(file, diags, syntax_limit);
  parser.removeErrorListeners();
  parser.addErrorListener(&listener);
  poems_psl_gen::PslParser::FileContext* tree = nullptr;
  try {
    tree = parser.file();
  } catch (const ParseAborted&) {
    diags.final_error(token_location(file, parser.getCurrentToken()),
                      "too many syntax errors (" + std::to_string(syntax_limit) + "); stopping here");
    return Module{file, sources.path(file), {}, {}, {}, {}};
  }
  // "unexpected end of file": point at the bracket that was never closed.
  if (listener.at_eof() && !unclosed.empty()) {
    const antlr4::Token* open = unclosed.back();
    DiagnosticEngine::note(diags.at(*listener.at_eof()), token_location(file, open),
                           "to match this '" + open->getText() + "'");
  }
  AstBuilder builder(file, diags, limits.max_expression_depth);
  Module module = builder.build(tree);
  module.path = sources.path(file);
  return module;
}

}  // namespace poems::psl
