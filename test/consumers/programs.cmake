# The programs every CMake consumer here builds with coroutine::coroutine:
# the generator example, and version.c, which fails unless COROUTINE_VERSION
# (what CMake says) is coroutine.h's version.
add_executable(generator ${CMAKE_CURRENT_LIST_DIR}/../../examples/generator.c)
target_link_libraries(generator PRIVATE coroutine::coroutine)

add_executable(version ${CMAKE_CURRENT_LIST_DIR}/version.c)
target_compile_definitions(version PRIVATE EXPECTED_VERSION="${COROUTINE_VERSION}")
target_link_libraries(version PRIVATE coroutine::coroutine)

# Installed, the programs find a shared libcoroutine where the library's
# install rules put it: <prefix>/lib (RPATH $ORIGIN/../lib), or on Windows
# <prefix>/bin beside them.
include(GNUInstallDirs)
set_target_properties(generator version PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS generator version)
