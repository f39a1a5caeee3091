# calibrate_data_from_bin(OUT BINDIR DATADIR PREFIX): where the installed
# program finds its data (DATADIR/calibrate) from the directory it lies in
# (BINDIR), as common/cal_paths.c reads it.  With both directories relative
# to the prefix (GNUInstallDirs' default) the answer is relative, e.g.
# "../share/calibrate", so the installed tree can move; an absolute BINDIR
# or DATADIR fixes the data at DATADIR/calibrate under PREFIX.
function(calibrate_data_from_bin out bindir datadir prefix)
  if(IS_ABSOLUTE "${bindir}" OR IS_ABSOLUTE "${datadir}")
    if(IS_ABSOLUTE "${datadir}")
      set(full "${datadir}/calibrate")
    else()
      set(full "${prefix}/${datadir}/calibrate")
    endif()
    get_filename_component(full "${full}" ABSOLUTE)
    set(${out} "${full}" PARENT_SCOPE)
    return()
  endif()
  # any root will do: only the way between the two matters
  get_filename_component(from "/prefix/${bindir}" ABSOLUTE)
  get_filename_component(to "/prefix/${datadir}/calibrate" ABSOLUTE)
  file(RELATIVE_PATH rel "${from}" "${to}")
  if(rel STREQUAL "")
    set(rel ".")
  endif()
  set(${out} "${rel}" PARENT_SCOPE)
endfunction()
