# The layer matrix: which Stallscope library may link which (docs/architecture.md shows the
# same table). Configuring fails on any other edge between Stallscope targets, and on Qt in
# a library below app/. Third-party libraries are each library's own business.
#
#   base        Qt-free helpers every layer may use
#   model       the trace model
#   importers   files -> model                 analysis   model -> findings
#   scene       the timeline scene (rows, level of detail, ticks, shading) as a draw list,
#               painted by the GUI and written as SVG by the reports
#   reports     analysis -> documents (the annotated trace copies its source through the
#               model's TextReader, set by the importer: no edge to importers)
#   workspace   the one loader: a path imported and analysed (importers + analysis)
#   capture     live recording -> model (+ importers where it converts: a finished recording
#               is imported back, logged args are parsed)
#   app/        cli, gui, pdf, torch demos, CUPTI: may use everything below
#
# Edges are read from LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES, PUBLIC and PRIVATE alike.
# Each row: "library=allowed,allowed,..." (commas: a ';' would split the row).
set(STALLSCOPE_LAYERS
    "stallscope_base="
    "stallscope_model=stallscope_base"
    "stallscope_importers=stallscope_model,stallscope_base"
    "stallscope_analysis=stallscope_model,stallscope_base"
    "stallscope_scene=stallscope_model,stallscope_base"
    "stallscope_reports=stallscope_scene,stallscope_analysis,stallscope_model,stallscope_base"
    "stallscope_workspace=stallscope_importers,stallscope_analysis,stallscope_scene,stallscope_model,stallscope_base"
    "stallscope_capture_proto="
    "stallscope_capture=stallscope_capture_proto,stallscope_importers,stallscope_model,stallscope_base"
    # Capture back ends: LibTorch demos and recorder, CUPTI conversion and the injection
    # library (loaded into other programs: nothing but its headers and CUPTI).
    "stallscope_torch=stallscope_capture,stallscope_capture_proto,stallscope_model,stallscope_base"
    "stallscope_cupti_headers="
    "stallscope_cupti_convert=stallscope_cupti_headers,stallscope_capture,stallscope_capture_proto,stallscope_model,stallscope_base"
    "stallscope_cupti_injection=stallscope_cupti_headers"
)
# Libraries below app/, and those LibTorch or other programs load: no Qt (Qt's `slots`
# macro breaks LibTorch headers).
set(STALLSCOPE_QT_FREE stallscope_base stallscope_model stallscope_importers stallscope_analysis
    stallscope_workspace stallscope_scene stallscope_reports stallscope_capture_proto stallscope_capture stallscope_torch
    stallscope_cupti_headers stallscope_cupti_convert stallscope_cupti_injection)

# The Stallscope libraries `lib` may link (`out`), or "*" for app-level targets not in the
# table (which may link anything).
function(stallscope_layer_allowed lib out)
    foreach(row IN LISTS STALLSCOPE_LAYERS)
        string(REPLACE "=" "," parts "${row}")
        string(REPLACE "," ";" parts "${parts}")
        list(GET parts 0 name)
        if(name STREQUAL lib)
            list(REMOVE_AT parts 0)
            set(${out} "${parts}" PARENT_SCOPE)
            return()
        endif()
    endforeach()
    set(${out} "*" PARENT_SCOPE)
endfunction()

# The edges from `lib` to the libraries in `links` that the matrix forbids, as
# "lib -> other" strings in `out`. Pure: tests/cmake/layering_test.cmake calls it.
function(stallscope_layer_violations lib links out)
    stallscope_layer_allowed(${lib} allowed)
    set(bad "")
    foreach(dep IN LISTS links)
        # $<LINK_ONLY:x> and other generator expressions around a target name.
        string(REGEX REPLACE "^\\$<[A-Z_]+:(.*)>$" "\\1" dep "${dep}")
        if(NOT dep MATCHES "^stallscope_" OR dep STREQUAL lib)
            continue()
        endif()
        if(NOT allowed STREQUAL "*" AND NOT dep IN_LIST allowed)
            list(APPEND bad "${lib} -> ${dep}")
        endif()
    endforeach()
    set(${out} "${bad}" PARENT_SCOPE)
endfunction()

# Checks every library of the table that exists in this build; call after all targets are
# defined (the end of the top-level CMakeLists.txt).
function(stallscope_check_layers)
    set(errors "")
    foreach(row IN LISTS STALLSCOPE_LAYERS)
        string(REGEX REPLACE "=.*" "" lib "${row}")
        if(NOT TARGET ${lib})
            continue()
        endif()
        get_target_property(libs ${lib} LINK_LIBRARIES)
        get_target_property(ilibs ${lib} INTERFACE_LINK_LIBRARIES)
        set(all "")
        foreach(l IN LISTS libs ilibs)
            if(NOT l MATCHES "-NOTFOUND$")
                list(APPEND all "${l}")
            endif()
        endforeach()
        stallscope_layer_violations(${lib} "${all}" bad)
        list(APPEND errors ${bad})
        if(lib IN_LIST STALLSCOPE_QT_FREE)
            foreach(l IN LISTS all)
                if(l MATCHES "Qt[0-9]*::")
                    list(APPEND errors "${lib} -> ${l} (Qt below app/)")
                endif()
            endforeach()
        endif()
    endforeach()
    if(errors)
        list(JOIN errors "\n  " text)
        message(FATAL_ERROR "Forbidden links between layers (cmake/StallscopeLayering.cmake):\n  ${text}")
    endif()
endfunction()
