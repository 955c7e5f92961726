#!/usr/bin/env python3
"""Generates the MPI bindings of direct execution and the wrappers of the trace
recorder from one description of the MPI surface: the prototypes in
mpi-3.1-c.txt and the constants, sentinels and recorded functions below.

Regenerate (after editing this file or the prototype list; commit the outputs):
    python3 evaluators/direct/bindings/generate.py
Check that the committed outputs are current (CTest's bindings.generated_current):
    python3 evaluators/direct/bindings/generate.py --check

Outputs (paths from the repository's root):
  evaluators/direct/include/mpi_constants.h   C values of every handle, datatype,
                            error class, ...
  evaluators/direct/include/mpi_functions.h   every C function of MPI 3.1 and its
                            PMPI_ name
  evaluators/direct/include/mpif.h            the same constants for Fortran
                            (fixed and free form)
  evaluators/direct/src/generated/stubs.cpp   a weak definition of every C
                            function that stops the run naming it (the runtime's
                            real definitions override them), PMPI_ forwarders,
                            Fortran stubs
  evaluators/direct/src/generated/fortran.cpp Fortran bindings (mpi_xxx_) over
                            the C functions, for every function whose arguments
                            translate by rule
  evaluators/trace/interpose/generated/regions.inc        the recorded functions
                            and their OTF2 region roles
  evaluators/trace/interpose/generated/wrappers_c.inc     the recorder's C
                            signatures and PMPI_ calls
  evaluators/trace/interpose/generated/wrappers_fortran.inc  the recorder's Open
                            MPI Fortran entry points: signatures, calls of the
                            real ones, mpif.h aliases, sentinels
"""
import argparse
import difflib
import filecmp
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # evaluators/direct
REPOSITORY = os.path.dirname(os.path.dirname(ROOT))
DIRECT = "evaluators/direct/"
TRACE = "evaluators/trace/interpose/generated/"
REGENERATE = "python3 evaluators/direct/bindings/generate.py"
# Where write() puts the outputs (the repository, or a scratch tree for --check).
output_root = REPOSITORY

HANDLES = ["MPI_Comm", "MPI_Datatype", "MPI_Op", "MPI_Request", "MPI_Group", "MPI_Errhandler", "MPI_Info",
           "MPI_Win", "MPI_File", "MPI_Message"]

# ---- constants: (name, value); both languages unless marked -------------------------

DATATYPES = [
    ("MPI_DATATYPE_NULL", 0), ("MPI_CHAR", 1), ("MPI_SIGNED_CHAR", 2), ("MPI_UNSIGNED_CHAR", 3), ("MPI_BYTE", 4),
    ("MPI_SHORT", 5), ("MPI_UNSIGNED_SHORT", 6), ("MPI_INT", 7), ("MPI_UNSIGNED", 8), ("MPI_LONG", 9),
    ("MPI_UNSIGNED_LONG", 10), ("MPI_LONG_LONG_INT", 11), ("MPI_LONG_LONG", 11), ("MPI_UNSIGNED_LONG_LONG", 12),
    ("MPI_FLOAT", 13), ("MPI_DOUBLE", 14), ("MPI_LONG_DOUBLE", 15), ("MPI_C_BOOL", 16), ("MPI_INT8_T", 17),
    ("MPI_INT16_T", 18), ("MPI_INT32_T", 19), ("MPI_INT64_T", 20), ("MPI_UINT8_T", 21), ("MPI_UINT16_T", 22),
    ("MPI_UINT32_T", 23), ("MPI_UINT64_T", 24), ("MPI_WCHAR", 25), ("MPI_AINT", 26), ("MPI_OFFSET", 27),
    ("MPI_COUNT", 28), ("MPI_FLOAT_INT", 29), ("MPI_DOUBLE_INT", 30), ("MPI_LONG_INT", 31), ("MPI_2INT", 32),
    ("MPI_SHORT_INT", 33), ("MPI_LONG_DOUBLE_INT", 34), ("MPI_PACKED", 35), ("MPI_C_FLOAT_COMPLEX", 36),
    ("MPI_C_COMPLEX", 36), ("MPI_C_DOUBLE_COMPLEX", 37), ("MPI_C_LONG_DOUBLE_COMPLEX", 38), ("MPI_CXX_BOOL", 39),
    ("MPI_CXX_FLOAT_COMPLEX", 40), ("MPI_CXX_DOUBLE_COMPLEX", 41), ("MPI_CXX_LONG_DOUBLE_COMPLEX", 42),
    ("MPI_INTEGER", 43), ("MPI_REAL", 44), ("MPI_DOUBLE_PRECISION", 45), ("MPI_COMPLEX", 46),
    ("MPI_DOUBLE_COMPLEX", 47), ("MPI_LOGICAL", 48), ("MPI_CHARACTER", 49), ("MPI_INTEGER1", 50),
    ("MPI_INTEGER2", 51), ("MPI_INTEGER4", 52), ("MPI_INTEGER8", 53), ("MPI_REAL4", 54), ("MPI_REAL8", 55),
    ("MPI_REAL16", 56), ("MPI_COMPLEX8", 57), ("MPI_COMPLEX16", 58), ("MPI_COMPLEX32", 59), ("MPI_2REAL", 60),
    ("MPI_2DOUBLE_PRECISION", 61), ("MPI_2INTEGER", 62), ("MPI_LB", 63), ("MPI_UB", 64), ("MPI_LOGICAL1", 65),
    ("MPI_LOGICAL2", 66), ("MPI_LOGICAL4", 67), ("MPI_LOGICAL8", 68), ("MPI_2COMPLEX", 69),
    ("MPI_2DOUBLE_COMPLEX", 70),
]
OPS = [("MPI_OP_NULL", 0), ("MPI_MAX", 1), ("MPI_MIN", 2), ("MPI_SUM", 3), ("MPI_PROD", 4), ("MPI_LAND", 5),
       ("MPI_BAND", 6), ("MPI_LOR", 7), ("MPI_BOR", 8), ("MPI_LXOR", 9), ("MPI_BXOR", 10), ("MPI_MINLOC", 11),
       ("MPI_MAXLOC", 12), ("MPI_REPLACE", 13), ("MPI_NO_OP", 14)]
