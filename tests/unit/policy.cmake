pisandbox_unit_test(unit_policy
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/policy_test.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/protected_scan_test.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/mount_plan_test.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/mount_plan_property_test.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/real_machine_policy_test.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/signing_test.cpp
  LIBS pisandbox_policy pisandbox_sandbox)
