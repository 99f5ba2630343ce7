# Debian packages of the host build (CPack DEB; deploy/package.sh runs it):
#   fleetmark-coordinator  /usr/bin/fleetmark-coordinator, the fleetmark CLI, the web view
#                          (/usr/share/fleetmark/web), plans (/usr/share/fleetmark/plans)
#   fleetmark-agent        /usr/bin/fleetmark-agent, plans (/usr/share/fleetmark-agent/plans)
# each with its systemd unit (/lib/systemd/system), an example env file
# (/usr/share/doc/PACKAGE/examples) and a copyright file and changelog. The units are
# deploy/systemd/*.service with /usr/local/ paths turned into /usr/ ones. Shared-library
# dependencies come from dpkg-shlibdeps. Nothing is enabled or started on install.
set(fleetmark_pkg_dir "${CMAKE_BINARY_DIR}/packaging")
set(fleetmark_maintainer "fleetmark developers <fleetmark@example.org>")
string(TIMESTAMP fleetmark_pkg_date "%a, %d %b %Y %H:%M:%S +0000" UTC)

foreach(component agent coordinator)
  set(package fleetmark-${component})
  file(READ "${PROJECT_SOURCE_DIR}/deploy/systemd/${package}.service" unit)
  string(REPLACE "/usr/local/" "/usr/" unit "${unit}")
  file(WRITE "${fleetmark_pkg_dir}/${package}.service" "${unit}")
  file(WRITE "${fleetmark_pkg_dir}/${package}/copyright"
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
    "Upstream-Name: fleetmark\n"
    "Source: the fleetmark repository\n\n"
    "Files: *\n"
    "Copyright: 2026 the fleetmark developers\n"
    "License: proprietary\n"
    " All rights reserved by the fleetmark developers.\n")
  file(WRITE "${fleetmark_pkg_dir}/${package}/changelog"
    "${package} (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
    "  * fleetmark ${PROJECT_VERSION}, built with CPack (deploy/package.sh).\n\n"
    " -- ${fleetmark_maintainer}  ${fleetmark_pkg_date}\n")
  # Debian wants the changelog compressed with gzip -9n (no name, no timestamp).
  execute_process(COMMAND gzip -9nf "${fleetmark_pkg_dir}/${package}/changelog" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip of ${package}'s changelog failed")
  endif()
  install(FILES "${fleetmark_pkg_dir}/${package}.service" DESTINATION /lib/systemd/system COMPONENT ${component})
  install(FILES "${fleetmark_pkg_dir}/${package}/copyright" "${fleetmark_pkg_dir}/${package}/changelog.gz"
          DESTINATION share/doc/${package} COMPONENT ${component})
  install(FILES "${PROJECT_SOURCE_DIR}/deploy/packaging/${component}.env.example"
          DESTINATION share/doc/${package}/examples RENAME ${component}.env COMPONENT ${component})
endforeach()

install(TARGETS fleetmark-agent RUNTIME DESTINATION bin COMPONENT agent)
install(TARGETS fleetmark-coordinator fleetmark RUNTIME DESTINATION bin COMPONENT coordinator)
install(DIRECTORY "${FLEETMARK_WEB_DIST}/" DESTINATION share/fleetmark/web COMPONENT coordinator)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/plans/" DESTINATION share/fleetmark/plans COMPONENT coordinator)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/plans/" DESTINATION share/fleetmark-agent/plans COMPONENT agent)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fleetmark)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${fleetmark_maintainer}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent coordinator)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://fleetmark.example.org/")
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME fleetmark-agent)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_NAME fleetmark-coordinator)
# Debian descriptions: a synopsis line, then lines of at most 80 characters.
set(CPACK_COMPONENT_AGENT_DESCRIPTION "benchmark agent of the fleetmark grid
Runs the concurrency benchmark jobs a fleetmark coordinator sends it and
streams the results back, spooling them across restarts and outages.")
set(CPACK_COMPONENT_COORDINATOR_DESCRIPTION "coordinator, CLI and web view of the fleetmark benchmark grid
Schedules concurrency benchmark runs on fleetmark agents, stores their
results in PostgreSQL and serves a web view; fleetmark is its CLI.")
include(CPack)
