// Attributes (MPI 3.1 section 6.7) of communicators, datatypes and windows,
// each rank's own; the predefined communicator attributes; info objects
// (section 9). Libraries use attributes to cache their state on a
// communicator (keyvals with copy and delete callbacks, run on dup and free).
#include <algorithm>
#include <cstring>

#include "api.h"
#include "attributes.h"

namespace poems::direct::detail {

namespace {

using AttrKey = ObjectTables::AttrKey;

int check_keyval(Runtime& rt, const char* call, int keyval) {
  if (keyval == MPI_KEYVAL_INVALID || !rt.objects().keyval(keyval))
    rt.fail(call, "keyval " + std::to_string(keyval) + " is not a keyval (MPI_ERR_KEYVAL)");
  return keyval;
}

// Runs a delete callback (C or Fortran conventions) for an attribute being removed.
int run_delete(Runtime& rt, int kind, int object, int keyval, std::uintptr_t value) {
  ObjectTables::Keyval* k = rt.objects().keyval(keyval);
  if (!k || !k->del) return MPI_SUCCESS;
  if (k->fortran) {
    using F = void(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Fint*);
    MPI_Fint obj = object, kv = keyval, ierr = MPI_SUCCESS;
    MPI_Aint v = static_cast<MPI_Aint>(value), extra = reinterpret_cast<MPI_Aint>(k->extra);
    reinterpret_cast<F*>(k->del)(&obj, &kv, &v, &extra, &ierr);
    return ierr;
  }
  (void)kind;
  using C = int(int, int, void*, void*);
  return reinterpret_cast<C*>(k->del)(object, keyval, reinterpret_cast<void*>(value), k->extra);
}

}  // namespace

int set_attribute(Runtime& rt, const char* call, int kind, int object, int keyval, std::uintptr_t value) {
  check_keyval(rt, call, keyval);
  if (keyval <= MPI_WIN_MODEL) rt.fail(call, "predefined attributes cannot be set (MPI_ERR_KEYVAL)");
  const AttrKey key{kind, object, rt.current().world, keyval};
  auto& attrs = rt.objects().attributes();
  auto it = attrs.find(key);
  if (it != attrs.end()) {
    const int rc = run_delete(rt, kind, object, keyval, it->second);
    if (rc != MPI_SUCCESS) return rc;
    it->second = value;
  } else {
    attrs.emplace(key, value);
  }
  return MPI_SUCCESS;
}

bool get_attribute(Runtime& rt, int kind, int object, int keyval, std::uintptr_t& value) {
  auto& attrs = rt.objects().attributes();
  auto it = attrs.find(AttrKey{kind, object, rt.current().world, keyval});
  if (it == attrs.end()) return false;
  value = it->second;
  return true;
}

int delete_attribute(Runtime& rt, const char* call, int kind, int object, int keyval) {
  check_keyval(rt, call, keyval);
  auto& attrs = rt.objects().attributes();
  auto it = attrs.find(AttrKey{kind, object, rt.current().world, keyval});
  if (it == attrs.end()) rt.fail(call, "the object has no attribute for keyval " + std::to_string(keyval));
  const std::uintptr_t value = it->second;
  attrs.erase(it);
  return run_delete(rt, kind, object, keyval, value);
}

void copy_attributes(Runtime& rt, int kind, int from, int to) {
  auto& attrs = rt.objects().attributes();
  const std::uint32_t me = rt.current().world;
  std::vector<std::pair<int, std::uintptr_t>> mine;
  for (auto it = attrs.lower_bound(AttrKey{kind, from, me, 0});
       it != attrs.end() && it->first.kind == kind && it->first.object == from && it->first.rank == me; ++it)
    mine.emplace_back(it->first.keyval, it->second);
  for (const auto& [keyval, value] : mine) {
    ObjectTables::Keyval* k = rt.objects().keyval(keyval);
    if (!k || !k->copy) continue;
    std::uintptr_t out = 0;
    int flag = 0;
    if (k->fortran) {
      using F = void(MPI_Fint*, MPI_Fint*, MPI_Aint*, MPI_Aint*, MPI_Aint*, MPI_Fint*, MPI_Fint*);
      MPI_Fint obj = from, kv = keyval, f = 0, ierr = MPI_SUCCESS;
      MPI_Aint extra = reinterpret_cast<MPI_Aint>(k->extra), in = static_cast<MPI_Aint>(value), o = 0;
      reinterpret_cast<F*>(k->copy)(&obj, &kv, &extra, &in, &o, &f, &ierr);
      flag = f;
      out = static_cast<std::uintptr_t>(o);
    } else {
      using C = int(int, int, void*, void*, void*, int*);
      void* o = nullptr;
      reinterpret_cast<C*>(k->copy)(from, keyval, k->extra, reinterpret_cast<void*>(value), &o, &flag);
      out = reinterpret_cast<std::uintptr_t>(o);
    }
    if (flag) attrs[AttrKey{kind, to, me, keyval}] = out;
  }
}

int create_keyval(const char* call, void* copy, void* del, int* keyval, void* extra, bool fortran) {
  return mpi_call(
      call,
      [&](Runtime& rt) {
        ObjectTables::Keyval k;
        k.copy = copy;
        k.del = del;
        k.extra = extra;
        k.fortran = fortran;
        *keyval = rt.objects().add_keyval(k);
        return MPI_SUCCESS;
      },
      false);
}

void delete_attributes(Runtime& rt, int kind, int object) {
  auto& attrs = rt.objects().attributes();
  const std::uint32_t me = rt.current().world;
  std::vector<std::pair<int, std::uintptr_t>> mine;
  for (auto it = attrs.lower_bound(AttrKey{kind, object, me, 0});
       it != attrs.end() && it->first.kind == kind && it->first.object == object && it->first.rank == me;) {
    mine.emplace_back(it->first.keyval, it->second);
    it = attrs.erase(it);
  }
  for (const auto& [keyval, value] : mine) run_delete(rt, kind, object, keyval, value);
}

}  // namespace poems::direct::detail

