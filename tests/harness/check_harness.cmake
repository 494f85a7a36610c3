# Harness self-check: runs the probe tests (tests/harness/probe.cpp) through ctest in their own
# directory and requires each to be reported as what it is: failures Failed (never Skipped), a filter
# that matches no test case Failed, the clean skip Skipped, the passing case Passed. -DCTEST=<ctest> -DDIR=<probe ctest dir>.
execute_process(COMMAND ${CTEST} --test-dir ${DIR} --timeout 60
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
set(expect
    "probe_four_failures=Failed" "probe_77_failures=Failed" "probe_fails_then_skips=Failed"
    "probe_throws=Failed" "probe_matches_nothing=Failed" "probe_skips=Skipped" "probe_passes=Passed")
set(bad "")
foreach(pair IN LISTS expect)
  string(REPLACE "=" ";" parts "${pair}")
  list(GET parts 0 name)
  list(GET parts 1 status)
  if(status STREQUAL "Passed")
    set(pattern "${name} [.]+ +Passed")
  else()
    set(pattern "${name} [.]+[*]+${status}")
  endif()
  if(NOT out MATCHES "${pattern}")
    string(APPEND bad " ${name} (expected ${status})")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "harness misreports:${bad}")
endif()
message("harness self-check: 4 failing probes and a filter matching nothing reported Failed, 1 skip Skipped, 1 pass Passed")