ERRORS = ["MPI_SUCCESS", "MPI_ERR_BUFFER", "MPI_ERR_COUNT", "MPI_ERR_TYPE", "MPI_ERR_TAG", "MPI_ERR_COMM",
          "MPI_ERR_RANK", "MPI_ERR_REQUEST", "MPI_ERR_ROOT", "MPI_ERR_GROUP", "MPI_ERR_OP", "MPI_ERR_TOPOLOGY",
          "MPI_ERR_DIMS", "MPI_ERR_ARG", "MPI_ERR_UNKNOWN", "MPI_ERR_TRUNCATE", "MPI_ERR_OTHER", "MPI_ERR_INTERN",
          "MPI_ERR_IN_STATUS", "MPI_ERR_PENDING", "MPI_ERR_ACCESS", "MPI_ERR_AMODE", "MPI_ERR_ASSERT",
          "MPI_ERR_BAD_FILE", "MPI_ERR_BASE", "MPI_ERR_CONVERSION", "MPI_ERR_DISP", "MPI_ERR_DUP_DATAREP",
          "MPI_ERR_FILE_EXISTS", "MPI_ERR_FILE_IN_USE", "MPI_ERR_FILE", "MPI_ERR_INFO_KEY", "MPI_ERR_INFO_NOKEY",
          "MPI_ERR_INFO_VALUE", "MPI_ERR_INFO", "MPI_ERR_IO", "MPI_ERR_KEYVAL", "MPI_ERR_LOCKTYPE", "MPI_ERR_NAME",
          "MPI_ERR_NO_MEM", "MPI_ERR_NOT_SAME", "MPI_ERR_NO_SPACE", "MPI_ERR_NO_SUCH_FILE", "MPI_ERR_PORT",
          "MPI_ERR_QUOTA", "MPI_ERR_READ_ONLY", "MPI_ERR_RMA_CONFLICT", "MPI_ERR_RMA_SYNC", "MPI_ERR_SERVICE",
          "MPI_ERR_SIZE", "MPI_ERR_SPAWN", "MPI_ERR_UNSUPPORTED_DATAREP", "MPI_ERR_UNSUPPORTED_OPERATION",
          "MPI_ERR_WIN", "MPI_ERR_RMA_RANGE", "MPI_ERR_RMA_ATTACH", "MPI_ERR_RMA_SHARED", "MPI_ERR_RMA_FLAVOR"]
