# Unit tests of src/session that need no sandbox: where a reviewer's files would be found.
pisandbox_unit_test(unit_session
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/reviewer_location_test.cpp
  LIBS pisandbox_session)
