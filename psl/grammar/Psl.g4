// The POEMS Specification Language (PSL).
// The grammar is deliberately permissive where a semantic check gives a better
// message than a parse error (collective names, protocols, domains, types and
// the placement of profile/selector items are identifiers checked later).
grammar Psl;

file : topDecl* EOF ;

topDecl
    : importDecl
    | modelDecl
    | componentDecl
    | studyDecl
    ;

importDecl : 'import' STRING ';' ;

// ---------------------------------------------------------------- models
// `model NAME from trace "run/traces.otf2";`: the task graph is an OTF2
// archive's replay (docs/trace.md); the name after 'from' is checked later.
modelDecl : 'model' name ( '{' modelItem* '}' | 'from' name STRING ';' ) ;

modelItem
    : paramDecl
    | letDecl
    | taskgraphDecl
    | programDecl
    ;

// `program { sources = "app.c"; args = [n, "-v"]; ranks = px * py; time = "t=([0-9.e+-]+)"; }`:
// the model's real program (docs/psl.md, "Programs and kernels"); an
// application component's `kernel { ... }` times its tasks. The entries are
// checked by name later, so a misspelt one gets a located message.
programDecl : 'program' '{' attachEntry* '}' ;
kernelDecl  : 'kernel' '{' attachEntry* '}' ;
attachEntry : name '=' expr ';' ;

paramDecl : 'param' binding (',' binding)* ';' ;
letDecl   : 'let' binding (',' binding)* ';' ;
binding   : name '=' expr ;

taskgraphDecl : 'taskgraph' name '{' tgStmt* '}' ;

tgStmt
    : processesStmt
    | letDecl
    | forStmt
    | ifStmt
    | commStmt
    | taskStmt
    | waitStmt
    | collectiveStmt
    ;

processesStmt  : 'processes' setLit ';' ;
forStmt        : 'for' name 'in' expr '..' expr ('step' expr)? block ;
ifStmt         : 'if' expr block ('else' (block | ifStmt))? ;
block          : '{' tgStmt* '}' ;
commStmt       : op=('send' | 'recv' | 'isend' | 'irecv') dir=('to' | 'from') peer commClause* ';' ;
peer           : '[' expr (',' expr)* ']'   # peerIndex
               | mapLit                     # peerMap
               | 'any'                      # peerAny
               ;
commClause     : 'size' expr                # sizeClause
               | 'tag' ('any' | expr)       # tagClause
               | 'comm' name                  # commNameClause
               ;
taskStmt       : 'task' name ':' name '(' (namedArg (',' namedArg)*)? ')' ';' ;
namedArg       : name '=' expr ;
waitStmt       : 'waitall' ';' ;
collectiveStmt : ID collClause* ';' ;
collClause     : 'size' expr                # collSize
               | 'root' expr                # collRoot
               | 'algorithm' name             # collAlgorithm
               | 'comm' name                  # collComm
               ;

// Symbolic integer sets and maps in isl notation; the constraint is a PSL
// expression (chained comparisons, and/or/not) and model params are isl params.
setLit : '{' '[' idList? ']' (':' expr)? '}' ;
mapLit : '{' '[' idList? ']' '->' '[' (expr (',' expr)*)? ']' (':' expr)? '}' ;
idList : name (',' name)* ;

// ------------------------------------------------------------ components
componentDecl : 'component' name 'in' domainRef '{' componentItem* '}' ;
domainRef     : name ('[' refPath ']')? ;
refPath       : refAtom (('-' | '/' | '.') refAtom)* ;
refAtom       : name | NUMBER ;

componentItem
    : paramDecl
    | acceptsDecl
    | requestsDecl
    | implementationDecl
    | kernelDecl
    ;

acceptsDecl        : 'accepts' name? '{' interfaceItem* '}' ;
requestsDecl       : 'requests' name? '{' interfaceItem* '}' ;
implementationDecl : 'implementation' paradigmRef ';' ;

interfaceItem
    : 'profile' '{' profileEntry* '}'                                          # profileItem
    | 'selector' expr ';'                                                      # selectorItem
    | 'transaction' name '(' (txParam (',' txParam)*)? ')' ('->' name)? ';'        # transactionItem
    | 'protocol' name ';'                                                        # protocolItem
    ;
