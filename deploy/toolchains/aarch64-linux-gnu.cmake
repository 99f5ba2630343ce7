# Device build for Linux arm64 (aarch64): deploy/dist.sh arm64.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(FLEETMARK_TRIPLE aarch64-linux-gnu)
set(FLEETMARK_CROSS ON)
set(FLEETMARK_EMULATOR qemu-aarch64-static)
include(${CMAKE_CURRENT_LIST_DIR}/device-common.cmake)