MISC = [
    ("MPI_VERSION", 3), ("MPI_SUBVERSION", 1),
    ("MPI_COMM_NULL", -1), ("MPI_COMM_WORLD", 0), ("MPI_COMM_SELF", 1),
    ("MPI_GROUP_NULL", -1), ("MPI_GROUP_EMPTY", 0), ("MPI_REQUEST_NULL", -1),
    ("MPI_ERRHANDLER_NULL", 0), ("MPI_ERRORS_ARE_FATAL", 1), ("MPI_ERRORS_RETURN", 2),
    ("MPI_INFO_NULL", 0), ("MPI_INFO_ENV", 1), ("MPI_WIN_NULL", -1), ("MPI_FILE_NULL", -1),
    ("MPI_MESSAGE_NULL", -1), ("MPI_MESSAGE_NO_PROC", -2),
    ("MPI_ERR_LASTCODE", 100),
    ("MPI_ANY_SOURCE", -1), ("MPI_ANY_TAG", -1), ("MPI_PROC_NULL", -2), ("MPI_ROOT", -3),
    ("MPI_UNDEFINED", -32766), ("MPI_BSEND_OVERHEAD", 96), ("MPI_KEYVAL_INVALID", -1),
    ("MPI_TAG_UB", 1), ("MPI_HOST", 2), ("MPI_IO", 3), ("MPI_WTIME_IS_GLOBAL", 4), ("MPI_UNIVERSE_SIZE", 5),
    ("MPI_LASTUSEDCODE", 6), ("MPI_APPNUM", 7), ("MPI_WIN_BASE", 8), ("MPI_WIN_SIZE", 9),
    ("MPI_WIN_DISP_UNIT", 10), ("MPI_WIN_CREATE_FLAVOR", 11), ("MPI_WIN_MODEL", 12),
    ("MPI_IDENT", 0), ("MPI_CONGRUENT", 1), ("MPI_SIMILAR", 2), ("MPI_UNEQUAL", 3),
    ("MPI_GRAPH", 1), ("MPI_CART", 2), ("MPI_DIST_GRAPH", 3),
    ("MPI_THREAD_SINGLE", 0), ("MPI_THREAD_FUNNELED", 1), ("MPI_THREAD_SERIALIZED", 2),
    ("MPI_THREAD_MULTIPLE", 3),
    ("MPI_MAX_PROCESSOR_NAME", 256), ("MPI_MAX_ERROR_STRING", 512), ("MPI_MAX_OBJECT_NAME", 64),
    ("MPI_MAX_INFO_KEY", 255), ("MPI_MAX_INFO_VAL", 1024), ("MPI_MAX_PORT_NAME", 1024),
    ("MPI_MAX_LIBRARY_VERSION_STRING", 256), ("MPI_MAX_DATAREP_STRING", 128),
    ("MPI_COMBINER_NAMED", 1), ("MPI_COMBINER_DUP", 2), ("MPI_COMBINER_CONTIGUOUS", 3),
    ("MPI_COMBINER_VECTOR", 4), ("MPI_COMBINER_HVECTOR_INTEGER", 5), ("MPI_COMBINER_HVECTOR", 6),
    ("MPI_COMBINER_INDEXED", 7), ("MPI_COMBINER_HINDEXED_INTEGER", 8), ("MPI_COMBINER_HINDEXED", 9),
    ("MPI_COMBINER_INDEXED_BLOCK", 10), ("MPI_COMBINER_HINDEXED_BLOCK", 11),
    ("MPI_COMBINER_STRUCT_INTEGER", 12), ("MPI_COMBINER_STRUCT", 13), ("MPI_COMBINER_SUBARRAY", 14),
    ("MPI_COMBINER_DARRAY", 15), ("MPI_COMBINER_F90_REAL", 16), ("MPI_COMBINER_F90_COMPLEX", 17),
    ("MPI_COMBINER_F90_INTEGER", 18), ("MPI_COMBINER_RESIZED", 19),
    ("MPI_ORDER_C", 0), ("MPI_ORDER_FORTRAN", 1), ("MPI_DISTRIBUTE_BLOCK", 0), ("MPI_DISTRIBUTE_CYCLIC", 1),
    ("MPI_DISTRIBUTE_NONE", 2), ("MPI_DISTRIBUTE_DFLT_DARG", -1),
    ("MPI_TYPECLASS_INTEGER", 1), ("MPI_TYPECLASS_REAL", 2), ("MPI_TYPECLASS_COMPLEX", 3),
    ("MPI_COMM_TYPE_SHARED", 1),
    ("MPI_MODE_NOCHECK", 1024), ("MPI_MODE_NOSTORE", 2048), ("MPI_MODE_NOPUT", 4096),
    ("MPI_MODE_NOPRECEDE", 8192), ("MPI_MODE_NOSUCCEED", 16384),
    ("MPI_LOCK_EXCLUSIVE", 1), ("MPI_LOCK_SHARED", 2),
    ("MPI_WIN_FLAVOR_CREATE", 1), ("MPI_WIN_FLAVOR_ALLOCATE", 2), ("MPI_WIN_FLAVOR_DYNAMIC", 3),
    ("MPI_WIN_FLAVOR_SHARED", 4), ("MPI_WIN_SEPARATE", 1), ("MPI_WIN_UNIFIED", 2),
    ("MPI_MODE_CREATE", 1), ("MPI_MODE_RDONLY", 2), ("MPI_MODE_WRONLY", 4), ("MPI_MODE_RDWR", 8),
    ("MPI_MODE_DELETE_ON_CLOSE", 16), ("MPI_MODE_UNIQUE_OPEN", 32), ("MPI_MODE_EXCL", 64),
    ("MPI_MODE_APPEND", 128), ("MPI_MODE_SEQUENTIAL", 256),
    ("MPI_SEEK_SET", 600), ("MPI_SEEK_CUR", 602), ("MPI_SEEK_END", 604),
    ("MPI_DISPLACEMENT_CURRENT", -54278278),
]
# Fortran only (in C, MPI_SOURCE, MPI_TAG and MPI_ERROR are MPI_Status's fields).
FORTRAN_ONLY = [("MPI_STATUS_SIZE", 6), ("MPI_SOURCE", 1), ("MPI_TAG", 2), ("MPI_ERROR", 3)]
FORTRAN_KINDS = [("MPI_ADDRESS_KIND", 8), ("MPI_OFFSET_KIND", 8), ("MPI_COUNT_KIND", 8), ("MPI_INTEGER_KIND", 4)]
# Fortran sentinels: variables in common blocks whose addresses the bindings
# recognize (name, Fortran declaration). The simulated MPI's common block is
# poems_<name in lower case> (C symbol poems_mpi_in_place_), Open MPI's
# mpi_fortran_<name without MPI_> (mpi_fortran_in_place_), which the recorder
# compares with.
SENTINELS = [
    ("MPI_BOTTOM", "integer MPI_BOTTOM"),
    ("MPI_IN_PLACE", "integer MPI_IN_PLACE"),
    ("MPI_STATUS_IGNORE", "integer MPI_STATUS_IGNORE(MPI_STATUS_SIZE)"),
    ("MPI_STATUSES_IGNORE", "integer MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)"),
    ("MPI_ERRCODES_IGNORE", "integer MPI_ERRCODES_IGNORE(1)"),
    ("MPI_UNWEIGHTED", "integer MPI_UNWEIGHTED(1)"),
    ("MPI_WEIGHTS_EMPTY", "integer MPI_WEIGHTS_EMPTY(1)"),
    ("MPI_ARGV_NULL", "character*1 MPI_ARGV_NULL(1)"),
    ("MPI_ARGVS_NULL", "character*1 MPI_ARGVS_NULL(1,1)"),
]


