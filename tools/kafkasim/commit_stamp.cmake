# Writes OUT, a header defining KAFKASIM_COMMIT: the checkout's commit
# (`git rev-parse --short=12 HEAD`), with "-dirty" when tracked files differ
# from it, or "unknown" outside a git checkout. Run at every build (the
# kafkasim_commit_stamp target), not once at configure time, so that a result
# never names a commit its binary was not built from: a new commit, a checkout
# or an edit changes the stamp. OUT is rewritten only when the stamp changes,
# so an unchanged checkout recompiles nothing.
#
#   cmake -DSOURCE_DIR=<checkout> -DOUT=<header> -P commit_stamp.cmake
if(NOT DEFINED SOURCE_DIR OR NOT DEFINED OUT)
  message(FATAL_ERROR "commit_stamp.cmake needs -DSOURCE_DIR=... and -DOUT=...")
endif()

set(_commit "unknown")
find_program(_git git)
if(_git)
  execute_process(
    COMMAND ${_git} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${SOURCE_DIR}
    OUTPUT_VARIABLE _head
    OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET
    RESULT_VARIABLE _head_result)
  if(_head_result EQUAL 0 AND _head MATCHES "^[0-9a-f]+$")
    set(_commit "${_head}")
    # --no-optional-locks: a build must not take the index lock from a git
    # command the user runs meanwhile. Untracked files (build trees, sweep
    # results) do not count.
    execute_process(
      COMMAND ${_git} --no-optional-locks status --porcelain --untracked-files=no
      WORKING_DIRECTORY ${SOURCE_DIR}
      OUTPUT_VARIABLE _status
      ERROR_QUIET
      RESULT_VARIABLE _status_result)
    if(NOT _status_result EQUAL 0 OR NOT _status STREQUAL "")
      string(APPEND _commit "-dirty")
    endif()
  endif()
endif()

set(_content "// Generated at build time by tools/kafkasim/commit_stamp.cmake.\n#define KAFKASIM_COMMIT \"${_commit}\"\n")
set(_old "")
if(EXISTS ${OUT})
  file(READ ${OUT} _old)
endif()
if(NOT _old STREQUAL _content)
  file(WRITE ${OUT} "${_content}")
endif()
