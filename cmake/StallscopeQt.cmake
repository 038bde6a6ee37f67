# moc run with Qt's include paths only. Qt 6.4's moc cannot parse libstdc++ 12's <concepts>,
# which CMake's AUTOMOC makes it read through the compiler's system include paths; without
# them moc skips the includes it cannot find and reads only our class declarations.
# (docs/decisions.md)
#
# stallscope_moc(target HEADERS a.h b.h SOURCES c.cpp)
#   HEADERS: moc_<name>.cpp is generated and compiled
#   SOURCES: <name>.moc is generated for `#include "<name>.moc"` at the end of the .cpp
function(stallscope_moc target)
    cmake_parse_arguments(M "" "" "HEADERS;SOURCES" ${ARGN})
    set(outdir ${CMAKE_CURRENT_BINARY_DIR}/${target}_moc)
    set(qtincludes
        "-I$<JOIN:$<TARGET_PROPERTY:Qt6::Core,INTERFACE_INCLUDE_DIRECTORIES>,;-I>")
    if(TARGET Qt6::Widgets)
        list(APPEND qtincludes "-I$<JOIN:$<TARGET_PROPERTY:Qt6::Widgets,INTERFACE_INCLUDE_DIRECTORIES>,;-I>")
    endif()
    if(TARGET Qt6::Test)
        list(APPEND qtincludes "-I$<JOIN:$<TARGET_PROPERTY:Qt6::Test,INTERFACE_INCLUDE_DIRECTORIES>,;-I>")
    endif()
    foreach(src IN LISTS M_HEADERS M_SOURCES)
        get_filename_component(abs ${src} ABSOLUTE)
        get_filename_component(stem ${src} NAME_WE)
        list(FIND M_HEADERS ${src} isHeader)
        if(isHeader GREATER -1)
            set(out ${outdir}/moc_${stem}.cpp)
        else()
            set(out ${outdir}/${stem}.moc)
        endif()
        add_custom_command(OUTPUT ${out}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${outdir}
            COMMAND Qt6::moc ${qtincludes} ${abs} -o ${out}
            DEPENDS ${abs} COMMAND_EXPAND_LISTS VERBATIM)
        target_sources(${target} PRIVATE ${out})
        if(isHeader EQUAL -1)
            set_source_files_properties(${out} PROPERTIES HEADER_FILE_ONLY ON)
        endif()
    endforeach()
    target_include_directories(${target} PRIVATE ${outdir})
endfunction()
