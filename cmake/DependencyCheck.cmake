# Declared dependencies are the real ones: for each stage library, a program
# that links every object of it (not only those a program happens to call)
# and nothing but what the library declares (its PUBLIC and PRIVATE links).
# A stage that calls into one it did not declare fails to link here, even
# when every real program links both. Not part of `all`: the test
# build.dependencies builds it (tests/CMakeLists.txt).
set(DENPEX_STAGES util source catalog matcher context correlate findings scan report core selftest)
add_custom_target(denpex_depcheck)
foreach(stage IN LISTS DENPEX_STAGES)
  add_executable(denpex_depcheck_${stage} EXCLUDE_FROM_ALL "${PROJECT_SOURCE_DIR}/tests/deps/main.cpp")
  target_link_libraries(denpex_depcheck_${stage} PRIVATE denpex_options "$<LINK_LIBRARY:WHOLE_ARCHIVE,denpex_${stage}>")
  add_dependencies(denpex_depcheck denpex_depcheck_${stage})
endforeach()
