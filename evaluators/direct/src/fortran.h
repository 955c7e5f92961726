// The Fortran bindings' conversions (generated/fortran.cpp, fortran_special.cpp):
// the sentinels of mpif.h (common blocks whose addresses stand for
// MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, ...) and blank-padded strings.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>

#include "mpi.h"

extern "C" {
// The common blocks of mpif.h (one variable each; sizes as declared there).
extern MPI_Fint poems_mpi_bottom_;
extern MPI_Fint poems_mpi_in_place_;
extern MPI_Fint poems_mpi_status_ignore_[6];
extern MPI_Fint poems_mpi_statuses_ignore_[6];
extern MPI_Fint poems_mpi_errcodes_ignore_[1];
extern MPI_Fint poems_mpi_unweighted_[1];
extern MPI_Fint poems_mpi_weights_empty_[1];
}

inline void* poems_fbuf(void* p) {
  if (p == &poems_mpi_bottom_) return MPI_BOTTOM;
  if (p == &poems_mpi_in_place_) return MPI_IN_PLACE;
  return p;
}
inline const void* poems_fbuf(const void* p) { return poems_fbuf(const_cast<void*>(p)); }

inline MPI_Status* poems_fstatus(MPI_Fint* s) {
  return s == poems_mpi_status_ignore_ ? MPI_STATUS_IGNORE : reinterpret_cast<MPI_Status*>(s);
}
inline MPI_Status* poems_fstatuses(MPI_Fint* s) {
  return s == poems_mpi_statuses_ignore_ ? MPI_STATUSES_IGNORE : reinterpret_cast<MPI_Status*>(s);
}
inline int* poems_ferrcodes(MPI_Fint* e) { return e == poems_mpi_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e; }
inline int* poems_fweights(MPI_Fint* w) {
  if (w == poems_mpi_unweighted_) return MPI_UNWEIGHTED;
  if (w == poems_mpi_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return w;
}

// A Fortran string without its trailing blanks.
inline std::string poems_fstring(const char* s, std::size_t len) {
  while (len > 0 && s[len - 1] == ' ') --len;
  return std::string(s, len);
}
// A C string into a Fortran one, padded with blanks.
inline void poems_fstring_out(const char* c, char* f, std::size_t len) {
  const std::size_t n = std::min(std::strlen(c), len);
  std::memcpy(f, c, n);
  std::memset(f + n, ' ', len - n);
}
