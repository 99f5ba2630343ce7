# Included by the top-level CMakeLists.txt in the device build, after the packages are
# found: Debian's CMake package files (gRPC, Abseil, ...) import the shared libraries;
# a static link needs the .a archive next to each. Every imported library target of
# this directory whose location (or a path among its link items) is a lib*.so[.N...]
# is pointed at the lib*.a instead;
# one without an archive is a configuration error naming it (a static build cannot
# use it).
function(fleetmark_use_static_archives)
  get_property(targets DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(target ${targets})
    # Link items given as a path (pkg-config's imported targets, e.g. PkgConfig::RE2
    # behind gRPC's re2::re2, list /usr/lib/.../libre2.so there): the archive instead.
    get_target_property(items ${target} INTERFACE_LINK_LIBRARIES)
    if(items)
      set(static_items "")
      foreach(item ${items})
        if(item MATCHES "^(/.*)\\.so(\\.[0-9.]+)?$")
          if(NOT EXISTS "${CMAKE_MATCH_1}.a")
            message(FATAL_ERROR "${target}: no static archive ${CMAKE_MATCH_1}.a for ${item}")
          endif()
          set(item "${CMAKE_MATCH_1}.a")
        endif()
        list(APPEND static_items "${item}")
      endforeach()
      set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${static_items}")
    endif()
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(SHARED|STATIC|UNKNOWN)_LIBRARY$")
      continue()
    endif()
    foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_NONE IMPORTED_LOCATION_NOCONFIG
                 IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO)
      get_target_property(location ${target} ${prop})
      if(location AND location MATCHES "^(.*)\\.so(\\.[0-9.]+)?$")
        set(archive "${CMAKE_MATCH_1}.a")
        if(NOT EXISTS "${archive}")
          message(FATAL_ERROR "${target}: no static archive ${archive} for ${location}")
        endif()
        set_target_properties(${target} PROPERTIES ${prop} "${archive}")
        set_property(TARGET ${target} PROPERTY IMPORTED_NO_SONAME TRUE)
      endif()
    endforeach()
  endforeach()
endfunction()
fleetmark_use_static_archives()
