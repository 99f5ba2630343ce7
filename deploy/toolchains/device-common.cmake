# Shared part of the device toolchain files (deploy/toolchains/*.cmake, used by
# deploy/dist.sh): a fully static Linux build against the dependency root that
# deploy/cross-deps.sh prepares (Debian's -dev packages of the target architecture
# unpacked there, plus a static oneTBB built from Debian's source package).
#
# Inputs: FLEETMARK_TRIPLE (set by the including file, e.g. aarch64-linux-gnu) and the
# environment variable FLEETMARK_DEPS_ROOT (the dependency root; dist.sh sets it).
if(NOT DEFINED ENV{FLEETMARK_DEPS_ROOT})
  message(FATAL_ERROR "FLEETMARK_DEPS_ROOT is not set: build through deploy/dist.sh ARCH")
endif()
set(FLEETMARK_DEPS_ROOT "$ENV{FLEETMARK_DEPS_ROOT}")

set(CMAKE_LIBRARY_ARCHITECTURE ${FLEETMARK_TRIPLE})
if(FLEETMARK_CROSS)
  set(CMAKE_SYSTEM_NAME Linux)
  set(CMAKE_C_COMPILER ${FLEETMARK_TRIPLE}-gcc)
  set(CMAKE_CXX_COMPILER ${FLEETMARK_TRIPLE}-g++)
  # Libraries, headers and CMake packages come only from the dependency root (never
  # the build machine's amd64 ones); programs (protoc, grpc_cpp_plugin) from the host.
  set(CMAKE_FIND_ROOT_PATH "${FLEETMARK_DEPS_ROOT}")
  set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
  set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
  set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
  # The unpacked packages' headers (arch-independent and arch-specific, e.g.
  # openssl/opensslconf.h); the cross compiler's own glibc/libstdc++ stay as they are.
  set(_fm_inc "-isystem ${FLEETMARK_DEPS_ROOT}/usr/include/${FLEETMARK_TRIPLE} -isystem ${FLEETMARK_DEPS_ROOT}/usr/include")
  set(CMAKE_C_FLAGS_INIT "${_fm_inc}")
  set(CMAKE_CXX_FLAGS_INIT "${_fm_inc}")
  set(CMAKE_EXE_LINKER_FLAGS_INIT "-L${FLEETMARK_DEPS_ROOT}/usr/lib/${FLEETMARK_TRIPLE}")
  # pkg-config (RE2 through gRPC's Findre2) reads the root's .pc files, never the host's.
  set(ENV{PKG_CONFIG_LIBDIR}
      "${FLEETMARK_DEPS_ROOT}/usr/lib/${FLEETMARK_TRIPLE}/pkgconfig:${FLEETMARK_DEPS_ROOT}/usr/share/pkgconfig")
  set(ENV{PKG_CONFIG_SYSROOT_DIR} "${FLEETMARK_DEPS_ROOT}")
else()
  # Native (x86_64): the build machine's own static archives, plus the static oneTBB.
  set(CMAKE_PREFIX_PATH "${FLEETMARK_DEPS_ROOT}/usr")
endif()
if(FLEETMARK_EMULATOR)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${FLEETMARK_EMULATOR})
endif()

# Static everything: find_library and the packages' find modules pick .a archives.
set(CMAKE_FIND_LIBRARY_SUFFIXES .a)
set(Protobuf_USE_STATIC_LIBS ON)
set(Boost_USE_STATIC_LIBS ON)
set(OPENSSL_USE_STATIC_LIBS ON)
set(ZLIB_USE_STATIC_LIBS ON)
set(CMAKE_EXE_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT} -static")
# CMake brackets -l items with -Wl,-Bstatic ... -Wl,-Bdynamic; ending dynamic would make
# the implicit -lc shared (a dynamic executable with an interpreter): keep it static.
set(CMAKE_LINK_SEARCH_START_STATIC ON)
set(CMAKE_LINK_SEARCH_END_STATIC ON)
set(FLEETMARK_DEVICE_BUILD ON CACHE BOOL "device build (deploy/dist.sh)" FORCE)
