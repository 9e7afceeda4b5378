# Unit tests of src/approval (the pure core of the approval broker).
pisandbox_unit_test(unit_approval
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/approval_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/approval_hard_deny_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/approval_reviewer_output_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/approval_broker_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/approval_remember_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/approval_override_test.cpp
  LIBS pisandbox_approval)
