#include "datatypes.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <cwchar>
#include <type_traits>
#include <vector>

namespace poems::direct::detail {

namespace {

enum class Family : std::uint8_t { None, Integer, Floating, Complex, Logical, Byte, Pair, Marker };

struct Predefined {
  const char* name;
  std::uint32_t size;    // packed bytes
  std::uint32_t extent;  // bytes in memory (C pair types have padding)
  std::uint32_t align;
  Family family;
};

// Indexed by handle (mpi_constants.h).
const Predefined kTypes[] = {
    {"MPI_DATATYPE_NULL", 0, 0, 1, Family::None},
    {"MPI_CHAR", 1, 1, 1, Family::Integer},
    {"MPI_SIGNED_CHAR", 1, 1, 1, Family::Integer},
    {"MPI_UNSIGNED_CHAR", 1, 1, 1, Family::Integer},
    {"MPI_BYTE", 1, 1, 1, Family::Byte},
    {"MPI_SHORT", 2, 2, 2, Family::Integer},
    {"MPI_UNSIGNED_SHORT", 2, 2, 2, Family::Integer},
    {"MPI_INT", 4, 4, 4, Family::Integer},
    {"MPI_UNSIGNED", 4, 4, 4, Family::Integer},
    {"MPI_LONG", 8, 8, 8, Family::Integer},
    {"MPI_UNSIGNED_LONG", 8, 8, 8, Family::Integer},
    {"MPI_LONG_LONG", 8, 8, 8, Family::Integer},
    {"MPI_UNSIGNED_LONG_LONG", 8, 8, 8, Family::Integer},
    {"MPI_FLOAT", 4, 4, 4, Family::Floating},
    {"MPI_DOUBLE", 8, 8, 8, Family::Floating},
    {"MPI_LONG_DOUBLE", 16, 16, 16, Family::Floating},
    {"MPI_C_BOOL", 1, 1, 1, Family::Logical},
    {"MPI_INT8_T", 1, 1, 1, Family::Integer},
    {"MPI_INT16_T", 2, 2, 2, Family::Integer},
    {"MPI_INT32_T", 4, 4, 4, Family::Integer},
    {"MPI_INT64_T", 8, 8, 8, Family::Integer},
    {"MPI_UINT8_T", 1, 1, 1, Family::Integer},
    {"MPI_UINT16_T", 2, 2, 2, Family::Integer},
    {"MPI_UINT32_T", 4, 4, 4, Family::Integer},
    {"MPI_UINT64_T", 8, 8, 8, Family::Integer},
    {"MPI_WCHAR", 4, 4, 4, Family::Integer},
    {"MPI_AINT", 8, 8, 8, Family::Integer},
    {"MPI_OFFSET", 8, 8, 8, Family::Integer},
    {"MPI_COUNT", 8, 8, 8, Family::Integer},
    {"MPI_FLOAT_INT", 8, 8, 4, Family::Pair},
    {"MPI_DOUBLE_INT", 12, 16, 8, Family::Pair},
    {"MPI_LONG_INT", 12, 16, 8, Family::Pair},
    {"MPI_2INT", 8, 8, 4, Family::Pair},
    {"MPI_SHORT_INT", 6, 8, 4, Family::Pair},
    {"MPI_LONG_DOUBLE_INT", 20, 32, 16, Family::Pair},
    {"MPI_PACKED", 1, 1, 1, Family::Byte},
    {"MPI_C_FLOAT_COMPLEX", 8, 8, 4, Family::Complex},
    {"MPI_C_DOUBLE_COMPLEX", 16, 16, 8, Family::Complex},
    {"MPI_C_LONG_DOUBLE_COMPLEX", 32, 32, 16, Family::Complex},
    {"MPI_CXX_BOOL", 1, 1, 1, Family::Logical},
    {"MPI_CXX_FLOAT_COMPLEX", 8, 8, 4, Family::Complex},
    {"MPI_CXX_DOUBLE_COMPLEX", 16, 16, 8, Family::Complex},
    {"MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 32, 16, Family::Complex},
    {"MPI_INTEGER", 4, 4, 4, Family::Integer},
    {"MPI_REAL", 4, 4, 4, Family::Floating},
    {"MPI_DOUBLE_PRECISION", 8, 8, 8, Family::Floating},
    {"MPI_COMPLEX", 8, 8, 4, Family::Complex},
    {"MPI_DOUBLE_COMPLEX", 16, 16, 8, Family::Complex},
    {"MPI_LOGICAL", 4, 4, 4, Family::Logical},
    {"MPI_CHARACTER", 1, 1, 1, Family::Byte},
    {"MPI_INTEGER1", 1, 1, 1, Family::Integer},
    {"MPI_INTEGER2", 2, 2, 2, Family::Integer},
    {"MPI_INTEGER4", 4, 4, 4, Family::Integer},
    {"MPI_INTEGER8", 8, 8, 8, Family::Integer},
    {"MPI_REAL4", 4, 4, 4, Family::Floating},
    {"MPI_REAL8", 8, 8, 8, Family::Floating},
    {"MPI_REAL16", 16, 16, 16, Family::Floating},
    {"MPI_COMPLEX8", 8, 8, 4, Family::Complex},
    {"MPI_COMPLEX16", 16, 16, 8, Family::Complex},
    {"MPI_COMPLEX32", 32, 32, 16, Family::Byte},
    {"MPI_2REAL", 8, 8, 4, Family::Pair},
    {"MPI_2DOUBLE_PRECISION", 16, 16, 8, Family::Pair},
    {"MPI_2INTEGER", 8, 8, 4, Family::Pair},
    {"MPI_LB", 0, 0, 1, Family::Marker},
    {"MPI_UB", 0, 0, 1, Family::Marker},
    {"MPI_LOGICAL1", 1, 1, 1, Family::Logical},
    {"MPI_LOGICAL2", 2, 2, 2, Family::Logical},
    {"MPI_LOGICAL4", 4, 4, 4, Family::Logical},
    {"MPI_LOGICAL8", 8, 8, 8, Family::Logical},
    {"MPI_2COMPLEX", 16, 16, 4, Family::Byte},
    {"MPI_2DOUBLE_COMPLEX", 32, 32, 8, Family::Byte},
};
static_assert(sizeof kTypes / sizeof *kTypes == kLastPredefined + 1);

// A logical value of Fortran (gfortran: .true. is 1) or C.
template <typename T>
struct Logical {
  T v;
};
// A MINLOC/MAXLOC pair in packed form: the value, then the index.
template <typename V, typename I>
struct Pair {
  V value;
  I index;
};

// Calls f(T{}) with the element type of `type`; false if it has none.
template <typename F>
bool with_type(MPI_Datatype type, F&& f) {
  switch (type) {
    case MPI_CHAR: f(char{}); return true;
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T:
    case MPI_INTEGER1: f(std::int8_t{}); return true;
    case MPI_UNSIGNED_CHAR:
    case MPI_UINT8_T:
    case MPI_BYTE:
    case MPI_PACKED:
    case MPI_CHARACTER: f(std::uint8_t{}); return true;
    case MPI_SHORT:
    case MPI_INT16_T:
    case MPI_INTEGER2: f(std::int16_t{}); return true;
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T: f(std::uint16_t{}); return true;
    case MPI_INT:
    case MPI_INT32_T:
    case MPI_INTEGER:
    case MPI_INTEGER4:
    case MPI_WCHAR: f(std::int32_t{}); return true;
    case MPI_UNSIGNED:
    case MPI_UINT32_T: f(std::uint32_t{}); return true;
    case MPI_LONG:
    case MPI_LONG_LONG:
    case MPI_INT64_T:
    case MPI_INTEGER8:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT: f(std::int64_t{}); return true;
    case MPI_UNSIGNED_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T: f(std::uint64_t{}); return true;
    case MPI_FLOAT:
    case MPI_REAL:
    case MPI_REAL4: f(0.0f); return true;
    case MPI_DOUBLE:
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8: f(0.0); return true;
    case MPI_LONG_DOUBLE: f(static_cast<long double>(0)); return true;
    case MPI_REAL16: f(static_cast<__float128>(0)); return true;
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
    case MPI_LOGICAL1: f(Logical<std::uint8_t>{}); return true;
    case MPI_LOGICAL2: f(Logical<std::uint16_t>{}); return true;
    case MPI_LOGICAL:
    case MPI_LOGICAL4: f(Logical<std::uint32_t>{}); return true;
    case MPI_LOGICAL8: f(Logical<std::uint64_t>{}); return true;
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
    case MPI_COMPLEX:
    case MPI_COMPLEX8: f(std::complex<float>{}); return true;
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16: f(std::complex<double>{}); return true;
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX: f(std::complex<long double>{}); return true;
    case MPI_FLOAT_INT: f(Pair<float, int>{}); return true;
    case MPI_DOUBLE_INT: f(Pair<double, int>{}); return true;
    case MPI_LONG_INT: f(Pair<long, int>{}); return true;
    case MPI_2INT: f(Pair<int, int>{}); return true;
    case MPI_SHORT_INT: f(Pair<short, int>{}); return true;
    case MPI_LONG_DOUBLE_INT: f(Pair<long double, int>{}); return true;
    case MPI_2REAL: f(Pair<float, float>{}); return true;
    case MPI_2DOUBLE_PRECISION: f(Pair<double, double>{}); return true;
    case MPI_2INTEGER: f(Pair<int, int>{}); return true;
    default: return false;
  }
}

template <typename T>
struct IsPair : std::false_type {};
template <typename V, typename I>
struct IsPair<Pair<V, I>> : std::true_type {};
template <typename T>
struct IsLogical : std::false_type {};
template <typename T>
struct IsLogical<Logical<T>> : std::true_type {};
template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

// Packed size of an element: a pair's two fields without padding.
template <typename T>
constexpr std::size_t packed_size() {
  if constexpr (IsPair<T>::value)
    return sizeof(T::value) + sizeof(T::index);
  else
    return sizeof(T);
}

template <typename T>
T load(const std::byte* p) {
  T v{};
  if constexpr (IsPair<T>::value) {
    std::memcpy(&v.value, p, sizeof v.value);
    std::memcpy(&v.index, p + sizeof v.value, sizeof v.index);
  } else {
    std::memcpy(&v, p, sizeof v);
  }
  return v;
}

template <typename T>
void store(std::byte* p, const T& v) {
  if constexpr (IsPair<T>::value) {
    std::memcpy(p, &v.value, sizeof v.value);
    std::memcpy(p + sizeof v.value, &v.index, sizeof v.index);
  } else {
    std::memcpy(p, &v, sizeof v);
  }
}

template <typename T>
void apply(MPI_Op op, T& a, const T& b) {
  if constexpr (IsPair<T>::value) {
    // MINLOC / MAXLOC: the extreme value, the smaller index on ties.
    const bool take = op == MPI_MINLOC ? (b.value < a.value || (b.value == a.value && b.index < a.index))
                                       : (b.value > a.value || (b.value == a.value && b.index < a.index));
    if (take) a = b;
  } else if constexpr (IsLogical<T>::value) {
    const bool x = a.v != 0, y = b.v != 0;
    switch (op) {
      case MPI_LAND: a.v = x && y; break;
      case MPI_LOR: a.v = x || y; break;
      case MPI_LXOR: a.v = x != y; break;
      case MPI_REPLACE: a = b; break;
      default: break;
    }
  } else if constexpr (IsComplex<T>::value) {
    switch (op) {
      case MPI_SUM: a += b; break;
      case MPI_PROD: a *= b; break;
      case MPI_REPLACE: a = b; break;
      default: break;
    }
  } else {
    switch (op) {
      case MPI_MAX: a = b > a ? b : a; break;
      case MPI_MIN: a = b < a ? b : a; break;
      case MPI_SUM: a = static_cast<T>(a + b); break;
      case MPI_PROD: a = static_cast<T>(a * b); break;
      case MPI_LAND: a = static_cast<T>(a != 0 && b != 0); break;
      case MPI_LOR: a = static_cast<T>(a != 0 || b != 0); break;
      case MPI_LXOR: a = static_cast<T>((a != 0) != (b != 0)); break;
      case MPI_REPLACE: a = b; break;
      default:
        if constexpr (std::is_integral_v<T>) {
          switch (op) {
            case MPI_BAND: a = static_cast<T>(a & b); break;
            case MPI_BOR: a = static_cast<T>(a | b); break;
            case MPI_BXOR: a = static_cast<T>(a ^ b); break;
            default: break;
          }
        }
    }
  }
}

Family family(MPI_Datatype type) { return is_predefined(type) ? kTypes[type].family : Family::None; }

void add_runs(svector<std::pair<std::uint32_t, std::uint64_t>>& runs,
              const svector<std::pair<std::uint32_t, std::uint64_t>>& more, std::uint64_t times) {
  for (std::uint64_t t = 0; t < times; ++t) {
    for (const auto& [size, n] : more) {
      if (!runs.empty() && runs.back().first == size)
        runs.back().second += n;
      else
        runs.emplace_back(size, n);
    }
    // One repetition of a single run is all the runs need (the rest only adds to its count).
    if (more.size() == 1 && times > 1) {
      runs.back().second += more.front().second * (times - 1 - t);
      break;
    }
  }
}

void add_block(svector<Block>& blocks, std::int64_t disp, std::uint64_t len) {
  if (len == 0) return;
  if (!blocks.empty() && blocks.back().disp + static_cast<std::int64_t>(blocks.back().len) == disp) {
    blocks.back().len += len;
    return;
  }
  blocks.push_back(Block{disp, len});
}

// The widest alignment among old types; the element type shared by all.
struct Builder {
  TypeInfo t;
  bool any = false, any_data = false, mixed = false;
  std::int64_t min_lb = 0, max_ub = 0, data_lb = 0, data_ub = 0;
  std::int64_t marked_lb = 0, marked_ub = 0;

  // `count` items of `old` starting at byte `disp`, consecutive by its extent.
  void add(const TypeInfo& old, std::int64_t disp, std::int64_t count) {
    if (count <= 0) return;
    const std::int64_t ext = old.extent();
    const std::int64_t first_lb = disp + old.lb, last_ub = disp + (count - 1) * ext + old.ub;
    const std::int64_t lo = std::min(first_lb, disp + (count - 1) * ext + old.lb);
    const std::int64_t hi = std::max(last_ub, disp + old.ub);
    if (!any) {
      min_lb = lo;
      max_ub = hi;
      any = true;
    } else {
      min_lb = std::min(min_lb, lo);
      max_ub = std::max(max_ub, hi);
    }
    if (old.lb_marked) {
      marked_lb = t.lb_marked ? std::min(marked_lb, lo) : lo;
      t.lb_marked = true;
    }
    if (old.ub_marked) {
      marked_ub = t.ub_marked ? std::max(marked_ub, hi) : hi;
      t.ub_marked = true;
    }
    t.align = std::max(t.align, old.align);
    if (old.size > 0) {
      const std::int64_t tlo = std::min(disp + old.true_lb, disp + (count - 1) * ext + old.true_lb);
      const std::int64_t thi = std::max(disp + old.true_ub, disp + (count - 1) * ext + old.true_ub);
      if (!any_data) {
        data_lb = tlo;
        data_ub = thi;
        any_data = true;
      } else {
        data_lb = std::min(data_lb, tlo);
        data_ub = std::max(data_ub, thi);
      }
      if (old.element == MPI_DATATYPE_NULL || (t.element != MPI_DATATYPE_NULL && t.element != old.element))
        mixed = true;
      if (t.element == MPI_DATATYPE_NULL && !mixed) t.element = old.element;
      t.elements += old.elements * static_cast<std::uint64_t>(count);
      t.size += old.size * static_cast<std::uint64_t>(count);
      add_runs(t.basic_runs, old.basic_runs, static_cast<std::uint64_t>(count));
      if (old.contiguous() && old.blocks.size() == 1) {
        add_block(t.blocks, disp, old.size * static_cast<std::uint64_t>(count));
      } else {
        for (std::int64_t i = 0; i < count; ++i)
          for (const Block& b : old.blocks) add_block(t.blocks, disp + i * ext + b.disp, b.len);
      }
    }
  }

  TypeInfo finish(int combiner, bool pad_to_alignment) {
    t.used = true;
    t.combiner = combiner;
    t.lb = t.lb_marked ? marked_lb : min_lb;
    t.ub = t.ub_marked ? marked_ub : max_ub;
    if (pad_to_alignment && !t.ub_marked && t.align > 1) {
      const std::int64_t ext = t.ub - t.lb, a = t.align;
      if (ext % a != 0) t.ub += a - ext % a;
    }
    t.true_lb = any_data ? data_lb : 0;
    t.true_ub = any_data ? data_ub : 0;
    if (mixed) {
      t.element = MPI_DATATYPE_NULL;
      t.elements = 0;
    }
    return std::move(t);
  }
};

}  // namespace

bool is_predefined(MPI_Datatype type) { return type > 0 && type <= kLastPredefined; }

std::size_t predefined_size(MPI_Datatype type) { return is_predefined(type) ? kTypes[type].size : 0; }

const char* predefined_name(MPI_Datatype type) {
  return type >= 0 && type <= kLastPredefined ? kTypes[type].name : "a derived datatype";
}

TypeInfo predefined_info(MPI_Datatype type) {
  TypeInfo t;
  const Predefined& p = kTypes[type];
  t.used = t.committed = t.predefined = true;
  t.size = p.size;
  t.lb = 0;
  t.ub = p.extent;
  t.true_lb = 0;
  t.true_ub = p.extent;
  t.align = p.align;
  t.name = p.name;
  if (type == MPI_LB) t.lb_marked = true;
  if (type == MPI_UB) t.ub_marked = true;
  if (p.size == 0) {
    t.true_ub = 0;
    return t;
  }
  t.element = type;
  t.elements = 1;
  t.basic_runs.emplace_back(p.size, 1);
  // The C pairs' fields, as they lie in memory.
  switch (type) {
    case MPI_DOUBLE_INT:
    case MPI_LONG_INT: t.blocks = {Block{0, 8}, Block{8, 4}}; break;
    case MPI_SHORT_INT: t.blocks = {Block{0, 2}, Block{4, 4}}; break;
    case MPI_LONG_DOUBLE_INT: t.blocks = {Block{0, 16}, Block{16, 4}}; break;
    default: t.blocks = {Block{0, p.size}};
  }
  // Merge adjacent runs (DOUBLE_INT: 0..12 is one run).
  svector<Block> merged;
  for (const Block& b : t.blocks) add_block(merged, b.disp, b.len);
  t.blocks = std::move(merged);
  t.true_ub = t.blocks.back().disp + static_cast<std::int64_t>(t.blocks.back().len);
  return t;
}

const char* op_name(MPI_Op op) {
  static const char* const names[] = {"MPI_OP_NULL", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
                                      "MPI_LAND",    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
                                      "MPI_BXOR",    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
  if (op < 0 || static_cast<std::size_t>(op) >= sizeof names / sizeof *names) return "a user-defined operator";
  return names[op];
}

bool predefined_op(MPI_Op op) { return op >= MPI_MAX && op <= MPI_NO_OP; }

bool op_applies(MPI_Op op, MPI_Datatype element) {
  const Family f = family(element);
  switch (op) {
    case MPI_MAX:
    case MPI_MIN: return f == Family::Integer || f == Family::Floating;
    case MPI_SUM:
    case MPI_PROD: return f == Family::Integer || f == Family::Floating || f == Family::Complex;
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR: return f == Family::Integer || f == Family::Logical;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR: return f == Family::Integer || f == Family::Byte;
    case MPI_MINLOC:
    case MPI_MAXLOC: return f == Family::Pair;
    case MPI_REPLACE:
    case MPI_NO_OP: return f != Family::None && f != Family::Marker;
    default: return false;
  }
}

void reduce_into(MPI_Op op, MPI_Datatype element, void* acc, const void* in, std::size_t count) {
  if (op == MPI_NO_OP) return;
  if (op == MPI_REPLACE) {
    std::memmove(acc, in, count * predefined_size(element));
    return;
  }
  with_type(element, [&](auto v) {
    using T = decltype(v);
    constexpr std::size_t step = packed_size<T>();
    auto* a = static_cast<std::byte*>(acc);
    const auto* b = static_cast<const std::byte*>(in);
    // Through typed temporaries: buffers need not be aligned.
    for (std::size_t i = 0; i < count; ++i) {
      T x = load<T>(a + i * step);
      apply(op, x, load<T>(b + i * step));
      store(a + i * step, x);
    }
  });
}

std::int64_t basic_elements(const TypeInfo& t, std::uint64_t bytes) {
  if (t.size == 0) return bytes == 0 ? 0 : -1;
  std::uint64_t per_item = 0;
  for (const auto& [size, n] : t.basic_runs) per_item += n;
  std::uint64_t elements = bytes / t.size * per_item, rest = bytes % t.size;
  for (const auto& [size, n] : t.basic_runs) {
    if (rest == 0) break;
    const std::uint64_t take = std::min<std::uint64_t>(n, rest / size);
    elements += take;
    rest -= take * size;
    if (take < n) break;
  }
  return rest == 0 ? static_cast<std::int64_t>(elements) : -1;
}

void pack(const TypeInfo& t, const void* buf, std::uint64_t count, std::byte* out) {
  const auto* base = static_cast<const std::byte*>(buf);
  if (t.size == 0 || count == 0) return;
  if (t.contiguous()) {
    std::memcpy(out, base, t.size * count);
    return;
  }
  const std::int64_t ext = t.extent();
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::byte* item = base + static_cast<std::int64_t>(i) * ext;
    for (const Block& b : t.blocks) {
      std::memcpy(out, item + b.disp, b.len);
      out += b.len;
    }
  }
}

void unpack(const TypeInfo& t, const std::byte* in, std::uint64_t bytes, void* buf, std::uint64_t count) {
  unpack_runs(t.blocks, t.extent(), t.size, in, bytes, buf, count);
}

void unpack_runs(std::span<const Block> blocks, std::int64_t extent, std::uint64_t size, const std::byte* in,
                 std::uint64_t bytes, void* buf, std::uint64_t count) {
  auto* base = static_cast<std::byte*>(buf);
  bytes = std::min(bytes, size * count);
  if (bytes == 0) return;
  if (blocks.size() == 1 && blocks[0].disp == 0 && static_cast<std::int64_t>(blocks[0].len) == extent) {
    std::memcpy(base, in, bytes);
    return;
  }
  for (std::uint64_t i = 0; bytes > 0 && i < count; ++i) {
    std::byte* item = base + static_cast<std::int64_t>(i) * extent;
    for (const Block& b : blocks) {
      const std::uint64_t n = std::min<std::uint64_t>(b.len, bytes);
      std::memcpy(item + b.disp, in, n);
      in += n;
      bytes -= n;
      if (bytes == 0) break;
    }
  }
}

TypeInfo make_contiguous(std::int64_t count, const TypeInfo& old) {
  Builder b;
  b.add(old, 0, count);
  return b.finish(MPI_COMBINER_CONTIGUOUS, false);
}

TypeInfo make_hvector(std::int64_t count, std::int64_t blocklength, std::int64_t stride_bytes, const TypeInfo& old) {
  Builder b;
  for (std::int64_t i = 0; i < count; ++i) b.add(old, i * stride_bytes, blocklength);
  return b.finish(MPI_COMBINER_HVECTOR, false);
}

TypeInfo make_hindexed(std::int64_t count, const std::int64_t* blocklengths, const std::int64_t* displacements,
                       const TypeInfo& old) {
  Builder b;
  for (std::int64_t i = 0; i < count; ++i) b.add(old, displacements[i], blocklengths[i]);
  return b.finish(MPI_COMBINER_HINDEXED, false);
}

TypeInfo make_struct(std::int64_t count, const std::int64_t* blocklengths, const std::int64_t* displacements,
                     const TypeInfo* const* types) {
  Builder b;
  for (std::int64_t i = 0; i < count; ++i) b.add(*types[i], displacements[i], blocklengths[i]);
  return b.finish(MPI_COMBINER_STRUCT, true);
}

TypeInfo make_resized(const TypeInfo& old, std::int64_t lb, std::int64_t extent) {
  TypeInfo t = old;
  t.predefined = false;
  t.committed = false;
  t.lb = lb;
  t.ub = lb + extent;
  t.lb_marked = t.ub_marked = true;
  t.combiner = MPI_COMBINER_RESIZED;
  t.name.clear();
  return t;
}

std::string make_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts, int order,
                          const TypeInfo& old, TypeInfo& out) {
  if (ndims <= 0) return "ndims " + std::to_string(ndims) + " is not positive";
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) return "order is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN";
  std::vector<int> dim(static_cast<std::size_t>(ndims));  // dimensions from the slowest to the fastest varying
  for (int i = 0; i < ndims; ++i) dim[static_cast<std::size_t>(i)] = order == MPI_ORDER_C ? i : ndims - 1 - i;
  for (int d : dim) {
    if (sizes[d] <= 0 || subsizes[d] <= 0 || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d])
      return "dimension " + std::to_string(d) + ": size " + std::to_string(sizes[d]) + ", subsize " +
             std::to_string(subsizes[d]) + ", start " + std::to_string(starts[d]) + " do not fit";
  }
  const std::int64_t ext = old.extent();
  // Byte strides of each dimension in the full array.
  std::vector<std::int64_t> stride(static_cast<std::size_t>(ndims));
  std::int64_t s = ext;
  for (int k = ndims - 1; k >= 0; --k) {
    stride[static_cast<std::size_t>(k)] = s;
    s *= sizes[dim[static_cast<std::size_t>(k)]];
  }
  const std::int64_t total = s;  // bytes of the whole array
  Builder b;
  const int fast = dim.back();
  std::vector<int> idx(static_cast<std::size_t>(ndims), 0);
  for (;;) {
    std::int64_t disp = 0;
    for (int k = 0; k < ndims - 1; ++k)
      disp += (starts[dim[static_cast<std::size_t>(k)]] + idx[static_cast<std::size_t>(k)]) *
              stride[static_cast<std::size_t>(k)];
    disp += static_cast<std::int64_t>(starts[fast]) * ext;
    b.add(old, disp, subsizes[fast]);
    int k = ndims - 2;
    while (k >= 0) {
      if (++idx[static_cast<std::size_t>(k)] < subsizes[dim[static_cast<std::size_t>(k)]]) break;
      idx[static_cast<std::size_t>(k)] = 0;
      --k;
    }
    if (k < 0) break;
  }
  out = b.finish(MPI_COMBINER_SUBARRAY, false);
  // The subarray's extent is the whole array's (MPI 3.1 section 4.1.3).
  out.lb = 0;
  out.ub = total;
  out.lb_marked = out.ub_marked = true;
  return {};
}

}  // namespace poems::direct::detail
