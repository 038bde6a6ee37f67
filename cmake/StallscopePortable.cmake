# The portable (headless) build: binaries that run on another Linux with the same or a newer
# glibc, with nothing installed but the C and C++ runtimes, zlib and, for GPU capture, the CUDA
# driver and CUPTI. So:

#  * the CLI links protobuf from Debian's static archive (libprotobuf.a);
#  * the CUPTI injection library is a shared library, and Debian's libprotobuf-lite.a is not
#    position-independent (initial-exec TLS), so the injection library compiles protobuf-lite's
#    own sources, from Debian's source tarball of the same release (3.21.12), as PIC;
#  * simdjson, which Debian ships only as a shared library, is compiled from the same release's
#    amalgamated sources (simdjson.cpp), also from Debian's source tarball;
#  * SQLite is linked from Debian's static archive (libsqlite3.a, position-independent).
# Each tarball is checked against the SHA-256 of its Debian .dsc and cached in the build
# folder. Where the build machine has no network, put the tarballs in a folder and give
# -DSTALLSCOPE_SOURCE_TARBALLS=FOLDER.
# scripts/check-portable.sh checks the result (the shared libraries each binary needs).

set(STALLSCOPE_SOURCE_TARBALLS "" CACHE PATH
    "Folder holding simdjson_3.0.1.orig.tar.gz and protobuf_3.21.12.orig.tar.gz for the portable build (downloaded when empty)")

# Fetches Debian's source tarball NAME_VERSION.orig.tar.gz of pool folder POOL, checks it
# against SHA256 and extracts the PATTERNS (paths below NAME-VERSION/) into the build folder;
# sets OUT_DIR to the extracted NAME-VERSION folder.
function(stallscope_debian_source name version pool sha256 out_dir)
    set(deps ${CMAKE_BINARY_DIR}/_deps)
    set(file ${name}_${version}.orig.tar.gz)
    set(tarball ${deps}/${file})
    if(STALLSCOPE_SOURCE_TARBALLS AND EXISTS ${STALLSCOPE_SOURCE_TARBALLS}/${file})
        file(COPY_FILE ${STALLSCOPE_SOURCE_TARBALLS}/${file} ${tarball} ONLY_IF_DIFFERENT)
    endif()
    if(EXISTS ${tarball})
        file(SHA256 ${tarball} have)
        if(NOT have STREQUAL sha256)
            message(STATUS "portable build: ${tarball} has SHA-256 ${have}, not ${sha256}; fetching again")
            file(REMOVE ${tarball})
        endif()
    endif()
    foreach(url "http://deb.debian.org/debian/pool/main/${pool}/${file}"
                "https://snapshot.debian.org/archive/debian/20250520T000000Z/pool/main/${pool}/${file}")
        if(EXISTS ${tarball})
            break()
        endif()
        message(STATUS "portable build: downloading ${url}")
        file(DOWNLOAD ${url} ${tarball}.part STATUS status TIMEOUT 300 EXPECTED_HASH SHA256=${sha256})
        list(GET status 0 code)
        if(code EQUAL 0)
            file(RENAME ${tarball}.part ${tarball})
        else()
            file(REMOVE ${tarball}.part)
            message(STATUS "portable build: ${url}: ${status}")
        endif()
    endforeach()
    if(NOT EXISTS ${tarball})
        message(FATAL_ERROR "The portable build compiles ${name} ${version} from Debian's source "
                            "tarball and could not download it. Put ${file} in a folder and give "
                            "-DSTALLSCOPE_SOURCE_TARBALLS=FOLDER.")
    endif()
    set(src ${deps}/${name}-${version})
    if(NOT EXISTS ${src}/.extracted)
        set(patterns "")
        foreach(p IN LISTS ARGN)
            list(APPEND patterns ${name}-${version}/${p})
        endforeach()
        file(ARCHIVE_EXTRACT INPUT ${tarball} DESTINATION ${deps} PATTERNS ${patterns})
        file(TOUCH ${src}/.extracted)
    endif()
    set(${out_dir} ${src} PARENT_SCOPE)
endfunction()

if(STALLSCOPE_PORTABLE)
    set(Protobuf_USE_STATIC_LIBS ON)
        # The C++ runtime stays shared: linked in, libstdc++ and libgcc would need glibc 2.36
    # (arc4random, _dl_find_object), which rules out Ubuntu 22.04, while the shared one needs
    # GLIBCXX_3.4.30, which Ubuntu 22.04 has (scripts/check-portable.sh holds that line).

    stallscope_debian_source(simdjson 3.0.1 s/simdjson
        156b1bc5eb0561b2bd166b46d191fd3d95a3e709cc63761477d3b7aec2b6e9ed STALLSCOPE_SIMDJSON_SRC
        singleheader/simdjson.cpp singleheader/simdjson.h LICENSE)
    add_library(thirdparty_simdjson STATIC EXCLUDE_FROM_ALL ${STALLSCOPE_SIMDJSON_SRC}/singleheader/simdjson.cpp)
    target_include_directories(thirdparty_simdjson SYSTEM PUBLIC ${STALLSCOPE_SIMDJSON_SRC}/singleheader)
    set_target_properties(thirdparty_simdjson PROPERTIES POSITION_INDEPENDENT_CODE ON)
    add_library(simdjson::simdjson ALIAS thirdparty_simdjson)

    # SQLite (the importers read the table names of a database a user brings): Debian's
    # static archive, which is position-independent and needs only libm beside libc.
    find_library(STALLSCOPE_SQLITE3_STATIC NAMES libsqlite3.a REQUIRED)
    find_path(STALLSCOPE_SQLITE3_INCLUDE sqlite3.h REQUIRED)
    add_library(SQLite::SQLite3 STATIC IMPORTED)
    set_target_properties(SQLite::SQLite3 PROPERTIES
        IMPORTED_LOCATION ${STALLSCOPE_SQLITE3_STATIC}
        INTERFACE_INCLUDE_DIRECTORIES ${STALLSCOPE_SQLITE3_INCLUDE}
        INTERFACE_LINK_LIBRARIES "m;${CMAKE_DL_LIBS};Threads::Threads")

    # protobuf-lite, position-independent, for the injection library (capture/cupti): its
    # source list is the one protobuf's own CMake build uses.
    stallscope_debian_source(protobuf 3.21.12 p/protobuf
        930c2c3b5ecc6c9c12615cf5ad93f1cd6e12d0aba862b572e076259970ac3a53 STALLSCOPE_PROTOBUF_SRC
        src/google/protobuf cmake/libprotobuf-lite.cmake LICENSE)
    file(STRINGS ${STALLSCOPE_PROTOBUF_SRC}/cmake/libprotobuf-lite.cmake lite_lines REGEX "\\.cc$")
    set(lite_sources "")
    foreach(line IN LISTS lite_lines)
        string(STRIP "${line}" line)
        string(REPLACE "\${protobuf_SOURCE_DIR}" "${STALLSCOPE_PROTOBUF_SRC}" line "${line}")
        list(APPEND lite_sources ${line})
    endforeach()
    add_library(thirdparty_protobuf_lite_pic STATIC EXCLUDE_FROM_ALL ${lite_sources})
    target_include_directories(thirdparty_protobuf_lite_pic SYSTEM BEFORE PUBLIC ${STALLSCOPE_PROTOBUF_SRC}/src)
    target_compile_options(thirdparty_protobuf_lite_pic PRIVATE -w)
    set_target_properties(thirdparty_protobuf_lite_pic PROPERTIES POSITION_INDEPENDENT_CODE ON
                          CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endif()
