# Device build for Linux armhf (32-bit ARMv7, hard float): deploy/dist.sh armhf.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(FLEETMARK_TRIPLE arm-linux-gnueabihf)
set(FLEETMARK_CROSS ON)
set(FLEETMARK_EMULATOR qemu-arm-static)
include(${CMAKE_CURRENT_LIST_DIR}/device-common.cmake)
