# Unit tests of src/approval/audit_tail (`pi-sandbox approvals tail`, docs/approvals.md).
pisandbox_unit_test(unit_audit_tail
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/approval_audit_tail_test.cpp
  LIBS pisandbox_approval)
