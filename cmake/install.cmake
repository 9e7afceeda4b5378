# `cmake --install` and the packages (scripts/package; README.md, "Install").
#
#   bin/pi-sandbox                          the binary without its debug information
#   lib/debug/<prefix>/bin/pi-sandbox.debug that information (component Debug), found by gdb
#                                           through the binary's .gnu_debuglink
#   share/man/man1/pi-sandbox.1, man5/pi-sandbox-config.5   (from docs/, with pandoc)
#   share/bash-completion/completions/pi-sandbox, share/fish/vendor_completions.d/,
#   share/zsh/vendor-completions/_pi-sandbox (prefix /usr) or share/zsh/site-functions
#   share/pi-sandbox/pi/                    the Pi extension (integrations/pi)
#   share/pi-sandbox/apparmor/pi-sandbox    the AppArmor profile granting `userns`
#   share/doc/pi-sandbox/                   README.md, CHANGELOG.md, docs/*.md
# Everything but the debug file is component Runtime.
include(GNUInstallDirs)
# `cmake --install` and cpack install what is built, without building every target (tests,
# benchmarks) first: scripts/package builds pi-sandbox-stripped and man.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME Runtime)

# --- The binary, stripped, and its debug information in a separate file.
set(stripped ${CMAKE_BINARY_DIR}/install/pi-sandbox)
set(debug_file ${CMAKE_BINARY_DIR}/install/pi-sandbox.debug)
add_custom_command(
  OUTPUT ${stripped} ${debug_file}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/install
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:pi-sandbox> ${debug_file}
  COMMAND ${CMAKE_OBJCOPY} --strip-all --add-gnu-debuglink=pi-sandbox.debug
          $<TARGET_FILE:pi-sandbox> ${stripped}
  WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/install
  DEPENDS pi-sandbox
  COMMENT "Stripping pi-sandbox (debug information to pi-sandbox.debug)"
  VERBATIM)
add_custom_target(pi-sandbox-stripped ALL DEPENDS ${stripped} ${debug_file})
install(PROGRAMS ${stripped} DESTINATION ${CMAKE_INSTALL_BINDIR})
# gdb looks for the debug file of /P/bin/pi-sandbox in /P/lib/debug/P/bin (its
# debug-file-directory is /usr/lib/debug); the prefix is known only when installing (CPack
# installs with /usr). file(INSTALL) adds DESTDIR itself.
install(CODE "set(PI_SANDBOX_DEBUG_FILE \"${debug_file}\")" COMPONENT Debug)
install(CODE [[
  file(INSTALL "${PI_SANDBOX_DEBUG_FILE}"
       DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/debug${CMAKE_INSTALL_PREFIX}/bin")
]] COMPONENT Debug)

# --- Man pages: Markdown in docs/ -> roff with pandoc. pi-sandbox(1) is
# docs/man/pi-sandbox.1.md; pi-sandbox-config(5) is docs/man/pi-sandbox-config.5.md followed
# by docs/configuration.md itself (docs/man/sections.lua).
find_program(PANDOC pandoc)
if(PANDOC)
  set(man_dir ${CMAKE_BINARY_DIR}/man)
  # Without smart quotes: the pages quote messages and commands as they are typed.
  set(man_args -s -f markdown-smart -t man -M "footer=pi-sandbox ${PROJECT_VERSION}")
  add_custom_command(
    OUTPUT ${man_dir}/pi-sandbox.1
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    COMMAND ${PANDOC} ${man_args} ${CMAKE_SOURCE_DIR}/docs/man/pi-sandbox.1.md
            -o ${man_dir}/pi-sandbox.1
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/pi-sandbox.1.md
    COMMENT "Man page pi-sandbox(1)"
    VERBATIM)
  add_custom_command(
    OUTPUT ${man_dir}/pi-sandbox-config.5
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    COMMAND ${PANDOC} ${man_args} --lua-filter ${CMAKE_SOURCE_DIR}/docs/man/sections.lua
            ${CMAKE_SOURCE_DIR}/docs/man/pi-sandbox-config.5.md
            ${CMAKE_SOURCE_DIR}/docs/configuration.md -o ${man_dir}/pi-sandbox-config.5
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/pi-sandbox-config.5.md
            ${CMAKE_SOURCE_DIR}/docs/configuration.md ${CMAKE_SOURCE_DIR}/docs/man/sections.lua
    COMMENT "Man page pi-sandbox-config(5)"
    VERBATIM)
  add_custom_target(man ALL DEPENDS ${man_dir}/pi-sandbox.1 ${man_dir}/pi-sandbox-config.5)
  install(FILES ${man_dir}/pi-sandbox.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${man_dir}/pi-sandbox-config.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
else()
  message(WARNING "pandoc not found: the man pages are not built or installed "
                  "(apt-get install pandoc; scripts/lib.sh installs it)")
endif()

# --- The AppArmor profile that grants `userns` (packaging/apparmor; the Debian package's
# postinst installs it into /etc/apparmor.d where the kernel restricts user namespaces).
install(FILES ${CMAKE_SOURCE_DIR}/packaging/apparmor/pi-sandbox
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pi-sandbox/apparmor)

# --- Shell completions.
install(FILES ${CMAKE_SOURCE_DIR}/completions/pi-sandbox.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME pi-sandbox)
install(FILES ${CMAKE_SOURCE_DIR}/completions/pi-sandbox.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
# zsh's fpath has share/zsh/vendor-completions for /usr (Debian's packages) and
# share/zsh/site-functions for /usr/local; the prefix is known only when installing (CPack
# installs with /usr).
install(CODE "set(PI_SANDBOX_SOURCE_DIR \"${CMAKE_SOURCE_DIR}\")" COMPONENT Runtime)
install(CODE [[
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(zsh_dir "${CMAKE_INSTALL_PREFIX}/share/zsh/vendor-completions")
  else()
    set(zsh_dir "${CMAKE_INSTALL_PREFIX}/share/zsh/site-functions")
  endif()
  file(INSTALL "${PI_SANDBOX_SOURCE_DIR}/completions/_pi-sandbox" DESTINATION "${zsh_dir}")
]] COMPONENT Runtime)

# --- The Pi extension and the documentation.
install(FILES ${CMAKE_SOURCE_DIR}/integrations/pi/package.json
              ${CMAKE_SOURCE_DIR}/integrations/pi/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pi-sandbox/pi)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/integrations/pi/src ${CMAKE_SOURCE_DIR}/integrations/pi/pi-sandbox
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pi-sandbox/pi)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/CHANGELOG.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pi-sandbox)
file(GLOB doc_pages ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${doc_pages} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/pi-sandbox/docs)
