// The direct-execution runtime's tables of program-created objects other
// than communicators: datatypes, user-defined operators, keyvals with the
// attributes set through them, and info objects. Handles are indices, one
// table for all ranks (in the shared region with processes).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "datatypes.h"
#include "mpi.h"
#include "shared_memory.h"

namespace poems::direct::detail {

class ObjectTables {
 public:
  // User-defined operators (MPI_Op_create): the function and whether it commutes.
  struct UserOp {
    MPI_User_function* fn = nullptr;
    bool commute = true;
    bool used = false;
  };
  // Keyvals (attributes): copy/delete callbacks and extra state.
  struct Keyval {
    void* copy = nullptr;
    void* del = nullptr;
    void* extra = nullptr;
    bool fortran = false;
    bool used = false;
  };
  // Attributes are each rank's own: (kind, object, world rank, keyval) -> value.
  enum AttrKind : int { kCommAttr, kTypeAttr, kWinAttr };
  struct AttrKey {
    int kind = 0, object = 0;
    std::uint32_t rank = 0;
    int keyval = 0;
    auto operator<=>(const AttrKey&) const = default;
  };
  // Info objects: key/value pairs, shared table.
  struct InfoObject {
    bool used = false;
    svector<std::pair<sstring, sstring>> entries;
  };

  // The predefined datatypes, operators, attribute keys and MPI_INFO_ENV.
  void init() {
    types_.resize(kLastPredefined + 1);
    for (MPI_Datatype t = 1; t <= kLastPredefined; ++t) types_[static_cast<std::size_t>(t)] = predefined_info(t);
    user_ops_.resize(MPI_NO_OP + 1);
    keyvals_.resize(MPI_WIN_MODEL + 1);  // the predefined attribute keys
    for (Keyval& k : keyvals_) k.used = true;
    infos_.resize(2);  // MPI_INFO_NULL, MPI_INFO_ENV
    infos_[MPI_INFO_ENV].used = true;
  }

  // Datatypes.
  TypeInfo* type(MPI_Datatype handle) {  // null if not a valid (live) datatype
    if (handle <= 0 || static_cast<std::size_t>(handle) >= types_.size()) return nullptr;
    TypeInfo& t = types_[static_cast<std::size_t>(handle)];
    return t.used ? &t : nullptr;
  }
  // A live datatype's layout, unchecked.
  const TypeInfo& layout(MPI_Datatype handle) const { return types_[static_cast<std::size_t>(handle)]; }
  MPI_Datatype add_type(TypeInfo&& t) {
    t.used = true;
    if (free_types_ != 0) {
      const std::uint32_t id = free_types_ - 1;
      free_types_ = static_cast<std::uint32_t>(types_[id].elements);  // the free list's link
      types_[id] = std::move(t);
      return static_cast<MPI_Datatype>(id);
    }
    if (types_.size() >= 0x7fffffff) throw std::length_error("too many datatypes");
    types_.push_back(std::move(t));
    return static_cast<MPI_Datatype>(types_.size() - 1);
  }
  void free_type(MPI_Datatype handle) {
    TypeInfo& t = types_[static_cast<std::size_t>(handle)];
    t = TypeInfo{};
    t.elements = free_types_;  // the free list's link
    free_types_ = static_cast<std::uint32_t>(handle) + 1;
  }

  // Operators.
  UserOp* user_op(MPI_Op op) {
    if (op <= MPI_NO_OP || static_cast<std::size_t>(op) >= user_ops_.size()) return nullptr;
    UserOp& u = user_ops_[static_cast<std::size_t>(op)];
    return u.used ? &u : nullptr;
  }
  MPI_Op add_op(MPI_User_function* fn, bool commute) {
    user_ops_.push_back(UserOp{fn, commute, true});
    return static_cast<MPI_Op>(user_ops_.size() - 1);
  }
  void free_op(MPI_Op op) { user_ops_[static_cast<std::size_t>(op)].used = false; }

  // Keyvals and attributes.
  int add_keyval(const Keyval& k) {
    keyvals_.push_back(k);
    keyvals_.back().used = true;
    return static_cast<int>(keyvals_.size() - 1);
  }
  Keyval* keyval(int k) {
    if (k <= 0 || static_cast<std::size_t>(k) >= keyvals_.size()) return nullptr;
    Keyval& kv = keyvals_[static_cast<std::size_t>(k)];
    return kv.used ? &kv : nullptr;
  }
  void free_keyval(int k) { keyvals_[static_cast<std::size_t>(k)].used = false; }
  smap<AttrKey, std::uintptr_t>& attributes() { return attributes_; }

  svector<InfoObject>& infos() { return infos_; }

 private:
  svector<TypeInfo> types_;
  std::uint32_t free_types_ = 0;  // 1 + first free derived type handle
  svector<UserOp> user_ops_;
  svector<Keyval> keyvals_;
  smap<AttrKey, std::uintptr_t> attributes_;
  svector<InfoObject> infos_;
};

}  // namespace poems::direct::detail
