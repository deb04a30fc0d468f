# README's "Use as a library" code blocks are the example files, verbatim:
# each file's text must appear in README.md.
# usage: cmake -DREADME=README.md -DEXAMPLES=docs/examples -P readme_examples.cmake
file(READ ${README} readme)
foreach(name knn_example.c knn_example.py CMakeLists.txt)
  file(READ ${EXAMPLES}/${name} text)
  string(FIND "${readme}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "README.md does not show docs/examples/${name} as it is")
  endif()
  message(STATUS "README.md shows docs/examples/${name}")
endforeach()