using namespace poems::direct::detail;

namespace {

int free_keyval(const char* call, int* keyval) {
  return mpi_call(
      call,
      [&](Runtime& rt) {
        check_keyval(rt, call, *keyval);
        if (*keyval > MPI_WIN_MODEL) rt.objects().free_keyval(*keyval);
        *keyval = MPI_KEYVAL_INVALID;
        return MPI_SUCCESS;
      },
      false);
}

// The predefined communicator attributes: pointers to values each rank keeps.
bool predefined_comm_attribute(Runtime& rt, int keyval, void* attribute_val) {
  static int tag_ub = 0x3fffffff, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 1, universe = 0, appnum = 0,
             lastcode = MPI_ERR_LASTCODE;
  int* value = nullptr;
  switch (keyval) {
    case MPI_TAG_UB: value = &tag_ub; break;
    case MPI_HOST: value = &host; break;
    case MPI_IO: value = &io; break;
    case MPI_WTIME_IS_GLOBAL: value = &wtime_global; break;  // virtual time is one clock
    case MPI_UNIVERSE_SIZE:
      universe = static_cast<int>(rt.options().ranks);
      value = &universe;
      break;
    case MPI_APPNUM: value = &appnum; break;
    case MPI_LASTUSEDCODE: value = &lastcode; break;
    default: return false;
  }
  std::memcpy(attribute_val, &value, sizeof value);
  return true;
}

}  // namespace

extern "C" {

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del, int* keyval,
                           void* extra_state) {
  return create_keyval("MPI_Comm_create_keyval", reinterpret_cast<void*>(copy), reinterpret_cast<void*>(del), keyval,
                       extra_state, false);
}
int MPI_Keyval_create(MPI_Copy_function* copy, MPI_Delete_function* del, int* keyval, void* extra_state) {
  return create_keyval("MPI_Keyval_create", reinterpret_cast<void*>(copy), reinterpret_cast<void*>(del), keyval,
                       extra_state, false);
}
int MPI_Type_create_keyval(MPI_Type_copy_attr_function* copy, MPI_Type_delete_attr_function* del, int* keyval,
                           void* extra_state) {
  return create_keyval("MPI_Type_create_keyval", reinterpret_cast<void*>(copy), reinterpret_cast<void*>(del), keyval,
                       extra_state, false);
}
int MPI_Win_create_keyval(MPI_Win_copy_attr_function* copy, MPI_Win_delete_attr_function* del, int* keyval,
                          void* extra_state) {
  return create_keyval("MPI_Win_create_keyval", reinterpret_cast<void*>(copy), reinterpret_cast<void*>(del), keyval,
                       extra_state, false);
}
int MPI_Comm_free_keyval(int* keyval) { return free_keyval("MPI_Comm_free_keyval", keyval); }
int MPI_Keyval_free(int* keyval) { return free_keyval("MPI_Keyval_free", keyval); }
int MPI_Type_free_keyval(int* keyval) { return free_keyval("MPI_Type_free_keyval", keyval); }
int MPI_Win_free_keyval(int* keyval) { return free_keyval("MPI_Win_free_keyval", keyval); }

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void* attribute_val) {
  return mpi_call("MPI_Comm_set_attr", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_set_attr", comm);
    return set_attribute(rt, "MPI_Comm_set_attr", ObjectTables::kCommAttr, comm, keyval,
                         reinterpret_cast<std::uintptr_t>(attribute_val));
  });
}
int MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return MPI_Comm_set_attr(comm, keyval, attribute_val);
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return mpi_call("MPI_Comm_get_attr", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_get_attr", comm);
    check_keyval(rt, "MPI_Comm_get_attr", keyval);
    *flag = 0;
    if (predefined_comm_attribute(rt, keyval, attribute_val)) {
      *flag = 1;
      return MPI_SUCCESS;
    }
    std::uintptr_t v = 0;
    if (get_attribute(rt, ObjectTables::kCommAttr, comm, keyval, v)) {
      void* p = reinterpret_cast<void*>(v);
      std::memcpy(attribute_val, &p, sizeof p);
      *flag = 1;
    }
    return MPI_SUCCESS;
  });
}
int MPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int MPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  return mpi_call("MPI_Comm_delete_attr", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_delete_attr", comm);
    return delete_attribute(rt, "MPI_Comm_delete_attr", ObjectTables::kCommAttr, comm, keyval);
  });
}
int MPI_Attr_delete(MPI_Comm comm, int keyval) { return MPI_Comm_delete_attr(comm, keyval); }

