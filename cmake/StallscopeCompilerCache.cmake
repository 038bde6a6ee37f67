# ccache as the compiler launcher when it is installed (scripts/setup-deps.sh installs it).
# CCACHE_BASEDIR is the source folder, so a copy of the tree elsewhere (the scratch build of
# tests/extension/scratch_build.py) reuses what this build compiled: only the files it
# changes are compiled again. -DSTALLSCOPE_CCACHE=OFF turns it off (the ASan preset: its
# objects are built once per CI run, so a cache only adds work).
option(STALLSCOPE_CCACHE "Compile through ccache when it is installed" ON)
if(STALLSCOPE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
    find_program(STALLSCOPE_CCACHE_PROGRAM ccache)
    if(STALLSCOPE_CCACHE_PROGRAM)
        set(_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
                      CCACHE_NOHASHDIR=1 ${STALLSCOPE_CCACHE_PROGRAM})
        set(CMAKE_CXX_COMPILER_LAUNCHER ${_launcher})
        set(CMAKE_C_COMPILER_LAUNCHER ${_launcher})
        unset(_launcher)
    endif()
endif()
