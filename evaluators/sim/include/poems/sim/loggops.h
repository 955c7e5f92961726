// The simulator reads the LogGOPS cost rules of the network component model.
#pragma once

#include "poems/components/loggops.h"

namespace poems::sim {

using components::FemtosecondsPerByte;
using components::format_fs_per_byte;
using components::format_ps;
using components::LogGOPS;
using components::ns_per_byte_to_fs;
using components::ns_to_ps;
using components::Picoseconds;
using components::ps_to_ns_text;

}  // namespace poems::sim
