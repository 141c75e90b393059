# Writes coroutine.pc from coroutine.pc.in, as `make install` does, for the
# prefix being installed to.  Run by `cmake --install` (see CMakeLists.txt):
# PC_IN, PC_OUT, VERSION, and INCLUDEDIR and LIBDIR (relative to the
# prefix, or absolute) are set by the caller, CMAKE_INSTALL_PREFIX by cmake.
set(PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(dir INCLUDEDIR LIBDIR)
  if(NOT IS_ABSOLUTE "${${dir}}")
    set(${dir} "\${prefix}/${${dir}}")
  endif()
endforeach()
configure_file("${PC_IN}" "${PC_OUT}" @ONLY)