def poems_common_block(sentinel):
    return "poems_" + sentinel.lower()


def open_mpi_common_block(sentinel):
    return "mpi_fortran_" + sentinel[len("MPI_"):].lower()

# Predefined attribute callbacks, procedures in both languages.
CALLBACKS = ["MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN", "MPI_COMM_NULL_COPY_FN",
             "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN", "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_NULL_DELETE_FN",
             "MPI_TYPE_DUP_FN", "MPI_WIN_NULL_COPY_FN", "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_DUP_FN"]

# Fortran bindings written by hand (fortran_special.cpp): their arguments do
# not follow the rules below (argc/argv, attribute values, returned
# pointers, procedures with Fortran conventions, functions).
FORTRAN_BY_HAND = {
    "MPI_Init", "MPI_Init_thread", "MPI_Wtime", "MPI_Wtick", "MPI_Aint_add", "MPI_Aint_diff", "MPI_Pcontrol",
    "MPI_Comm_get_attr", "MPI_Comm_set_attr", "MPI_Comm_create_keyval", "MPI_Attr_get", "MPI_Attr_put",
    "MPI_Keyval_create", "MPI_Type_get_attr", "MPI_Type_set_attr", "MPI_Type_create_keyval", "MPI_Win_get_attr",
    "MPI_Win_set_attr", "MPI_Win_create_keyval", "MPI_Op_create", "MPI_Comm_create_errhandler",
    "MPI_Errhandler_create", "MPI_Win_create_errhandler", "MPI_File_create_errhandler",
    # MPI-1's Fortran bindings take default INTEGER where C takes MPI_Aint.
    "MPI_Address", "MPI_Type_extent", "MPI_Type_struct", "MPI_Type_hvector", "MPI_Type_hindexed", "MPI_Type_lb",
    "MPI_Type_ub",
}
# C-only functions (no Fortran binding).
C_ONLY = re.compile(r"^MPI_(T_.*|.*_f2c|.*_c2f|Status_c2f|Status_f2c|Type_create_f90_.*)$")

