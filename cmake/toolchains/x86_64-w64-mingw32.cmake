# x86_64-w64-mingw32.cmake - cross-compiles for Windows x64 with Debian's
# MinGW-w64 (g++-mingw-w64-x86-64), and runs what it builds under wine:
#
#   cmake -S . -B build-windows \
#         -DCMAKE_TOOLCHAIN_FILE=<coroutine>/cmake/toolchains/x86_64-w64-mingw32.cmake
#
# `make consumer-test` builds a consumer through it and runs the programs.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# Headers and libraries of the target only; programs (the build tools) of the host.
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Programs and DLLs that need no DLL of MinGW's (libgcc_s_seh-1.dll,
# libstdc++-6.dll), so that they start on a Windows without MinGW: its
# runtime is linked in.  A C++ program needs this too for the library to
# see its exceptions (see docs/windows-abi.md).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")

set(CMAKE_CROSSCOMPILING_EMULATOR wine)
