# calibrate_find_dnnl(): oneDNN through its CMake package config (Debian's
# libdnnl-dev ships one, no .pc file), or one line saying what is wrong.
# The oneDNN engine (kernels/engines/) is written against the 2.x matmul
# API (operation descriptors), which oneDNN 3.0 removed: a 3.x is refused
# here instead of failing in the compiler.
macro(calibrate_find_dnnl)
  find_package(dnnl CONFIG QUIET)
  if(NOT dnnl_FOUND)
    set(_cal_why "")
    if(dnnl_NOT_FOUND_MESSAGE)
      set(_cal_why " (${dnnl_NOT_FOUND_MESSAGE})")
    endif()
    message(FATAL_ERROR "oneDNN 2.x not found${_cal_why}: install it "
            "(Debian 12: apt-get install libdnnl-dev ocl-icd-opencl-dev) "
            "or set dnnl_DIR to its CMake config")
  endif()
  if(dnnl_VERSION VERSION_LESS 2.6 OR NOT dnnl_VERSION VERSION_LESS 3)
    message(FATAL_ERROR "oneDNN ${dnnl_VERSION} (${dnnl_DIR}) cannot build "
            "calibrate's oneDNN engine, which uses the 2.x matmul API: "
            "install oneDNN 2.6 to 2.x (Debian 12's libdnnl-dev) or set "
            "dnnl_DIR to one")
  endif()
endmacro()
