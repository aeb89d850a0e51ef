# Makes the manual page PAGE of PROGRAM from its --help with help2man (HELP2MAN), named SUMMARY,
# of version VERSION. help2man knows no "Exit status:" heading and makes it a subsection of
# OPTIONS; it is made a section of its own, EXIT STATUS, as manual pages have it.
# Usage: cmake -DHELP2MAN=... -DPROGRAM=... -DPAGE=... -DSUMMARY=... -DVERSION=... -P man_page.cmake
execute_process(
  COMMAND ${HELP2MAN} --no-info --no-discard-stderr --version-string=${VERSION} "--name=${SUMMARY}"
          --output=${PAGE} ${PROGRAM}
  RESULT_VARIABLE failed)
if(failed)
  message(FATAL_ERROR "help2man could not make ${PAGE}")
endif()
file(READ ${PAGE} text)
string(REPLACE ".SS \"Exit status:\"" ".SH \"EXIT STATUS\"" text "${text}")
file(WRITE ${PAGE} "${text}")
