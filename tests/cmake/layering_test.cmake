# cmake -P: the layer matrix's rules (cmake/StallscopeLayering.cmake), edge by edge.
cmake_minimum_required(VERSION 3.25)  # policies as in the build (IN_LIST, empty list elements)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/StallscopeLayering.cmake)

function(expect lib links want)
    stallscope_layer_violations(${lib} "${links}" got)
    if(NOT "${got}" STREQUAL "${want}")
        message(FATAL_ERROR "${lib} linking '${links}': expected '${want}', got '${got}'")
    endif()
endfunction()

# The siblings: neither importers nor analysis may use the other.
expect(stallscope_importers "stallscope_model;stallscope_base;simdjson::simdjson" "")
expect(stallscope_importers "stallscope_analysis" "stallscope_importers -> stallscope_analysis")
expect(stallscope_analysis "stallscope_importers" "stallscope_analysis -> stallscope_importers")
# The scene is a sibling of the analysis (its intervals are the model's): neither uses the other.
expect(stallscope_scene "stallscope_model;stallscope_base" "")
expect(stallscope_scene "stallscope_analysis" "stallscope_scene -> stallscope_analysis")
expect(stallscope_analysis "stallscope_scene" "stallscope_analysis -> stallscope_scene")
# The one loader may hand the GUI its timeline index.
expect(stallscope_workspace "stallscope_importers;stallscope_analysis;stallscope_scene" "")
# Nothing goes down to up: the model and base use no layer above them.
expect(stallscope_model "stallscope_base" "")
expect(stallscope_model "stallscope_importers" "stallscope_model -> stallscope_importers")
expect(stallscope_base "stallscope_model" "stallscope_base -> stallscope_model")
# Reports reach the source text through the model, not the importers; capture never uses
# reports or the analysis; a PRIVATE edge ($<LINK_ONLY:...>) counts as much as a PUBLIC one.
expect(stallscope_reports "stallscope_importers" "stallscope_reports -> stallscope_importers")
expect(stallscope_capture "stallscope_importers;$<LINK_ONLY:stallscope_reports>" "stallscope_capture -> stallscope_reports")
expect(stallscope_capture "stallscope_analysis" "stallscope_capture -> stallscope_analysis")
# App-level targets may use everything.
expect(stallscope_gui "stallscope_capture;stallscope_reports;stallscope_importers" "")
message(STATUS "layering: all edges as expected")
