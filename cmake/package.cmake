# The packages (scripts/package): a Debian package with CPack (`cpack -G DEB`) and a source
# tarball (`cpack --config CPackSourceConfig.cmake`).
#   pi-sandbox_<version>_<arch>.deb      component Runtime; Depends from dpkg-shlibdeps
#   pi-sandbox-dbg_<version>_<arch>.deb  component Debug: the binary's debug information
#   pi-sandbox-<version>.tar.gz          the source, with a COMMIT file (cmake/commit.cmake)
set(CPACK_PACKAGE_NAME pi-sandbox)
set(CPACK_PACKAGE_VENDOR "pi-sandbox")
set(CPACK_PACKAGE_CONTACT "pi-sandbox maintainers <pi-sandbox@example.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "run a coding agent's shell commands inside a Linux sandbox")
set(CPACK_PACKAGE_DESCRIPTION
    "pi-sandbox runs the shell commands of a coding agent inside a native Linux sandbox:\n"
    "namespaces, a read-only view of the host, a hidden home, Landlock, a seccomp filter, a\n"
    "per-command network proxy and an approval broker. It includes the Pi extension\n"
    "(/usr/share/pi-sandbox/pi), man pages and completions for bash, zsh and fish.")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://example.com/pi-sandbox")
set(CPACK_RESOURCE_FILE_README ${CMAKE_SOURCE_DIR}/README.md)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Install with DESTDIR and the prefix /usr, so that what cmake/install.cmake decides when
# installing (the zsh directory, the debug file's path) sees the package's prefix.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES OFF)  # stripped already, with the debug information kept apart

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL Runtime Debug)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME pi-sandbox)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_DEBUG_PACKAGE_NAME pi-sandbox-dbg)
set(CPACK_DEBIAN_DEBUG_PACKAGE_SECTION debug)
set(CPACK_DEBIAN_DEBUG_PACKAGE_DEPENDS "pi-sandbox (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_DEBUG_DESCRIPTION "debug information of pi-sandbox (for gdb)")
# The sandbox runs commands with /bin/bash; the binary's libraries come from dpkg-shlibdeps.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "bash")

set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_PACKAGE_FILE_NAME pi-sandbox-${PROJECT_VERSION})
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/\\\\.git$" "^${CMAKE_SOURCE_DIR}/build/"
                              "^${CMAKE_SOURCE_DIR}/dist/" "node_modules/"
                              "__pycache__/" "\\\\.profraw$" "/tests/fuzz/corpus-")
# The commit the tarball was made from, for `--version` of what is built from it.
execute_process(COMMAND git -C ${CMAKE_SOURCE_DIR} rev-parse --short=12 HEAD
                OUTPUT_VARIABLE source_commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
file(WRITE ${CMAKE_BINARY_DIR}/source-extra/COMMIT "${source_commit}\n")
set(CPACK_SOURCE_INSTALLED_DIRECTORIES "${CMAKE_SOURCE_DIR};/;${CMAKE_BINARY_DIR}/source-extra;/")
include(CPack)