int MPI_Type_set_attr(MPI_Datatype type, int keyval, void* attribute_val) {
  return mpi_call("MPI_Type_set_attr", [&](Runtime& rt) {
    check_type_handle(rt, "MPI_Type_set_attr", type);
    return set_attribute(rt, "MPI_Type_set_attr", ObjectTables::kTypeAttr, type, keyval,
                         reinterpret_cast<std::uintptr_t>(attribute_val));
  });
}
int MPI_Type_get_attr(MPI_Datatype type, int keyval, void* attribute_val, int* flag) {
  return mpi_call("MPI_Type_get_attr", [&](Runtime& rt) {
    check_type_handle(rt, "MPI_Type_get_attr", type);
    check_keyval(rt, "MPI_Type_get_attr", keyval);
    std::uintptr_t v = 0;
    *flag = get_attribute(rt, ObjectTables::kTypeAttr, type, keyval, v) ? 1 : 0;
    if (*flag) {
      void* p = reinterpret_cast<void*>(v);
      std::memcpy(attribute_val, &p, sizeof p);
    }
    return MPI_SUCCESS;
  });
}
int MPI_Type_delete_attr(MPI_Datatype type, int keyval) {
  return mpi_call("MPI_Type_delete_attr", [&](Runtime& rt) {
    check_type_handle(rt, "MPI_Type_delete_attr", type);
    return delete_attribute(rt, "MPI_Type_delete_attr", ObjectTables::kTypeAttr, type, keyval);
  });
}

int MPI_Win_set_attr(MPI_Win win, int keyval, void* attribute_val) {
  return mpi_call("MPI_Win_set_attr", [&](Runtime& rt) {
    return set_attribute(rt, "MPI_Win_set_attr", ObjectTables::kWinAttr, win, keyval,
                         reinterpret_cast<std::uintptr_t>(attribute_val));
  });
}
int MPI_Win_delete_attr(MPI_Win win, int keyval) {
  return mpi_call("MPI_Win_delete_attr", [&](Runtime& rt) {
    return delete_attribute(rt, "MPI_Win_delete_attr", ObjectTables::kWinAttr, win, keyval);
  });
}

