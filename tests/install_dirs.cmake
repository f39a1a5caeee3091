# cmake -DSRC=SOURCE_DIR -P install_dirs.cmake: the way from the installed
# binary to its data (cmake/calibrate_paths.cmake) for GNUInstallDirs
# layouts: relative while BINDIR and DATADIR are (the tree can move),
# absolute when either is.
include(${SRC}/cmake/calibrate_paths.cmake)
set(failed 0)
function(expect bindir datadir prefix want)
  calibrate_data_from_bin(got "${bindir}" "${datadir}" "${prefix}")
  if(NOT got STREQUAL want)
    message("FAIL: BINDIR '${bindir}' DATADIR '${datadir}' PREFIX '${prefix}':"
            " got '${got}', want '${want}'")
    set(failed 1 PARENT_SCOPE)
  endif()
endfunction()
expect(bin share /usr/local ../share/calibrate)
expect(bin/ ./share /opt/x ../share/calibrate)
expect(libexec/calibrate/bin share /usr ../../../share/calibrate)
expect(bin lib/data /usr ../lib/data/calibrate)
expect(. share /usr share/calibrate)
expect(bin /usr/share /opt/x /usr/share/calibrate)
expect(/usr/bin share /opt/x /opt/x/share/calibrate)
expect(/usr/bin /srv/data/ /opt/x /srv/data/calibrate)
if(failed)
  message(FATAL_ERROR "install_dirs: wrong data paths")
endif()
message("install_dirs: all layouts give the expected data path")
