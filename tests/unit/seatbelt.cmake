# Unit tests of src/sandbox/macos (docs/macos.md): the Seatbelt profile, read back as Seatbelt
# reads it (seatbelt_sbpl.hpp). PI_SANDBOX_UPDATE_GOLDEN=1 rewrites tests/unit/golden/seatbelt.
pisandbox_unit_test(unit_seatbelt
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/seatbelt_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/seatbelt_sbpl.cpp
  LIBS pisandbox_sandbox_macos)