# The functions `poems trace` records, each an OTF2 region with its role, in
# region id order (the ids are written into archives: append, do not reorder).
TRACE_REGIONS = [
    ("MPI_Init", "FUNCTION"), ("MPI_Init_thread", "FUNCTION"), ("MPI_Finalize", "FUNCTION"),
    ("MPI_Send", "POINT2POINT"), ("MPI_Ssend", "POINT2POINT"), ("MPI_Bsend", "POINT2POINT"),
    ("MPI_Rsend", "POINT2POINT"), ("MPI_Isend", "POINT2POINT"), ("MPI_Issend", "POINT2POINT"),
    ("MPI_Ibsend", "POINT2POINT"), ("MPI_Irsend", "POINT2POINT"), ("MPI_Recv", "POINT2POINT"),
    ("MPI_Irecv", "POINT2POINT"), ("MPI_Sendrecv", "POINT2POINT"), ("MPI_Sendrecv_replace", "POINT2POINT"),
    ("MPI_Probe", "POINT2POINT"), ("MPI_Iprobe", "POINT2POINT"), ("MPI_Send_init", "POINT2POINT"),
    ("MPI_Ssend_init", "POINT2POINT"), ("MPI_Bsend_init", "POINT2POINT"), ("MPI_Rsend_init", "POINT2POINT"),
    ("MPI_Recv_init", "POINT2POINT"), ("MPI_Start", "POINT2POINT"), ("MPI_Startall", "POINT2POINT"),
    ("MPI_Wait", "POINT2POINT"), ("MPI_Waitall", "POINT2POINT"), ("MPI_Waitany", "POINT2POINT"),
    ("MPI_Waitsome", "POINT2POINT"), ("MPI_Test", "POINT2POINT"), ("MPI_Testall", "POINT2POINT"),
    ("MPI_Testany", "POINT2POINT"), ("MPI_Testsome", "POINT2POINT"), ("MPI_Request_free", "POINT2POINT"),
    ("MPI_Cancel", "POINT2POINT"), ("MPI_Barrier", "BARRIER"), ("MPI_Bcast", "COLL_ONE2ALL"),
    ("MPI_Scatter", "COLL_ONE2ALL"), ("MPI_Scatterv", "COLL_ONE2ALL"), ("MPI_Reduce", "COLL_ALL2ONE"),
    ("MPI_Gather", "COLL_ALL2ONE"), ("MPI_Gatherv", "COLL_ALL2ONE"), ("MPI_Allreduce", "COLL_ALL2ALL"),
    ("MPI_Allgather", "COLL_ALL2ALL"), ("MPI_Allgatherv", "COLL_ALL2ALL"), ("MPI_Alltoall", "COLL_ALL2ALL"),
    ("MPI_Alltoallv", "COLL_ALL2ALL"), ("MPI_Reduce_scatter", "COLL_ALL2ALL"),
    ("MPI_Reduce_scatter_block", "COLL_ALL2ALL"), ("MPI_Scan", "COLL_OTHER"), ("MPI_Exscan", "COLL_OTHER"),
    ("MPI_Comm_dup", "COLL_OTHER"), ("MPI_Comm_dup_with_info", "COLL_OTHER"), ("MPI_Comm_split", "COLL_OTHER"),
    ("MPI_Comm_split_type", "COLL_OTHER"), ("MPI_Comm_create", "COLL_OTHER"),
    ("MPI_Comm_create_group", "COLL_OTHER"), ("MPI_Cart_create", "COLL_OTHER"), ("MPI_Cart_sub", "COLL_OTHER"),
    ("MPI_Comm_free", "FUNCTION"),
]
# C int arguments that are LOGICAL in the Fortran bindings.
FORTRAN_LOGICALS = {"flag", "periods", "reorder", "remain_dims", "weighted"}

# ---- parsing -----------------------------------------------------------------------------


class Param:
    def __init__(self, text):
        text = text.strip()
        self.text = text
        m = re.match(r"^(.*?)\s*\b([A-Za-z_][A-Za-z_0-9]*)\s*((?:\[[^\]]*\])*)$", text)
        if text in ("void", "...") or not m:
            self.type, self.name, self.array = text, "", ""
        else:
            self.type, self.name, self.array = m.group(1).strip(), m.group(2), m.group(3)
        self.const = self.type.startswith("const ")
        self.base = self.type.replace("const ", "").replace("*", "").strip()
        self.pointers = self.type.count("*") + (1 if self.array else 0)


class Function:
    def __init__(self, line):
        m = re.match(r"^(.*?)\b(MPI_\w+)\s*\((.*)\)$", line)
        if not m:
            raise SystemExit("cannot parse: " + line)
        self.ret, self.name, args = m.group(1).strip(), m.group(2), m.group(3)
        self.params = [] if args.strip() in ("", "void") else [Param(a) for a in split_args(args)]
        self.line = line

    def c_params(self, with_names=True):
        if not self.params:
            return "void"
        return ", ".join(p.text if with_names else p.text for p in self.params)

    def arg_names(self):
        return ", ".join(p.name for p in self.params if p.name)


def split_args(args):
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch in "([" and 1 or 0
        depth -= ch in ")]" and 1 or 0
        cur += ch
    if cur.strip():
        out.append(cur)
    return out


def load():
    fns = []
    for line in open(os.path.join(HERE, "mpi-3.1-c.txt")):
        line = line.strip()
        if line and not line.startswith("#"):
            fns.append(Function(line))
    return fns


# ---- C headers -----------------------------------------------------------------------------

GENERATED = "Generated by evaluators/direct/bindings/generate.py; do not edit."


written = []  # the outputs, paths from the repository's root


