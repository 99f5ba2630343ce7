# Device build for Linux x86_64 (static, native compiler): deploy/dist.sh x86_64.
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(FLEETMARK_TRIPLE x86_64-linux-gnu)
set(FLEETMARK_CROSS OFF)
include(${CMAKE_CURRENT_LIST_DIR}/device-common.cmake)
