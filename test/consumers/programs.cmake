# The programs every CMake consumer here builds with coroutine::coroutine:
# the generator example, and version.c, which fails unless COROUTINE_VERSION
# (what CMake says) is coroutine.h's version.
add_executable(generator ${CMAKE_CURRENT_LIST_DIR}/../../examples/generator.c)
target_link_libraries(generator PRIVATE coroutine::coroutine)

add_executable(version ${CMAKE_CURRENT_LIST_DIR}/version.c)
target_compile_definitions(version PRIVATE EXPECTED_VERSION="${COROUTINE_VERSION}")
target_link_libraries(version PRIVATE coroutine::coroutine)

# Installed, the programs find a shared libcoroutine where README's lines
# (cmake-install-rpath, which run.sh finds here word for word) point them:
# <prefix>/lib, where the library's install rules put it beside them, or
# the directory they were linked with (find_package's prefix).  On Windows
# the DLL lies in <prefix>/bin beside them.
include(GNUInstallDirs)
set_target_properties(generator version PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
  INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS generator version)
