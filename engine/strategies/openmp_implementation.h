// Which OpenMP runtime implements the openmp_* strategies in this build, and how their
// threads are placed, for HostInfo's notes (as work_stealing_implementation.h does for
// oneTBB): the host build links GCC's shared libgomp, the device build (deploy/dist.sh)
// the cross compiler's static libgomp.a; a build configured with -DFLEETMARK_OPENMP=OFF
// (or whose compiler has no -fopenmp) has none and reports the strategies unsupported.
#pragma once

#include <string>

namespace fleetmark::engine {

// "openmp_*: libgomp, OpenMP 201511 (shared, GCC's libgomp); threads pinned by the
// case's placement at their first region (OMP_PROC_BIND=unset, OMP_PLACES=unset, read
// once at load)", or "openmp_*: unsupported: built without OpenMP". Thread-safe.
std::string OpenMpImplementationNote();

}  // namespace fleetmark::engine
