# aarch64-linux-gnu.cmake - cross-compiles for 64-bit Arm Linux (glibc) with
# Debian's g++-aarch64-linux-gnu, and runs what it builds under qemu-user:
#
#   cmake -S . -B build-aarch64 \
#         -DCMAKE_TOOLCHAIN_FILE=<coroutine>/cmake/toolchains/aarch64-linux-gnu.cmake
#
# `make consumer-test` builds a consumer through it and runs the programs.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Headers and libraries of the target only; programs (the build tools) of the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# How ctest and add_custom_command run a target's programs.  -L: the target's
# dynamic loader and libc come from the cross compiler's tree.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
