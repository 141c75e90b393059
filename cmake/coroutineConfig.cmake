# find_package(coroutine CONFIG) reads this file: it defines coroutine::coroutine.
include("${CMAKE_CURRENT_LIST_DIR}/coroutineTargets.cmake")
