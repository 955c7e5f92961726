// Attribute helpers shared by communicator, datatype and window calls
// (mpi_attr.cpp): each rank's own attributes, and the callbacks that run
// when their object is duplicated or freed.
#pragma once

#include <cstdint>

#include "runtime_impl.h"

namespace poems::direct::detail {

// A new keyval (C's callbacks, or with `fortran` Fortran's: all by reference, values as integers).
int create_keyval(const char* call, void* copy, void* del, int* keyval, void* extra, bool fortran);
int set_attribute(Runtime& rt, const char* call, int kind, int object, int keyval, std::uintptr_t value);
bool get_attribute(Runtime& rt, int kind, int object, int keyval, std::uintptr_t& value);
int delete_attribute(Runtime& rt, const char* call, int kind, int object, int keyval);
// Copies the running rank's attributes of `from` to `to` through their copy callbacks.
void copy_attributes(Runtime& rt, int kind, int from, int to);
// Deletes the running rank's attributes of `object` through their delete callbacks.
void delete_attributes(Runtime& rt, int kind, int object);

}  // namespace poems::direct::detail
