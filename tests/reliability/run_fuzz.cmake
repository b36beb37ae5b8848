# Runs the deque fuzzer for SECONDS on a scratch copy of the committed corpus (new inputs it finds
# stay in WORK; copy interesting ones into tests/reliability/fuzz_corpus by hand).
#   cmake -DFUZZER=<deque_fuzz> -DCORPUS=<dir> -DWORK=<dir> -DSECONDS=<n> -P run_fuzz.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(COPY ${CORPUS}/ DESTINATION ${WORK})
execute_process(COMMAND ${FUZZER} ${WORK} -max_total_time=${SECONDS} -print_final_stats=1 -max_len=4096
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "deque_fuzz failed (exit ${rc}); the crashing input is named above")
endif()
