# Unit tests of src/session that need no sandbox: where a reviewer's files would be found, and
# what the programs pi-sandbox starts on the host run (host_programs.hpp), and the stamp of a
# notice said once a day (once_a_day.hpp), and where an allowed host socket is connected
# (host_socket_setup.hpp).
pisandbox_unit_test(unit_session
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/reviewer_location_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/host_programs_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/once_a_day_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/host_sockets_test.cpp
  LIBS pisandbox_session)