def write(path, text):
    written.append(path)
    path = os.path.join(output_root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def c_constants():
    out = ["/* " + GENERATED + " */", "#ifndef POEMS_MPI_CONSTANTS_H", "#define POEMS_MPI_CONSTANTS_H", ""]
    for name, value in MISC + OPS + DATATYPES:
        out.append("#define %s %s" % (name, value if value >= 0 else "(%d)" % value))
    for i, name in enumerate(ERRORS):
        out.append("#define %s %d" % (name, i))
    out += ["", "#endif", ""]
    write(DIRECT + "include/mpi_constants.h", "\n".join(out))


def c_functions(fns):
    out = ["/* " + GENERATED + " */", "/* Every C function of MPI 3.1; docs/direct.md says which ones run. */",
           "#ifndef POEMS_MPI_FUNCTIONS_H", "#define POEMS_MPI_FUNCTIONS_H", ""]
    for f in fns:
        out.append("%s %s(%s);" % (f.ret, f.name, f.c_params()))
    out.append("")
    for f in fns:
        out.append("%s P%s(%s);" % (f.ret, f.name, f.c_params()))
    out += ["", "#endif", ""]
    write(DIRECT + "include/mpi_functions.h", "\n".join(out))


# ---- Fortran header ------------------------------------------------------------------------


def fortran_header(fns):
    out = ["! " + GENERATED,
           "! The simulated MPI for Fortran (mpif.h; `use mpi` includes it).",
           "! Valid as fixed and as free form source."]

    def decl(name, value, kind="integer"):
        out.append("      %s %s" % (kind, name))
        out.append("      parameter (%s=%d)" % (name, value))

    for name, value in FORTRAN_KINDS:
        decl(name, value)
    for name, value in FORTRAN_ONLY + MISC + OPS + DATATYPES:
        decl(name, value)
    for i, name in enumerate(ERRORS):
        decl(name, i)
    for name, declaration in SENTINELS:
        out.append("      " + declaration)
        out.append("      common /%s/ %s" % (poems_common_block(name), name))
    for name in CALLBACKS:
        out.append("      external %s" % name)
    for name, kind in (("MPI_WTIME", "double precision"), ("MPI_WTICK", "double precision"),
                       ("PMPI_WTIME", "double precision"), ("PMPI_WTICK", "double precision"),
                       ("MPI_AINT_ADD", "integer(kind=MPI_ADDRESS_KIND)"),
                       ("MPI_AINT_DIFF", "integer(kind=MPI_ADDRESS_KIND)")):
        out.append("      %s %s" % (kind, name))
        out.append("      external %s" % name)
    for line in out:
        if len(line) > 72:
            raise SystemExit("mpif.h line longer than 72 columns: " + line)
    write(DIRECT + "include/mpif.h", "\n".join(out) + "\n")


# ---- stubs and PMPI -------------------------------------------------------------------------


def stubs(fns):
    out = ["// " + GENERATED,
           "// Weak definitions of every C function of MPI 3.1: a function the runtime",
           "// does not implement stops the run with one line naming it (the real",
           "// definitions in the other files override these). PMPI_ names forward to",
           "// the MPI_ ones, and Fortran names that have no binding stop naming the",
           "// function too.",
           '#include "../unsupported.h"',
           "",
           '#pragma GCC diagnostic ignored "-Wunused-parameter"',
           "",
           'extern "C" {',
           ""]
    for f in fns:
        if f.ret == "int":
            out.append('__attribute__((weak)) int %s(%s) { return poems_unsupported("%s"); }' %
                       (f.name, f.c_params(), f.name))
    out.append("")
    for f in fns:
        if f.params and f.params[-1].text == "...":
            continue  # varargs (MPI_Pcontrol): by hand
        call = "%s(%s)" % (f.name, f.arg_names())
        out.append("%s P%s(%s) { %s%s; }" % (f.ret, f.name, f.c_params(), "" if f.ret == "void" else "return ",
                                             call))
    out.append("")
    for f in fns:
        if C_ONLY.match(f.name):
            continue
        lower = f.name.lower()
        out.append('__attribute__((weak)) void %s_(void) { poems_unsupported("%s"); }' % (lower, f.name))
    out += ["", '}  // extern "C"', ""]
    write(DIRECT + "src/generated/stubs.cpp", "\n".join(out))


# ---- Fortran bindings ------------------------------------------------------------------------


def fortran_param(f, p):
    """(wrapper parameter, call argument, prologue, epilogue, hidden length) or None if no rule applies."""
    t, name = p.base, p.name
    if p.text == "...":
        return None
    if t.endswith("_function"):
        return None
    if t == "void":  # choice buffers and other addresses
        return ("void* %s" % name, "poems_fbuf(%s)" % name, "", "", None)
    if t == "char":
        if p.pointers == 1 and p.const:
            return ("const char* %s" % name, "%s_c.c_str()" % name,
                    "const std::string %s_c = poems_fstring(%s, %s_len);" % (name, name, name), "",
                    "std::size_t %s_len" % name)
        if p.pointers == 1:
            return ("char* %s" % name, "%s_c.data()" % name,
                    "std::string %s_c(%s_len + 2048, '\\0');" % (name, name),
                    "poems_fstring_out(%s_c.c_str(), %s, %s_len);" % (name, name, name),
                    "std::size_t %s_len" % name)
        return None
    if t == "MPI_Status":
        if p.array:
            return ("MPI_Fint* %s" % name, "poems_fstatuses(%s)" % name, "", "", None)
        return ("MPI_Fint* %s" % name, "poems_fstatus(%s)" % name, "", "", None)
    if t in ("int", "MPI_Aint", "MPI_Offset", "MPI_Count", "MPI_Fint") or t in HANDLES:
        ftype = {"MPI_Aint": "MPI_Aint", "MPI_Offset": "MPI_Offset", "MPI_Count": "MPI_Count"}.get(t, "MPI_Fint")
        ctype = t if t != "int" else "int"
        if p.pointers == 0:
            return ("const %s* %s" % (ftype, name), "static_cast<%s>(*%s)" % (ctype, name), "", "", None)
        if "[][" in p.array:  # int ranges[][3]
            return ("MPI_Fint* %s" % name, "reinterpret_cast<int(*)[3]>(%s)" % name, "", "", None)
        if name == "array_of_errcodes":
            return ("MPI_Fint* %s" % name, "poems_ferrcodes(%s)" % name, "", "", None)
        if name in ("sourceweights", "destweights", "weights"):
            return ("MPI_Fint* %s" % name, "poems_fweights(%s)" % name, "", "", None)
        return ("%s* %s" % (ftype, name), "reinterpret_cast<%s%s*>(%s)" % ("const " if p.const else "", ctype,
                                                                         name), "", "", None)
    return None


def fortran(fns):
    out = ["// " + GENERATED,
           "// Fortran bindings (gfortran's names: lower case, one underscore; every",
           "// argument by reference; ierror last; string lengths after all arguments)",
           "// over the C functions, for every function whose arguments translate by",
           "// rule. Handles are the C handles (integers), statuses the C struct",
           "// (MPI_STATUS_SIZE integers).",
           '#include "../fortran.h"',
           "",
           'extern "C" {',
           ""]
    count = 0
    for f in fns:
        if C_ONLY.match(f.name) or f.name in FORTRAN_BY_HAND or f.ret != "int":
            continue
        parts = [fortran_param(f, p) for p in f.params]
        if any(x is None for x in parts):
            continue
        params = [x[0] for x in parts] + ["MPI_Fint* ierror"] + [x[4] for x in parts if x[4]]
        prologue = [x[2] for x in parts if x[2]]
        epilogue = [x[3] for x in parts if x[3]]
        call = "%s(%s)" % (f.name, ", ".join(x[1] for x in parts))
        body = prologue + ["const int rc = %s;" % call] + epilogue + ["*ierror = rc;"]
        for prefix in ("", "p"):
            out.append("void %s%s_(%s) {" % (prefix, f.name.lower(), ", ".join(params)))
            out += ["  " + b for b in body]
            out.append("}")
        count += 1
    out += ["", '}  // extern "C"', ""]
    write(DIRECT + "src/generated/fortran.cpp", "\n".join(out))
    return count


# ---- the trace recorder's wrappers -------------------------------------------------------


def recorded(fns):
    by_name = {f.name: f for f in fns}
    missing = [name for name, _ in TRACE_REGIONS if name not in by_name]
    if missing:
        raise SystemExit("recorded functions not in mpi-3.1-c.txt: " + ", ".join(missing))
    return [by_name[name] for name, _ in TRACE_REGIONS]


def trace_regions():
    out = ["// " + GENERATED,
           "// The MPI functions `poems trace` records, each an OTF2 region (X-macro:",
           "// name, OTF2 region role), in region id order; regions.h includes it.",
           "#define POEMS_TRACE_REGIONS(X) \\"]
    out += ["  X(%s, %s) %s" % (name, role, "\\" if i + 1 < len(TRACE_REGIONS) else "")
            for i, (name, role) in enumerate(TRACE_REGIONS)]
    out[-1] = out[-1].rstrip()
    write(TRACE + "regions.inc", "\n".join(out) + "\n")


def trace_c_wrappers(fns):
    out = ["// " + GENERATED,
           "// The C signatures of the functions `poems trace` records (checked by the",
           "// compiler against the MPI library's mpi.h) and their PMPI_ calls passing",
           "// every argument on. wrappers_c.cpp writes each wrapper as",
           "//   POEMS_C_WRAPPER(MPI_Send) { ...record...; return POEMS_C_FORWARD(MPI_Send); }",
           "// with the arguments named as here.",
           "#define POEMS_C_WRAPPER(name) POEMS_C_SIGNATURE_##name",
           "#define POEMS_C_FORWARD(name) POEMS_C_FORWARD_##name",
           ""]
    for f in recorded(fns):
        if f.ret != "int" or (f.params and f.params[-1].text == "..."):
            raise SystemExit("the recorder has no C rule for " + f.line)
        out.append("#define POEMS_C_SIGNATURE_%s int %s(%s)" % (f.name, f.name, f.c_params()))
        out.append("#define POEMS_C_FORWARD_%s P%s(%s)" % (f.name, f.name, f.arg_names()))
    write(TRACE + "wrappers_c.inc", "\n".join(out) + "\n")


def open_mpi_fortran_param(f, p):
    """The parameter of Open MPI's mpif.h binding (ompi_<name>_f) for C parameter p, or "" if it has none."""
    if p.name in ("argc", "argv"):  # MPI_INIT(IERROR): no command line in Fortran
        return ""
    if p.base == "void":  # choice buffers
        return "char* " + p.name
    if p.base == "int" and p.name in FORTRAN_LOGICALS:
        return "Logical* " + p.name
    if p.base in ("int", "MPI_Fint", "MPI_Status") or p.base in HANDLES:
        return "F* " + p.name
    if p.base in ("MPI_Aint", "MPI_Offset", "MPI_Count"):
        return "%s* %s" % (p.base, p.name)
    raise SystemExit("the recorder has no Fortran rule for %s of %s" % (p.text, f.name))


def trace_fortran_wrappers(fns):
    out = ["// " + GENERATED,
           "// Open MPI's Fortran entry points of the functions `poems trace` records",
           "// (mpif.h and `use mpi` call ompi_<name>_f; every argument by reference,",
           "// ierr last). wrappers_fortran.cpp includes this after defining F (MPI_Fint),",
           "// Logical (Fortran's default LOGICAL) and real_function (dlsym(RTLD_NEXT)),",
           "// and writes each wrapper as",
           "//   POEMS_FORTRAN_WRAPPER(MPI_Send) { ...record...; POEMS_FORTRAN_FORWARD(MPI_Send); }",
           "// with the arguments named as here; POEMS_FORTRAN_FORWARD calls Open MPI's",
           "// own ompi_<name>_f (looked up on first use). Every mpif.h spelling of a",
           "// routine is an alias of the wrapper, so a missing wrapper fails to compile.",
           "#define POEMS_FORTRAN_WRAPPER(name) POEMS_FORTRAN_SIGNATURE_##name",
           "#define POEMS_FORTRAN_FORWARD(name) POEMS_FORTRAN_FORWARD_##name",
           "",
           "// Open MPI's Fortran sentinels (common blocks; weak: the program may not",
           "// reference them).",
           'extern "C" {']
    for name, _ in SENTINELS:
        out.append("extern int %s_ __attribute__((weak));" % open_mpi_common_block(name))
    out += ['}  // extern "C"', ""]
    for f in recorded(fns):
        lower = f.name.lower()[len("mpi_"):]
        entry = "ompi_%s_f" % lower
        params = [x for x in (open_mpi_fortran_param(f, p) for p in f.params) if x] + ["F* ierr"]
        args = [x.split("* ")[1] for x in params]
        out.append("// %s" % f.name)
        out.append('extern "C" void %s(%s);' % (entry, ", ".join(params)))
        out.append("#define POEMS_FORTRAN_SIGNATURE_%s void %s(%s)" % (f.name, entry, ", ".join(params)))
        out.append("namespace {")
        out.append("decltype(&%s) real_%s() {" % (entry, entry))
        out.append('  static const auto real = real_function<decltype(&%s)>("%s");' % (entry, entry))
        out.append("  return real;")
        out.append("}")
        out.append("}  // namespace")
        out.append("#define POEMS_FORTRAN_FORWARD_%s real_%s()(%s)" % (f.name, entry, ", ".join(args)))
        for alias in ("mpi_" + lower, "mpi_%s_" % lower, "mpi_%s__" % lower, f.name.upper()):
            out.append('extern "C" decltype(%s) %s __attribute__((alias("%s")));' % (entry, alias, entry))
        out.append("")
    write(TRACE + "wrappers_fortran.inc", "\n".join(out))


def generate():
    fns = load()
    c_constants()
    c_functions(fns)
    fortran_header(fns)
    stubs(fns)
    n = fortran(fns)
    trace_regions()
    trace_c_wrappers(fns)
    trace_fortran_wrappers(fns)
    return len(fns), n


def check():
    """Generates into a scratch tree and compares with the committed outputs; 0 if all are current."""
    global output_root
    stale = []
    with tempfile.TemporaryDirectory(prefix="poems-bindings-") as scratch:
        output_root = scratch
        generate()
        for path in written:
            committed = os.path.join(REPOSITORY, path)
            fresh = os.path.join(scratch, path)
            if not os.path.exists(committed):
                stale.append(path)
                print("%s: missing (the generator writes it)" % path)
            elif not filecmp.cmp(committed, fresh, shallow=False):
                stale.append(path)
                print("%s: differs from what the generator writes:" % path)
                with open(committed) as a, open(fresh) as b:
                    diff = list(difflib.unified_diff(a.readlines(), b.readlines(), "committed/" + path,
                                                     "generated/" + path))
                sys.stdout.writelines(diff[:40])
                if len(diff) > 40:
                    print("... (%d more diff lines)" % (len(diff) - 40))
        # A generated directory holds only the generator's outputs.
        for folder in (DIRECT + "src/generated/", TRACE):
            present = os.path.join(REPOSITORY, folder)
            for name in sorted(os.listdir(present) if os.path.isdir(present) else []):
                if folder + name not in written:
                    stale.append(folder + name)
                    print("%s: not written by the generator (remove it, or generate it)" % (folder + name))
    if stale:
        print("%d generated file(s) not current; regenerate with (from the repository's root):\n  %s" %
              (len(stale), REGENERATE))
        return 1
    print("all %d generated files are current" % len(written))
    return 0


def main():
    parser = argparse.ArgumentParser(description="Generates the MPI bindings of direct execution and the trace "
                                     "recorder's wrappers from mpi-3.1-c.txt.")
    parser.add_argument("--check", action="store_true",
                        help="generate into a scratch directory and report every committed output that differs")
    if parser.parse_args().check:
        return check()
    functions, fortran_bindings = generate()
    print("%d C functions, %d Fortran bindings by rule, %d recorded functions" %
          (functions, fortran_bindings, len(TRACE_REGIONS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