profileEntry : name '=' expr ';' ;
txParam      : name ':' name        # txTyped       // formal parameter in accepts
             | name '=' expr      # txCoerced     // coercion in requests
             | name               # txForwarded   // passed through unchanged
             ;

// --------------------------------------------------------------- studies
studyDecl : 'study' name '{' studyItem* '}' ;

studyItem
    : 'model' name ('on' name)? ';'                                 # studyModel
    | 'set' setBinding (',' setBinding)* ';'                    # studySet
    | 'vary' varyTarget 'in' varyDomain ';'                     # studyVary
    | 'where' expr ';'                                          # studyWhere
    | 'compare' paradigmRef (',' paradigmRef)* ';'              # studyCompare
    | 'report' name (',' name)* ';'                                 # studyReport
    ;
setBinding  : dottedName '=' expr ;
varyTarget  : dottedName | '(' dottedName (',' dottedName)* ')' ;
varyDomain  : expr '..' expr ('step' expr)?    # varyRange
            | expr                             # varyList
            ;
dottedName  : name ('.' name)* ;
paradigmRef : name '[' refPath ']' ;

// ----------------------------------------------------------- expressions
expr      : orExpr ('?' expr ':' expr)? ;
orExpr    : andExpr (('or' | '||') andExpr)* ;
andExpr   : notExpr (('and' | '&&') notExpr)* ;
notExpr   : ('not' | '!') notExpr | cmpExpr ;
cmpExpr   : addExpr (cmpOp addExpr)* ;
cmpOp     : '<' | '<=' | '>' | '>=' | '==' | '!=' ;
addExpr   : mulExpr (('+' | '-') mulExpr)* ;
mulExpr   : unaryExpr (('*' | '/' | '%') unaryExpr)* ;
unaryExpr : ('-' | '+') unaryExpr | primary ;
primary
    : NUMBER                                    # numberLit
    | QUANTITY                                  # quantityLit
    | BAD_QUANTITY                              # badQuantityLit
    | STRING                                    # stringLit
    | ('true' | 'false')                        # boolLit
    | name '(' (expr (',' expr)*)? ')'            # callExpr
    | paradigmRef                               # refExpr
    | name ('.' name)*                              # nameExpr
    | '(' expr (',' expr)* ')'                  # parenExpr
    | '[' (expr (',' expr)*)? ']'               # listExpr
    ;

// Keywords that only mean something in one position may also be names, so a
// transaction can take a `tag` and a selector can read `study.compute`.
name
    : ID
    | 'send' | 'recv' | 'isend' | 'irecv' | 'to' | 'from' | 'any' | 'size' | 'tag' | 'comm'
    | 'root' | 'algorithm' | 'task' | 'waitall' | 'processes' | 'step' | 'model' | 'study'
    | 'on' | 'set' | 'vary' | 'compare' | 'report' | 'profile' | 'selector' | 'transaction'
    | 'protocol' | 'implementation' | 'accepts' | 'requests' | 'taskgraph' | 'param'
    | 'component' | 'import' | 'where' | 'program' | 'kernel'
    ;

// ------------------------------------------------------------------ lexer
QUANTITY : NUM UNIT ;
NUMBER   : NUM ;
// A number glued to letters that are not a known unit; reported by the front end.
BAD_QUANTITY : NUM [a-zA-Z_] [a-zA-Z_0-9]* ;
fragment NUM   : [0-9]+ ('.' [0-9]+)? ([eE] [+-]? [0-9]+)? ;
fragment UNIT
    : 'ps' | 'ns' | 'us' | 'ms' | 's'
    | 'B' | 'KB' | 'MB' | 'GB' | 'KiB' | 'MiB' | 'GiB'
    | 'B/s' | 'KB/s' | 'MB/s' | 'GB/s'
    | 'ps/B' | 'ns/B' | 'us/B' | 'ms/B' | 's/B'
    ;

ID     : [a-zA-Z_] [a-zA-Z_0-9]* ;
STRING : '"' (~["\\\r\n] | '\\' .)* '"' ;
UNTERMINATED_STRING : '"' (~["\\\r\n] | '\\' .)* ;

LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
// An unterminated comment runs to the end of the file; the front end reports it.
BLOCK_COMMENT : '/*' .*? ('*/' | EOF) ;
WS : [ \t\r\n\f]+ -> channel(HIDDEN) ;
// Anything else becomes a token the front end reports, so the lexer never stops.
ERROR_CHAR : . ;
