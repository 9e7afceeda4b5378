# The Debian packages (scripts/package, `cpack -G DEB`); scripts/package makes the source
# tarball with git archive (the tracked files and a COMMIT file for cmake/commit.cmake).
#   pi-sandbox_<version>_<arch>.deb      component Runtime; Depends from dpkg-shlibdeps
#   pi-sandbox-dbg_<version>_<arch>.deb  component Debug: the binary's debug information
set(CPACK_PACKAGE_NAME pi-sandbox)
set(CPACK_PACKAGE_VENDOR "pi-sandbox")
# The project publishes no address or home page of its own: the maintainer's name without an
# e-mail and no Homepage field, rather than placeholders that look real (deb-control(5):
# Homepage is optional; dpkg-deb takes a Maintainer without an address).
set(CPACK_PACKAGE_CONTACT "pi-sandbox maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "run a coding agent's shell commands inside a Linux sandbox")
set(CPACK_PACKAGE_DESCRIPTION
    "pi-sandbox runs the shell commands of a coding agent inside a native Linux sandbox:\n"
    "namespaces, a read-only view of the host, a hidden home, Landlock, a seccomp filter, a\n"
    "per-command network proxy and an approval broker. It includes the Pi extension\n"
    "(/usr/share/pi-sandbox/pi), man pages and completions for bash, zsh and fish.")
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
# The sandbox runs commands with /bin/bash; the binary's libraries come from dpkg-shlibdeps,
# except OpenSSL's libcrypto, which it opens when it first hashes (src/approval/sha256.hpp):
# `libssl3` on Debian 12, `libssl3t64` on Ubuntu 24.04; and libidn2, which it opens when it
# first converts a non-ASCII domain name (src/proxy/protocol/destination.cpp): `libidn2-0`.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "bash, libssl3 | libssl3t64, libidn2-0")
# Where the kernel restricts user namespaces (Ubuntu 23.10 and later), postinst installs and
# loads the AppArmor profile that grants pi-sandbox `userns`; postrm removes it
# (packaging/debian, docs/containers.md).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/packaging/debian/postinst
                                               ${CMAKE_SOURCE_DIR}/packaging/debian/postrm)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
