# The page of the demo's --trace=html, trace_page.html, as the C++ string
# trace_page_html, one raw string literal per line, as the Makefile's rule
# writes it.  Run at build time (see CMakeLists.txt):
#   cmake -DIN=trace_page.html -DOUT=trace_page_html.h -P embed-page.cmake
file(READ "${IN}" page)
string(REGEX REPLACE "\n$" "" page "${page}")
string(REPLACE "\n" "\n)trace_page\"\nR\"trace_page(" page "${page}")
file(WRITE "${OUT}" "/* Made from trace_page.html by the build: do not edit. */
static const char trace_page_html[] =
R\"trace_page(${page}
)trace_page\"
;
")