// The predefined callbacks.
int MPI_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  std::memcpy(out, &in, sizeof in);
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_NULL_DELETE_FN(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
int MPI_COMM_NULL_COPY_FN(MPI_Comm c, int k, void* e, void* in, void* out, int* flag) {
  return MPI_NULL_COPY_FN(c, k, e, in, out, flag);
}
int MPI_COMM_DUP_FN(MPI_Comm c, int k, void* e, void* in, void* out, int* flag) {
  return MPI_DUP_FN(c, k, e, in, out, flag);
}
int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  std::memcpy(out, &in, sizeof in);
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }
int MPI_WIN_NULL_COPY_FN(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_WIN_DUP_FN(MPI_Win, int, void*, void* in, void* out, int* flag) {
  std::memcpy(out, &in, sizeof in);
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_WIN_NULL_DELETE_FN(MPI_Win, int, void*, void*) { return MPI_SUCCESS; }

// ---- info objects ---------------------------------------------------------------------------

namespace {

ObjectTables::InfoObject& check_info(Runtime& rt, const char* call, MPI_Info info) {
  auto& infos = rt.objects().infos();
  if (info <= 0 || static_cast<std::size_t>(info) >= infos.size() || !infos[static_cast<std::size_t>(info)].used)
    rt.fail(call, "info " + std::to_string(info) + " is not an info object (MPI_ERR_INFO)");
  return infos[static_cast<std::size_t>(info)];
}

MPI_Info new_info(Runtime& rt) {
  auto& infos = rt.objects().infos();
  for (std::size_t i = 2; i < infos.size(); ++i)
    if (!infos[i].used) {
      infos[i].used = true;
      return static_cast<MPI_Info>(i);
    }
  infos.emplace_back();
  infos.back().used = true;
  return static_cast<MPI_Info>(infos.size() - 1);
}

}  // namespace

int MPI_Info_create(MPI_Info* info) {
  return mpi_call(
      "MPI_Info_create",
      [&](Runtime& rt) {
        *info = new_info(rt);
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  return mpi_call(
      "MPI_Info_dup",
      [&](Runtime& rt) {
        check_info(rt, "MPI_Info_dup", info);
        const MPI_Info n = new_info(rt);
        rt.objects().infos()[static_cast<std::size_t>(n)].entries =
            rt.objects().infos()[static_cast<std::size_t>(info)].entries;
        *newinfo = n;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_free(MPI_Info* info) {
  return mpi_call(
      "MPI_Info_free",
      [&](Runtime& rt) {
        ObjectTables::InfoObject& o = check_info(rt, "MPI_Info_free", *info);
        if (*info != MPI_INFO_ENV) {
          o.used = false;
          o.entries.clear();
        }
        *info = MPI_INFO_NULL;
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_set(MPI_Info info, const char* key, const char* value) {
  return mpi_call(
      "MPI_Info_set",
      [&](Runtime& rt) {
        ObjectTables::InfoObject& o = check_info(rt, "MPI_Info_set", info);
        for (auto& [k, v] : o.entries)
          if (k == key) {
            v = value;
            return MPI_SUCCESS;
          }
        o.entries.emplace_back(sstring(key), sstring(value));
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_delete(MPI_Info info, const char* key) {
  return mpi_call(
      "MPI_Info_delete",
      [&](Runtime& rt) {
        ObjectTables::InfoObject& o = check_info(rt, "MPI_Info_delete", info);
        for (auto it = o.entries.begin(); it != o.entries.end(); ++it)
          if (it->first == key) {
            o.entries.erase(it);
            return MPI_SUCCESS;
          }
        rt.fail("MPI_Info_delete", std::string("the info has no key '") + key + "' (MPI_ERR_INFO_NOKEY)");
      },
      false);
}

int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  return mpi_call(
      "MPI_Info_get",
      [&](Runtime& rt) {
        ObjectTables::InfoObject& o = check_info(rt, "MPI_Info_get", info);
        *flag = 0;
        for (const auto& [k, v] : o.entries)
          if (k == key) {
            const std::size_t n = std::min<std::size_t>(v.size(), static_cast<std::size_t>(std::max(valuelen, 0)));
            std::memcpy(value, v.data(), n);
            value[n] = '\0';
            *flag = 1;
          }
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  return mpi_call(
      "MPI_Info_get_valuelen",
      [&](Runtime& rt) {
        ObjectTables::InfoObject& o = check_info(rt, "MPI_Info_get_valuelen", info);
        *flag = 0;
        for (const auto& [k, v] : o.entries)
          if (k == key) {
            *valuelen = static_cast<int>(v.size());
            *flag = 1;
          }
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  return mpi_call(
      "MPI_Info_get_nkeys",
      [&](Runtime& rt) {
        *nkeys = static_cast<int>(check_info(rt, "MPI_Info_get_nkeys", info).entries.size());
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  return mpi_call(
      "MPI_Info_get_nthkey",
      [&](Runtime& rt) {
        ObjectTables::InfoObject& o = check_info(rt, "MPI_Info_get_nthkey", info);
        if (n < 0 || static_cast<std::size_t>(n) >= o.entries.size())
          rt.fail("MPI_Info_get_nthkey", "key " + std::to_string(n) + " is out of range (MPI_ERR_ARG)");
        std::snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", o.entries[static_cast<std::size_t>(n)].first.c_str());
        return MPI_SUCCESS;
      },
      false);
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info) {
  return mpi_call("MPI_Comm_set_info", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_set_info", comm);
    return MPI_SUCCESS;
  });
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info) {
  return mpi_call("MPI_Comm_get_info", [&](Runtime& rt) {
    check_comm(rt, "MPI_Comm_get_info", comm);
    *info = new_info(rt);
    return MPI_SUCCESS;
  });
}

}  // extern "C"
