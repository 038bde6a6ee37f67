# Install rules and Debian packages (CPack). Three packages, built by scripts/package.sh:
#   stallscope-cli   from the headless build (no Qt): the CLI, the CUPTI injection library, the
#                    workloads, man page, bash completion
#   stallscope       from the release build: the GUI, desktop file, MIME type, icons, AppStream
#                    metainfo, man page (Recommends stallscope-cli: recording needs its library)
#   stallscope-demo  from the release build, where LibTorch was found: the LibTorch demos
# Every path is relative to the install prefix (/usr in the packages); the programs find the
# injection library and the demo relative to their own location (../lib/stallscope/).
include(GNUInstallDirs)

set(STALLSCOPE_LIBDIR "lib/stallscope")  # private: not a public library, not multi-arch
set(STALLSCOPE_DATADIR "${CMAKE_INSTALL_DATADIR}/stallscope")
set(STALLSCOPE_PACKAGING ${CMAKE_SOURCE_DIR}/packaging)

# ---- the CLI package's files (any build with the CLI)
if(TARGET stallscope-cli)
    install(TARGETS stallscope-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
    if(TARGET stallscope_cupti_injection)
        install(TARGETS stallscope_cupti_injection LIBRARY DESTINATION ${STALLSCOPE_LIBDIR} COMPONENT cli
                NAMELINK_SKIP)
    endif()
    # The workload scripts run as programs (executable); common.py is their module.
    file(GLOB workload_scripts ${CMAKE_SOURCE_DIR}/resources/workloads/*.py)
    list(FILTER workload_scripts EXCLUDE REGEX "/common\\.py$")
    install(PROGRAMS ${workload_scripts} DESTINATION ${STALLSCOPE_DATADIR}/workloads COMPONENT cli)
    install(FILES ${CMAKE_SOURCE_DIR}/resources/workloads/common.py ${CMAKE_SOURCE_DIR}/resources/workloads/README.md
            DESTINATION ${STALLSCOPE_DATADIR}/workloads COMPONENT cli)
    install(FILES ${STALLSCOPE_PACKAGING}/completion/stallscope-cli
            DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT cli)
    # The Python package (standard library only; docs/python.md) where Debian's python3 finds
    # it; the modules only (0644, no __pycache__), it finds the CLI in ../../../bin.
    file(GLOB python_modules CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/python/stallscope/*.py)
    install(FILES ${python_modules} DESTINATION lib/python3/dist-packages/stallscope COMPONENT cli)
    # The man page is generated from the CLI's own --help text (stallscope-cli help --man).
    add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/stallscope-cli.1.gz
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
        COMMAND $<TARGET_FILE:stallscope-cli> help --man > ${CMAKE_BINARY_DIR}/man/stallscope-cli.1
        COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/man/stallscope-cli.1
        DEPENDS stallscope-cli VERBATIM)
    add_custom_target(stallscope_cli_man ALL DEPENDS ${CMAKE_BINARY_DIR}/man/stallscope-cli.1.gz)
    install(FILES ${CMAKE_BINARY_DIR}/man/stallscope-cli.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT cli)
    install(FILES ${STALLSCOPE_PACKAGING}/debian/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stallscope-cli
            COMPONENT cli)
    install(FILES ${CMAKE_BINARY_DIR}/changelog/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stallscope-cli
            COMPONENT cli)
endif()

# ---- the GUI package's files
if(TARGET stallscope)
    install(TARGETS stallscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gui)
    install(FILES ${STALLSCOPE_PACKAGING}/io.github.stallscope.Stallscope.desktop
            DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT gui)
    install(FILES ${STALLSCOPE_PACKAGING}/io.github.stallscope.Stallscope.metainfo.xml
            DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo COMPONENT gui)
    install(FILES ${STALLSCOPE_PACKAGING}/stallscope-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
            RENAME stallscope.xml COMPONENT gui)
    install(FILES ${CMAKE_SOURCE_DIR}/resources/icons/stallscope.svg
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT gui)
    # The hicolor PNG sizes, rendered from the SVG by the GUI itself (--render-icon).
    set(icon_outputs "")
    foreach(px 16 22 24 32 48 64 128 256)
        set(png ${CMAKE_BINARY_DIR}/icons/${px}x${px}/stallscope.png)
        add_custom_command(OUTPUT ${png}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/icons/${px}x${px}
            COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen $<TARGET_FILE:stallscope> --render-icon ${png} --size ${px}x${px}
            DEPENDS stallscope ${CMAKE_SOURCE_DIR}/resources/icons/stallscope.svg VERBATIM)
        list(APPEND icon_outputs ${png})
        install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${px}x${px}/apps COMPONENT gui)
    endforeach()
    add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/man/stallscope.1.gz
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
        COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen $<TARGET_FILE:stallscope> --man > ${CMAKE_BINARY_DIR}/man/stallscope.1
        COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/man/stallscope.1
        DEPENDS stallscope VERBATIM)
    add_custom_target(stallscope_gui_files ALL DEPENDS ${icon_outputs} ${CMAKE_BINARY_DIR}/man/stallscope.1.gz)
    install(FILES ${CMAKE_BINARY_DIR}/man/stallscope.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT gui)
    install(FILES ${STALLSCOPE_PACKAGING}/completion/stallscope
            DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT gui)
    install(FILES ${STALLSCOPE_PACKAGING}/debian/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stallscope
            COMPONENT gui)
    install(FILES ${CMAKE_BINARY_DIR}/changelog/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stallscope
            COMPONENT gui)
endif()
if(TARGET stallscope-demo)
    install(TARGETS stallscope-demo RUNTIME DESTINATION ${STALLSCOPE_LIBDIR} COMPONENT demo)
    install(FILES ${STALLSCOPE_PACKAGING}/debian/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stallscope-demo
            COMPONENT demo)
    install(FILES ${CMAKE_BINARY_DIR}/changelog/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/stallscope-demo
            COMPONENT demo)
endif()

# Debian wants a compressed changelog in each package's doc folder (built from
# packaging/debian/changelog, compressed reproducibly).
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/changelog)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/changelog/changelog.Debian.gz
    COMMAND ${CMAKE_COMMAND} -E copy ${STALLSCOPE_PACKAGING}/debian/changelog ${CMAKE_BINARY_DIR}/changelog/changelog.Debian
    COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/changelog/changelog.Debian
    DEPENDS ${STALLSCOPE_PACKAGING}/debian/changelog VERBATIM)
add_custom_target(stallscope_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/changelog/changelog.Debian.gz)

# ---- CPack: one .deb per component present in this build
set(CPACK_GENERATOR DEB)
# Each component's description's first line is its synopsis (CPackDeb puts the package-wide
# summary first otherwise).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
set(CPACK_PACKAGE_NAME stallscope)
set(CPACK_PACKAGE_VENDOR "Stallscope developers")
set(CPACK_PACKAGE_CONTACT "Stallscope developers <stallscope@users.noreply.github.com>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/stallscope/stallscope")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends from the binaries (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# CUPTI comes with the NVIDIA CUDA toolkit or PyTorch's own packages, not from a Debian package
# dpkg-shlibdeps knows: scripts/package.sh computes the CLI package's Depends itself
# (dpkg-shlibdeps --ignore-missing-info) and passes them in STALLSCOPE_CLI_DEPENDS.
set(components "")
if(TARGET stallscope-cli AND NOT TARGET stallscope)
    list(APPEND components cli)
endif()
if(TARGET stallscope)
    list(APPEND components gui)
endif()
if(TARGET stallscope-demo)
    list(APPEND components demo)
endif()
set(CPACK_COMPONENTS_ALL ${components})

set(CPACK_DEBIAN_CLI_PACKAGE_NAME stallscope-cli)
set(CPACK_COMPONENT_CLI_DESCRIPTION "Why is my GPU idle? PyTorch trace diagnostics, command line
stallscope-cli reads torch.profiler / TensorBoard traces (Kineto JSON, plain
or gzip) and explains why the GPU sat idle: data loading, blocking copies,
host syncs, launch-bound stretches, logging. It records live GPU sessions
(CUPTI) or attaches to a running PyTorch job (Kineto's daemon protocol),
writes HTML, Markdown and JSON reports and gates CI on regressions.
No Qt needed: suited to GPU servers.")
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_CLI_PACKAGE_SUGGESTS "stallscope, python3-torch")
# The Python package in dist-packages (docs/python.md) runs on Debian's python3.
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "python3")

set(CPACK_DEBIAN_GUI_PACKAGE_NAME stallscope)
set(CPACK_COMPONENT_GUI_DESCRIPTION "Why is my GPU idle? PyTorch trace diagnostics, desktop application
Stallscope opens torch.profiler / TensorBoard traces, draws CPU and GPU
timelines and flame graphs, finds idle gaps, blocking host-to-device copies,
launch-bound stretches, data-loading stalls and host syncs, and annotates
each with its measured cost and the PyTorch fix.")
set(CPACK_DEBIAN_GUI_PACKAGE_RECOMMENDS "stallscope-cli (= ${PROJECT_VERSION}-1)")
set(CPACK_DEBIAN_GUI_PACKAGE_SUGGESTS "stallscope-demo")

set(CPACK_DEBIAN_DEMO_PACKAGE_NAME stallscope-demo)
set(CPACK_COMPONENT_DEMO_DESCRIPTION "Stallscope's LibTorch demo workloads
Small LibTorch training loops that reproduce GPU stalls on purpose (data
loading, .item() logging, small batches, pageable copies, FP32 without
autocast), each with its fix, for stallscope-cli record --demo NAME and the
GUI's Record dialog.")
set(CPACK_DEBIAN_DEMO_PACKAGE_RECOMMENDS "stallscope-cli (= ${PROJECT_VERSION}-1)")

if(DEFINED STALLSCOPE_CLI_DEPENDS)
    set(CPACK_DEBIAN_CLI_PACKAGE_SHLIBDEPS OFF)
    set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "${STALLSCOPE_CLI_DEPENDS}, python3")
endif()
include(CPack)
