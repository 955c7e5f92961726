#include "datatypes.h"

#include <cstdint>
#include <cstring>
#include <cwchar>
#include <type_traits>

namespace poems::direct::detail {

namespace {

template <typename V>
struct Pair {
  V value;
  int index;
};

enum class Family { None, Integer, Floating, Logical, Byte, Pair };

// Calls f(T{}) with the C type of `type`; returns false for unknown types.
template <typename F>
bool with_type(MPI_Datatype type, F&& f) {
  switch (type) {
    case MPI_CHAR: f(char{}); return true;
    case MPI_SIGNED_CHAR: f(static_cast<signed char>(0)); return true;
    case MPI_UNSIGNED_CHAR: f(static_cast<unsigned char>(0)); return true;
    case MPI_BYTE: f(static_cast<unsigned char>(0)); return true;
    case MPI_PACKED: f(static_cast<unsigned char>(0)); return true;
    case MPI_SHORT: f(short{}); return true;
    case MPI_UNSIGNED_SHORT: f(static_cast<unsigned short>(0)); return true;
    case MPI_INT: f(int{}); return true;
    case MPI_UNSIGNED: f(0u); return true;
    case MPI_LONG: f(0l); return true;
    case MPI_UNSIGNED_LONG: f(0ul); return true;
    case MPI_LONG_LONG_INT: f(0ll); return true;
    case MPI_UNSIGNED_LONG_LONG: f(0ull); return true;
    case MPI_FLOAT: f(0.0f); return true;
    case MPI_DOUBLE: f(0.0); return true;
    case MPI_LONG_DOUBLE: f(static_cast<long double>(0)); return true;
    case MPI_C_BOOL: f(false); return true;
    case MPI_INT8_T: f(std::int8_t{}); return true;
    case MPI_INT16_T: f(std::int16_t{}); return true;
    case MPI_INT32_T: f(std::int32_t{}); return true;
    case MPI_INT64_T: f(std::int64_t{}); return true;
    case MPI_UINT8_T: f(std::uint8_t{}); return true;
    case MPI_UINT16_T: f(std::uint16_t{}); return true;
    case MPI_UINT32_T: f(std::uint32_t{}); return true;
    case MPI_UINT64_T: f(std::uint64_t{}); return true;
    case MPI_WCHAR: f(wchar_t{}); return true;
    case MPI_AINT: f(MPI_Aint{}); return true;
    case MPI_OFFSET: f(MPI_Offset{}); return true;
    case MPI_COUNT: f(MPI_Count{}); return true;
    case MPI_FLOAT_INT: f(Pair<float>{}); return true;
    case MPI_DOUBLE_INT: f(Pair<double>{}); return true;
    case MPI_LONG_INT: f(Pair<long>{}); return true;
    case MPI_2INT: f(Pair<int>{}); return true;
    case MPI_SHORT_INT: f(Pair<short>{}); return true;
    case MPI_LONG_DOUBLE_INT: f(Pair<long double>{}); return true;
    default: return false;
  }
}

template <typename T>
struct IsPair : std::false_type {};
template <typename V>
struct IsPair<Pair<V>> : std::true_type {};

Family family(MPI_Datatype type) {
  if (type == MPI_BYTE || type == MPI_PACKED) return Family::Byte;
  if (type == MPI_C_BOOL) return Family::Logical;
  Family f = Family::None;
  with_type(type, [&](auto v) {
    using T = decltype(v);
    if constexpr (IsPair<T>::value)
      f = Family::Pair;
    else if constexpr (std::is_floating_point_v<T>)
      f = Family::Floating;
    else
      f = Family::Integer;
  });
  return f;
}

template <typename T>
void apply(MPI_Op op, T* acc, const T* in, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    T& a = acc[i];
    const T& b = in[i];
    if constexpr (IsPair<T>::value) {
      // MINLOC / MAXLOC: the extreme value, the smaller index on ties.
      const bool take = op == MPI_MINLOC ? (b.value < a.value || (b.value == a.value && b.index < a.index))
                                         : (b.value > a.value || (b.value == a.value && b.index < a.index));
      if (take) a = b;
    } else if constexpr (std::is_same_v<T, bool>) {
      switch (op) {
        case MPI_LAND: a = a && b; break;
        case MPI_LOR: a = a || b; break;
        case MPI_LXOR: a = a != b; break;
        default: break;
      }
    } else {
      switch (op) {
        case MPI_MAX: a = b > a ? b : a; break;
        case MPI_MIN: a = b < a ? b : a; break;
        case MPI_SUM: a = static_cast<T>(a + b); break;
        case MPI_PROD: a = static_cast<T>(a * b); break;
        case MPI_LAND: a = static_cast<T>(a && b); break;
        case MPI_LOR: a = static_cast<T>(a || b); break;
        case MPI_LXOR: a = static_cast<T>(!a != !b); break;
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
}

}  // namespace

std::size_t datatype_size(MPI_Datatype type) {
  std::size_t size = 0;
  with_type(type, [&](auto v) { size = sizeof v; });
  return size;
}

const char* datatype_name(MPI_Datatype type) {
  static const char* const names[] = {"MPI_DATATYPE_NULL",
                                      "MPI_CHAR",
                                      "MPI_SIGNED_CHAR",
                                      "MPI_UNSIGNED_CHAR",
                                      "MPI_BYTE",
                                      "MPI_SHORT",
                                      "MPI_UNSIGNED_SHORT",
                                      "MPI_INT",
                                      "MPI_UNSIGNED",
                                      "MPI_LONG",
                                      "MPI_UNSIGNED_LONG",
                                      "MPI_LONG_LONG",
                                      "MPI_UNSIGNED_LONG_LONG",
                                      "MPI_FLOAT",
                                      "MPI_DOUBLE",
                                      "MPI_LONG_DOUBLE",
                                      "MPI_C_BOOL",
                                      "MPI_INT8_T",
                                      "MPI_INT16_T",
                                      "MPI_INT32_T",
                                      "MPI_INT64_T",
                                      "MPI_UINT8_T",
                                      "MPI_UINT16_T",
                                      "MPI_UINT32_T",
                                      "MPI_UINT64_T",
                                      "MPI_WCHAR",
                                      "MPI_AINT",
                                      "MPI_OFFSET",
                                      "MPI_COUNT",
                                      "MPI_FLOAT_INT",
                                      "MPI_DOUBLE_INT",
                                      "MPI_LONG_INT",
                                      "MPI_2INT",
                                      "MPI_SHORT_INT",
                                      "MPI_LONG_DOUBLE_INT",
                                      "MPI_PACKED"};
  if (type < 0 || static_cast<std::size_t>(type) >= sizeof names / sizeof *names) return "an unknown datatype";
  return names[type];
}

const char* op_name(MPI_Op op) {
  static const char* const names[] = {"MPI_OP_NULL", "MPI_MAX",    "MPI_MIN",    "MPI_SUM",     "MPI_PROD",
                                      "MPI_LAND",    "MPI_BAND",   "MPI_LOR",    "MPI_BOR",     "MPI_LXOR",
                                      "MPI_BXOR",    "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP"};
  if (op < 0 || static_cast<std::size_t>(op) >= sizeof names / sizeof *names) return "an unknown operator";
  return names[op];
}

bool valid_op(MPI_Op op) { return op >= MPI_MAX && op <= MPI_MAXLOC; }

bool op_applies(MPI_Op op, MPI_Datatype type) {
  const Family f = family(type);
  switch (op) {
    case MPI_MAX:
    case MPI_MIN:
    case MPI_SUM:
    case MPI_PROD: return f == Family::Integer || f == Family::Floating;
    case MPI_LAND:
    case MPI_LOR:
    case MPI_LXOR: return f == Family::Integer || f == Family::Logical;
    case MPI_BAND:
    case MPI_BOR:
    case MPI_BXOR: return f == Family::Integer || f == Family::Byte;
    case MPI_MINLOC:
    case MPI_MAXLOC: return f == Family::Pair;
    default: return false;
  }
}

void reduce_into(MPI_Op op, MPI_Datatype type, void* acc, const void* in, std::size_t count) {
  with_type(type, [&](auto v) {
    using T = decltype(v);
    // Copies through properly typed temporaries: user buffers need not be aligned.
    T a, b;
    for (std::size_t i = 0; i < count; ++i) {
      std::memcpy(&a, static_cast<char*>(acc) + i * sizeof(T), sizeof(T));
      std::memcpy(&b, static_cast<const char*>(in) + i * sizeof(T), sizeof(T));
      apply(op, &a, &b, 1);
      std::memcpy(static_cast<char*>(acc) + i * sizeof(T), &a, sizeof(T));
    }
  });
}

}  // namespace poems::direct::detail
